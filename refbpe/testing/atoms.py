"""Text atoms that exercise a split pattern's and a trainer's corners: plain data, no Hypothesis.

The fuzzer's strategies (``testing.strategies``), the conformance pack
(``fuzz.pack``) and the test suite build their texts from these lists: words
of many scripts, contractions in every case, digits of many scripts, emoji
sequences, combining marks, whitespace (every character the pinned table calls
space: ``\\x85``, U+3000, ...), characters assigned in recent Unicode versions
(which older tables call unassigned), and special tokens that are adjacent,
repeated or prefixes of one another.  Cost: building the lists, O(1) but for
``WHITESPACE`` (one scan of the class table at import).
"""

from ..pretokenize.gpt2 import CLASS_OF, SPACE

__all__ = [
    "COMBINING",
    "CONTRACTIONS",
    "CONTRACTIONS_ANY_CASE",
    "DIGITS",
    "EMOJI",
    "MARKS",
    "NEWLINE_RUNS",
    "NOT_WHITESPACE_BUT_ISSPACE",
    "NUMBERS",
    "PREFIXES",
    "PUNCT",
    "PUNCT_NEWLINE",
    "RECENT",
    "SOUP",
    "SPECIAL_TOKENS",
    "WHITESPACE",
    "WORDS",
    "WORDS_ANY_CASE",
]

CONTRACTIONS = [
    "'s",
    "'S",
    "'ll",
    "'l",
    "'ve",
    "'v",
    "'re",
    "'r",
    "'d",
    "'m",
    "'t",
    "'T",
    "'LL",
    "''s",
    " 's",
    "'",
    "''",
]

DIGITS = (
    "0123456789"
    "\u0660\u0661\u0669"  # Arabic-Indic
    "\u06f0\u06f5"  # Extended Arabic-Indic
    "\u0966\u0967\u096f"  # Devanagari
    "\uff10\uff11\uff19"  # fullwidth
    "\u00b2\u00b3\u00b9\u2070\u2074\u2089"  # superscripts / subscripts
    "\u2160\u216b\u217b\u2169"  # Roman numerals (Nl) incl. XII / xii
    "\u00bd\u2155\u2460\u0e51\u0f20\U0001d7ce\U0001d7ff\U00010107"  # fractions, circled, Thai, Tibetan, math
)

EMOJI = [
    "\U0001f643",  # upside-down face
    "\U0001f600",
    "\U0001f44d\U0001f3fd",  # thumbs up + skin tone
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",  # ZWJ family
    "\U0001f3f3\ufe0f\u200d\U0001f308",  # rainbow flag
    "\U0001f1fa\U0001f1f8",  # flag US
    "\U0001f1ef\U0001f1f5",  # flag JP
    "\u2764\ufe0f",  # heart + VS16
    "\u263a\ufe0e",  # VS15
    "1\ufe0f\u20e3",  # keycap
    "\U0001f9d1\U0001f3ff\u200d\U0001f4bb",
    "\U0001faf6",  # heart hands (Unicode 14)
]

COMBINING = [
    "\u0301",
    "\u0308",
    "\u0327",
    "\u20dd",
    "\u094d",
    "\u0e31",
    "\u05b7",
    "\u3099",
    "e\u0301",
    "n\u0303",
    "\u0928\u092e\u0938\u094d\u0924\u0947",
]

WORDS = [
    "Hello",
    "hello",
    "the",
    "The",
    "a",
    "I",
    "world",
    "don",
    "we",
    "x",
    "\u041f\u0440\u0438\u0432\u0435\u0442",  # Russian
    "\u3053\u3093\u306b\u3061\u306f",  # Japanese
    "\u4e2d\u6587\u5b57",  # Chinese
    "\ud55c\uad6d\uc5b4",  # Korean
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629",  # Arabic
    "\u05e2\u05d1\u05e8\u05d9\u05ea",  # Hebrew
    "\u03b5\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac",  # Greek
    "\u0e44\u0e17\u0e22",  # Thai
    "Stra\u00dfe",
    "caf\u00e9",
    "\u00c5ngstr\u00f6m",
    "\U0001d518\U0001d52b\U0001d526",  # math fraktur (astral letters)
    "\U00020b9f\U00020b9e",  # CJK Ext B
    "\u01c5\u02b0\u3005",  # titlecase, modifier letters
]

PUNCT = list("!?.,;:-_()[]{}<>|/\\@#$%^&*+=~`\"'") + [
    "...",
    "--",
    "\u2014",
    "\u00bf",
    "\u3002",
    "\uff01",
    "\u00a7",
    "\u20ac",
]


def _unicode_whitespace():
    ws, i = [], CLASS_OF.find(SPACE)
    while i >= 0:
        ws.append(chr(i))
        i = CLASS_OF.find(SPACE, i + 1)
    return ws


WHITESPACE = _unicode_whitespace()  # \t \n \v \f \r, space, U+0085, U+00A0, U+1680, U+2000.., U+3000 ...
NOT_WHITESPACE_BUT_ISSPACE = ["\x1c", "\x1d", "\x1e", "\x1f"]  # str.isspace() is True, regex \s is not


# -- text for the GPT-4-family patterns: every alternative's edges (tests/test_patterns.py) --

_CONTRACTION_LETTERS = ["s", "S", "\u017f", "t", "T", "d", "D", "m", "M"]
_CONTRACTION_PAIRS = [a + b for a in "lL" for b in "lL"] + [a + b for a in "vVrR" for b in "eE"]
CONTRACTIONS_ANY_CASE = (
    ["'" + x for x in _CONTRACTION_LETTERS + _CONTRACTION_PAIRS]
    + ["'l", "'v", "'r", "'e", "'", "''", "'x", "' s", "'\u017f\u017f"]
    + ["\u2019s", "\u02bcs"]  # not an apostrophe for either pattern
)
WORDS_ANY_CASE = [
    "hello",
    "Hello",
    "HELLO",
    "hELLO",
    "HeLLo",
    "I",
    "a",
    "DON",
    "we",
    "Stra\u00dfe",
    "\u00c9T\u00c9",  # ÉTÉ
    "\u01c5ungla",  # Lt first
    "\u1f88\u1f80",  # Lt, Ll
    "\u02b0ello",  # Lm first
    "A\u02b0B",
    "\u3005\u4e2d",  # Lm, Lo
    "\u4e2d\u6587",  # Lo
    "\u0e01\u0e32",  # Thai
    "\u041f\u0420\u0418\u0432\u0435\u0442",  # Cyrillic, case mix
    "\uff21\uff42",  # fullwidth Lu, Ll
    "\u0130\u0131",  # I with dot, dotless i
    "\u2c65\u1d2c",  # Ll, Lm
    "\U0001d518\U0001d52b",  # astral letters
]
MARKS = [
    "\u0301",  # Mn
    "\u0308\u0301",
    "\u0903",  # Mc
    "\u20dd",  # Me
    "\u0345",  # Mn, case-ish (iota subscript)
    "e\u0301",
    "E\u0301",
    "A\u0301B",
    "\u0301A",
    "\u0301a",
    "\u0928\u092e\u0938\u094d\u0924\u0947",  # Devanagari with virama
    "\u05d0\u05b7",  # Hebrew with point
    "\u3099\u304b",
]
NUMBERS = [c for c in DIGITS] + ["\u16ee", "\u00b2", "\u2460"]
PREFIXES = [
    "\t",
    "\x0b",
    "\x0c",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\x1c",
    "'",
    '"',
    "(",
    "$",
    "_",
    "-",
    "\u00bf",
]
PUNCT_NEWLINE = [
    "!\n",
    ".\r\n",
    "?\n\n",
    "/",
    "//",
    "/\n/",
    "!/",
    "!/\n",
    " /",
    " !\r\n/",
    "...",
    "\u2014",
    "\u3002",
    "\U0001f600\n",
]
NEWLINE_RUNS = [
    "\n",
    "\r\n",
    "\r\n\r\n",
    "\r",
    " \n",
    "\n ",
    "  \n  ",
    "\t\n",
    "\n\n\n",
    " \r\n ",
    "\u00a0\n",
    "\n\u3000",
]
# A small alphabet in which every class meets every other one often.
SOUP = list("aA'sStTlLvVeErRdDmM1 \t\n\r!/.") + [
    "\u017f",
    "\u01c5",
    "\u02b0",
    "\u4e2d",
    "\u0301",
    "\u0903",
    "\u0661",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\x1c",
    "\U0001f600",
]

# Characters assigned in Unicode 15.0-16.0, classified by the pinned table (letters,
# digits, symbols); interpreters with older tables call them unassigned ("other").
RECENT = [
    "\U0001fae8",  # shaking face (15.0, So)
    "\U00031350",  # CJK Extension H (15.0, Lo)
    "\U0002ebf0",  # CJK Extension I (15.1, Lo)
    "\U0001cc00",  # legacy computing supplement (16.0, So)
    "\U00010d50",  # Garay letter (16.0)
    "\U00010d40",  # Garay digit zero (16.0, Nd)
    "\U00016d43",  # Kirat Rai letter (16.0)
    "\U00016d70",  # Kirat Rai digit zero (16.0, Nd)
    "\U0001e5d0",  # Ol Onal letter (16.0)
    "\U00011bf0",  # Sunuwar digit zero (16.0, Nd)
]

# Special tokens: one a prefix of another, one the other's suffix, one overlapping itself.
SPECIAL_TOKENS = ["<|endoftext|>", "<|end|>", "<|endoftext|>x", "<|pad|>", "<<|>>", "aa"]
