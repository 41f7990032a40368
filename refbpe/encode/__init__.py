"""Encoding: text to token ids with a trained model, and back.

    ``tokenizer``   ``Tokenizer``: encode, decode, streaming, offsets
    ``piece_cuts``  where a pre-token may be cut without changing its ids
    ``batch``       a function over a list of texts in forked worker processes

The package imports nothing up front; import the module you need.
"""
