"""HF tokenizers BpeTrainer, trained on the file (its own reader), parallelism on.

usage: train_hf.py CORPUS VOCAB_SIZE OUT_DIR
Settings matched to refbpe: byte-level (ByteLevel pre-tokenizer = GPT-2 regex,
no prefix space), the 256 bytes as initial alphabet, ``<|endoftext|>`` removed
from the text before pre-tokenization and added as a special token; VOCAB_SIZE
counts bytes + merges + the special token, as in refbpe.
"""

import os
import sys

os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")

from _common import SPECIAL, emit, now  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers, trainers  # noqa: E402


def main(argv):
    corpus, vocab_size, out = argv[0], int(argv[1]), argv[2]
    t0 = now()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(SPECIAL, behavior="removed"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=0,
        special_tokens=[SPECIAL],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train([corpus], trainer)
    t1 = now()
    os.makedirs(out, exist_ok=True)
    tok.model.save(out)
    emit(train_seconds=round(t1 - t0, 3), vocab_size=tok.get_vocab_size())


if __name__ == "__main__":
    main(sys.argv[1:])
