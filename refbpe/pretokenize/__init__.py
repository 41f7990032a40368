"""Pre-tokenization: split text into the pieces that BPE merges inside.

Each split pattern is a hand-written scanner over UTF-8 bytes that classifies
code points with a pinned Unicode table, so the pieces are the same on every
interpreter:

    ``patterns``       the registry: ``Pattern`` objects by name (``get_pattern``), ``from_regex``
    ``cuts``           where each pattern's texts may be cut
    ``regex_syntax``   a split regex parsed (the supported subset of ``regex``'s syntax)
    ``regex_compile``  ... compiled for ``re`` over UTF-8 bytes
    ``regex_engine``   ... or written as Python code (PyPy; any pattern ``re`` may backtrack on exponentially)
    ``regex_loops``    ... its repeats of groups: loops remembered per position, linear in the text
    ``regex_risk``     which patterns ``re`` may backtrack on exponentially
    ``regex_cuts``     ... and where its texts may be cut
    ``unicode_classes``, ``utf8_ranges``   its classes' code point sets, and their UTF-8 spelling
    ``gpt2``           GPT-2's pattern, the CS336 default (also the shared helpers)
    ``cl100k``         GPT-4's pattern and Llama 3's form of it
    ``o200k``          GPT-4o's pattern (case classes)
    ``contractions``   the case-insensitive contractions of cl100k, Llama 3 and o200k
    ``superbpe``       SuperBPE's stage-1 and stage-2 pre-tokenizations
    ``alternatives``   which alternative of a pattern produced a piece
    ``unicode_tables``   the class tables by Unicode version (``unicode=``)
    ``_unicode_table``, ``_unicode_categories``   the generated tables of the latest version
    ``_unicode_versions``                         older versions, as differences from it
    ``_unicode_properties``                       general categories, ``\\w`` and case partners (regexes)
    ``_gen_unicode_table``, ``_gen_unicode_properties``   their generators (``regex``, ``unicodedata2``)
    ``table_text``     how the generated tables write their tuples, and read them back
"""

from .patterns import Pattern, get_pattern, pattern_names

__all__ = ["Pattern", "get_pattern", "pattern_names"]
