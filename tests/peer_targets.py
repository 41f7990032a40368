"""Implementations that must give no finding, as ``refbpe fuzz`` and ``conformance check`` call them.

Python functions (``--train-py peer_targets:refbpe_train`` ...) and, through
``main``, commands (``python peer_targets.py train NAME INPUT VOCAB_SIZE OUT [SPECIAL...]``):

- ``refbpe_train``: refbpe itself (a word-count file is trained with ``train_from_count_files``);
- ``rustbpe_train``: rustbpe on the documents between special tokens, ranks written as tiktoken;
- ``hf_train``: HF tokenizers' BpeTrainer on the documents, ``tokenizer.json`` written;
- ``tiktoken_encode``: tiktoken's encoding named by the ranks file it is given;
- ``refbpe_split``: refbpe's GPT-2 scanner.
"""

import base64
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from refbpe import train_bpe, train_from_count_files  # noqa: E402
from refbpe.corpus.countfile import is_counts_path  # noqa: E402
from refbpe.formats import write_model  # noqa: E402
from refbpe.pretokenize.patterns import get_pattern  # noqa: E402

PROFILE = os.environ.get("PEER_PROFILE") or None


def refbpe_train(input_path, vocab_size, special_tokens):
    if is_counts_path(input_path):
        return train_from_count_files([input_path], vocab_size, special_tokens, profile=PROFILE)
    return train_bpe(input_path, vocab_size, special_tokens, profile=PROFILE, workers=1)


def _documents(input_path, special_tokens):
    with open(input_path, encoding="utf-8", newline="") as f:
        text = f.read()
    if not special_tokens:
        return [text]
    pattern = "|".join(re.escape(t) for t in sorted(special_tokens, key=len, reverse=True))
    return re.split(pattern, text)


def rustbpe_ranks(input_path, vocab_size, special_tokens):
    import rustbpe

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(_documents(input_path, special_tokens), vocab_size - len(special_tokens))
    return [(bytes(b), r) for b, r in tok.get_mergeable_ranks()]


def hf_tokenizer(input_path, vocab_size, special_tokens):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, show_progress=False, special_tokens=list(special_tokens)
    )
    tok.train_from_iterator(_documents(input_path, special_tokens), trainer)
    return tok


def tiktoken_encode(model_path, text):
    import tiktoken

    name = os.path.basename(model_path).split(".")[0]
    return tiktoken.get_encoding(name).encode(text, allowed_special="all")


def refbpe_split(text):
    return get_pattern("gpt2").pretokenize_str(text)


def main(argv):
    what, name, input_path, vocab_size, out = argv[:5]
    specials = argv[5:]
    if name == "rustbpe":
        ranks = rustbpe_ranks(input_path, int(vocab_size), specials)
        with open(out, "w", encoding="ascii") as f:
            f.writelines("%s %d\n" % (base64.b64encode(b).decode("ascii"), r) for b, r in ranks)
    elif name == "hf":
        hf_tokenizer(input_path, int(vocab_size), specials).save(out)
    else:
        vocab, merges = refbpe_train(input_path, int(vocab_size), specials)
        write_model(out, "json", vocab, merges, specials)
    assert what == "train", json.dumps(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def refbpe_encode(model_path, text):
    from refbpe import Tokenizer, read_model

    model = read_model(model_path)
    return Tokenizer(model.vocab, model.merges, model.special_tokens).encode(text)
