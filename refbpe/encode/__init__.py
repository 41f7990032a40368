"""Encoding: text to token ids with a trained model, and back.

    ``tokenizer``   ``Tokenizer``: encode, decode, offsets, its constructors (``load``)
    ``ranks``       the pair tables: which adjacent pair merges, and when
    ``piece_ids``   the piece encoders (the hot loops) and their caches
    ``backtrack``   the backtracking piece encoder (long pieces)
    ``streaming``   ``encode_iterable``: a text in chunks, in bounded memory
    ``piece_cuts``  where a pre-token may be cut without changing its ids
    ``batch``       a function over a list of texts in forked worker processes

The package imports nothing up front; import the module you need.
"""
