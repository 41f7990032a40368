"""Which encoding an OpenAI model uses: tiktoken's ``encoding_for_model`` and its tables.

An exact model name is looked up first, then the prefixes in their order (a
fine-tuned or dated name such as ``gpt-4o-2024-05-13``); an unknown name
raises KeyError.  The tables are tiktoken 0.14's (``tiktoken/model.py``).
Cost: one dict lookup, then one ``startswith`` per prefix.
"""

from __future__ import annotations

from .api import Encoding, get_encoding

__all__ = ["encoding_name_for_model", "encoding_for_model"]

MODEL_PREFIX_TO_ENCODING = {
    "o1-": "o200k_base",
    "o3-": "o200k_base",
    "o4-mini-": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base",
    "gpt-4.1-": "o200k_base",
    "chatgpt-4o-": "o200k_base",
    "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base",
    "gpt-3.5-turbo-": "cl100k_base",
    "gpt-35-turbo-": "cl100k_base",
    "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": "o200k_base",
    "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base",
    "ft:babbage-002": "cl100k_base",
}

_R50K_MODELS = [
    "text-davinci-001",
    "text-curie-001",
    "text-babbage-001",
    "text-ada-001",
    "davinci",
    "curie",
    "babbage",
    "ada",
    "text-similarity-davinci-001",
    "text-similarity-curie-001",
    "text-similarity-babbage-001",
    "text-similarity-ada-001",
    "text-search-davinci-doc-001",
    "text-search-curie-doc-001",
    "text-search-babbage-doc-001",
    "text-search-ada-doc-001",
    "code-search-babbage-code-001",
    "code-search-ada-code-001",
]
_P50K_MODELS = [
    "text-davinci-003",
    "text-davinci-002",
    "code-davinci-002",
    "code-davinci-001",
    "code-cushman-002",
    "code-cushman-001",
    "davinci-codex",
    "cushman-codex",
]

MODEL_TO_ENCODING = dict(
    [(m, "o200k_base") for m in ("o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o")]
    + [(m, "cl100k_base") for m in ("gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo")]
    + [(m, "cl100k_base") for m in ("davinci-002", "babbage-002")]
    + [
        (m, "cl100k_base")
        for m in ("text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large")
    ]
    + [(m, "p50k_base") for m in _P50K_MODELS]
    + [(m, "r50k_base") for m in _R50K_MODELS]
    + [("text-davinci-edit-001", "p50k_edit"), ("code-davinci-edit-001", "p50k_edit")]
    + [("gpt2", "gpt2"), ("gpt-2", "gpt2")]
)


def encoding_name_for_model(model_name: str) -> str:
    """The name of the encoding ``model_name`` uses; KeyError if the name is not recognised.
    O(number of prefixes).

    >>> encoding_name_for_model("gpt-4"), encoding_name_for_model("gpt-4o-2024-05-13")
    ('cl100k_base', 'o200k_base')
    """
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, encoding_name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return encoding_name
    raise KeyError(
        "Could not automatically map %s to a tokeniser. "
        "Please use `refbpe.get_encoding` to explicitly get the tokeniser you expect." % model_name
    )


def encoding_for_model(model_name: str) -> Encoding:
    """The ``Encoding`` ``model_name`` uses; KeyError if the name is not recognised.
    O(number of prefixes), then ``get_encoding``'s cost.

    >>> encoding_for_model("davinci-3")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    KeyError: 'Could not automatically map davinci-3 to a tokeniser...'
    """
    return get_encoding(encoding_name_for_model(model_name))
