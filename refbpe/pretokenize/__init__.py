"""Pre-tokenization: split text into the pieces that BPE merges inside.

Each split pattern is a hand-written scanner over UTF-8 bytes that classifies
code points with a pinned Unicode table, so the pieces are the same on every
interpreter:

    ``patterns``       the registry: ``Pattern`` objects by name (``get_pattern``)
    ``gpt2``           GPT-2's pattern, the CS336 default (also the shared helpers)
    ``cl100k``         GPT-4's pattern and Llama 3's form of it
    ``o200k``          GPT-4o's pattern (case classes)
    ``superbpe``       SuperBPE's stage-1 and stage-2 pre-tokenizations
    ``alternatives``   which alternative of a pattern produced a piece
    ``unicode_tables``   the class tables by Unicode version (``unicode=``)
    ``_unicode_table``, ``_unicode_categories``   the generated tables of the latest version
    ``_unicode_versions``                         older versions, as differences from it
    ``_gen_unicode_table``                        their generator (``regex``, ``unicodedata2``)
"""

from .patterns import Pattern, get_pattern, pattern_names

__all__ = ["Pattern", "get_pattern", "pattern_names"]
