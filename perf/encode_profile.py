"""Where encoding time goes, per encoding and language, under PyPy (CPU seconds).

    .venv/bin/python perf/encode_profile.py [--encodings cl100k_base,o200k_base]
        [--texts english_medium,chinese] [--mb 2] [--cache-limit 131072]

Each (encoding, text) runs as its own PyPy process:

- load: ``import refbpe`` and ``Tokenizer.from_tiktoken(NAME)``, and apart the
  parts of the latter: reading the ranks file (``formats.tiktoken.read_ranks``),
  rebuilding the merge list from it (``merges_from_ranks``, which
  ``from_tiktoken`` leaves until ``Tokenizer.merges`` is asked for: not part of
  the load column) and building the engine (``Tokenizer.from_ranks``);
- first / warm: ``encode_utf8_ordinary`` of the first ``--mb`` MB of the text
  (empty caches, JIT warm-up), then of the next ``--mb`` MB;
- of the warm call: the scan alone (``_piece_ends``), the pieces, the piece-cache
  misses (pieces encoded by BPE: their count, bytes, and the CPU seconds of
  encoding them all again, which is the BPE share of the call), the hit rate;
- cuts (a second table): the warm text's pieces and distinct pieces, their parts
  between the places no token spans (``piece_cuts``, every piece cut) and the distinct
  parts, the cut table's character pairs and its build time;
- the misses' BPE taken apart (a third table): the missed pieces that ``_encode_one`` cuts,
  cut again with every part already known (the cut loop and the parts' look-ups alone), the
  BPE of their distinct parts, and the BPE of the missed pieces it does not cut.

What is left of the warm call after scan and BPE is the cache look-ups and the
list of ids.  ``--cache-limit`` sets the entries of a first piece-cache generation
(``piece_ids._CACHE_LIMIT``) in the children.  Against tiktoken:
``perf/encode_patterns.py`` (wall clock, both systems in the same run).
"""

import argparse
import json
import sys

from harness import INTERPRETERS, corpus, run_result, stopwatch, tree_env

PYPY = INTERPRETERS["pypy"]
ENCODINGS = ["cl100k_base", "o200k_base"]
TEXTS = ["english_medium", "python_code", "russian", "chinese", "mixed_multilingual"]


def _utf8_part(path, start, size):
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(size).decode("utf-8", "ignore").encode("utf-8")


def _split_misses(tok, missed, clock):
    """The BPE of the misses taken apart: the missed pieces ``_encode_one`` cuts
    (``_encode_in_parts``), cut again with every part already known (the cutting and the parts'
    look-ups alone), the BPE of their distinct parts, and the BPE of the pieces it does not cut."""
    from refbpe.encode.piece_cuts import PieceCuts
    from refbpe.encode.piece_ids import _CUT_FROM

    cut, whole = [], []
    for piece in missed:
        if tok._rank_of.get(piece) is None:
            (cut if len(piece) >= _CUT_FROM and piece[-3] >= 0xE0 else whole).append(piece)
    cutter, known = PieceCuts(tok._rank_of), {}
    for piece in cut:
        cutter.encode_in_parts(piece, known, tok._encode_piece)
    clock.restart()
    for piece in cut:
        cutter.encode_in_parts(piece, known, tok._encode_piece)
    cutting = clock.cpu_elapsed()
    clock.restart()
    for part in known:
        tok._encode_piece(part)
    parts_bpe = clock.cpu_elapsed()
    clock.restart()
    for piece in whole:
        tok._encode_piece(piece)
    whole_bpe = clock.cpu_elapsed()
    return {
        "cut_pieces": len(cut),
        "cutting": cutting,
        "known_parts": len(known),
        "parts_bpe": parts_bpe,
        "whole_pieces": len(whole),
        "whole_bpe": whole_bpe,
    }


def child(name, path, size, cache_limit):
    clock = stopwatch()
    from refbpe import Tokenizer
    from refbpe.encode import piece_ids as tokenizer
    from refbpe.encode.piece_cuts import PieceCuts
    from refbpe.encodings.registry import encoding_files
    from refbpe.formats.tiktoken import merges_from_ranks, read_ranks

    imported = clock.cpu_elapsed()
    if cache_limit:
        tokenizer._CACHE_LIMIT = cache_limit
    clock.restart()
    tok = Tokenizer.from_tiktoken(name)
    load = clock.cpu_elapsed()
    clock.restart()
    ranks = read_ranks(encoding_files(name)["ranks"])
    read = clock.cpu_elapsed()
    clock.restart()
    merges_from_ranks(ranks)
    merges = clock.cpu_elapsed()
    clock.restart()
    Tokenizer.from_ranks(ranks, pattern=tok.pattern)
    engine = clock.cpu_elapsed()
    first_text, warm_text = _utf8_part(path, 0, size), _utf8_part(path, size, size)
    clock.restart()
    tok.encode_utf8_ordinary(first_text)
    first = clock.cpu_elapsed()
    missed = []
    encode_one = tok._encode_one

    def recording(piece):
        missed.append(piece)
        return encode_one(piece)

    tok._encode_one = recording
    clock.restart()
    tok.encode_utf8_ordinary(warm_text)
    warm = clock.cpu_elapsed()
    del tok._encode_one
    clock.restart()
    ends = tok._piece_ends(warm_text)
    scan = clock.cpu_elapsed()
    clock.restart()
    for piece in missed:
        tok._encode_one(piece)
    bpe = clock.cpu_elapsed()
    split = _split_misses(tok, missed, clock)
    clock.restart()
    cutter = PieceCuts(tok._rank_of)
    cut_table = clock.cpu_elapsed()
    pieces = [warm_text[a:b] for a, b in zip([0] + ends, ends)]
    parts = []
    for piece in pieces:
        parts.extend(cutter.encode_in_parts(piece, {}, lambda part: [part]))
    fields = {
        "import": imported,
        "load": load,
        "read": read,
        "merges": merges,
        "engine": engine,
        "first": first,
        "warm": warm,
        "scan": scan,
        "bpe": bpe,
        "pieces": len(ends),
        "misses": len(missed),
        "miss_bytes": sum(map(len, missed)),
        "bytes": len(warm_text),
        "distinct_pieces": len(set(pieces)),
        "parts": len(parts),
        "distinct_parts": len(set(parts)),
        "cut_pairs": len(cutter._joined),
        "cut_table": cut_table,
    }
    fields.update(split)
    print("RESULT " + json.dumps(fields))
    sys.stdout.flush()


def main(argv):
    if argv[:1] == ["--child"]:
        return child(argv[1], argv[2], int(argv[3]), int(argv[4]))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--encodings", default=",".join(ENCODINGS))
    p.add_argument("--texts", default=",".join(TEXTS))
    p.add_argument("--mb", type=float, default=2)
    p.add_argument("--cache-limit", type=int, default=0, help="entries of a first cache generation")
    args = p.parse_args(argv)
    size = int(args.mb * 1e6)
    print(
        "| encoding | text | import s | load s (read / merges / engine) | first s | warm s | warm MB/s "
        "| scan s | BPE s | pieces | misses | hit rate | missed bytes/piece | rest s |"
    )
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    cuts = []
    for name in args.encodings.split(","):
        for text in args.texts.split(","):
            cmd = [PYPY, __file__, "--child", name, corpus(text), str(size), str(args.cache_limit)]
            r = run_result(cmd, tree_env())["result"]
            cuts.append((name, text, r))
            print(
                "| %s | %s | %.2f | %.2f (%.2f / %.2f / %.2f) | %.2f | %.2f | %.1f | %.2f | %.2f | %d | %d "
                "| %.1f%% | %.1f | %.2f |"
                % (
                    name,
                    text,
                    r["import"],
                    r["load"],
                    r["read"],
                    r["merges"],
                    r["engine"],
                    r["first"],
                    r["warm"],
                    r["bytes"] / r["warm"] / 1e6,
                    r["scan"],
                    r["bpe"],
                    r["pieces"],
                    r["misses"],
                    100.0 * (1 - r["misses"] / max(r["pieces"], 1)),
                    r["miss_bytes"] / max(r["misses"], 1),
                    r["warm"] - r["scan"] - r["bpe"],
                )
            )
            sys.stdout.flush()
    print(
        "\n| encoding | text | pieces | distinct | parts | distinct parts | cut table pairs | its build s |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, text, r in cuts:
        print(
            "| %s | %s | %d | %d | %d | %d | %d | %.2f |"
            % (
                name,
                text,
                r["pieces"],
                r["distinct_pieces"],
                r["parts"],
                r["distinct_parts"],
                r["cut_pairs"],
                r["cut_table"],
            )
        )

    print(
        "\n| encoding | text | misses cut | their cutting s (parts known) | distinct parts | their BPE s "
        "| misses not cut | their BPE s |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, text, r in cuts:
        print(
            "| %s | %s | %d | %.2f | %d | %.2f | %d | %.2f |"
            % (
                name,
                text,
                r["cut_pieces"],
                r["cutting"],
                r["known_parts"],
                r["parts_bpe"],
                r["whole_pieces"],
                r["whole_bpe"],
            )
        )


if __name__ == "__main__":
    main(sys.argv[1:])
