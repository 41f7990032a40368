"""Looking at a trained tokenizer: ``stats`` (compression figures on a corpus) and
``show`` (token boundaries drawn in a text)."""
