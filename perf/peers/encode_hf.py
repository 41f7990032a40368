"""HF tokenizers with the GPT-2 vocab/merges: ByteLevel BPE, one thread.

usage: encode_hf.py TEXT GPT2_VOCAB GPT2_MERGES [--max-bytes N]
One ``encode`` call on the whole text (RAYON_NUM_THREADS=1,
TOKENIZERS_PARALLELISM=false); ``<|endoftext|>`` is a special token.
"""

import os
import sys

os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ["RAYON_NUM_THREADS"] = "1"

from _common import SPECIAL, arg, emit, encode_twice, now  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers  # noqa: E402


def main(argv):
    t0 = now()
    tok = Tokenizer(models.BPE.from_file(argv[1], argv[2]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([SPECIAL])
    load = round(now() - t0, 3)
    emit(
        load_seconds=load,
        **encode_twice(
            argv[0], int(arg(argv, "--max-bytes", 0)), lambda t: tok.encode(t, add_special_tokens=False).ids
        ),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
