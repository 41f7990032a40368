"""Verification: compare another implementation's output with the reference,
and name the true cause of a difference, or say it cannot.

Merges (``refbpe verify CORPUS... --vocab-size N --against PATH``)
    ``merges.verify_merges`` trains the reference, compares the merge lists
    in order and the vocab as a set (ids only under ``exact_ids``), and at a
    divergence replays their merges under the reference counts and every
    known variant at once (``explain``): a tie rule (``ties``) or a counting
    or merging variant (``overlays``) is named only if it reproduces all of
    their merges; otherwise the report gives the first step the reference
    counts cannot explain, with the counts involved.  Setup mismatches
    (``setup_checks``) come first.  One report (the JSON contract in
    docs/verify.md) and its text rendering (``render``).

Word-count files (``*.counts.tsv[.gz]``, or ``--counts``)
    The format of ``refbpe.countfile``; they let another implementation's
    merge phase be verified alone.  Several files are added up.

Encodings (``refbpe verify --encode TEXT --ids IDS --against MODEL``)
    Their ids for TEXT against refbpe's encoding of TEXT with the model at
    MODEL (``encoding``), reporting the first differing position.

Modules: ``merges`` (the comparison and the verdict), ``explain`` (the
replay of hypotheses), ``replay`` (merges replayed over word counts),
``ties`` (tie rules), ``overlays`` (the counting, reading and merging variants,
replayed as differences), ``readings`` (how a reading variant changes the word counts),
``cutter`` (safe places to cut text), ``setup_checks``, ``render`` (the text),
``encoding`` (the id comparison), ``display`` (bytes shown readably),
``profile_rules`` (``--profile``, and which trainer profile reproduces their model),
``setting_search`` (the settings held to: given, named by their files, likely; the one
changed option that reproduces them),
``conventions`` (a minimum count, text-mode newlines, an id layout: named with their setting).
Certificates and traces: ``certify`` checks their merge list step by step
against the word counts without training (``refbpe certify``); ``traces``
compares their training trace with the reference's (``verify --trace``);
``pieces`` compares their pre-tokenizer's pieces with the pattern's (``verify --split``).
``judge`` gives one verdict per small input for the fuzzer and the conformance pack.
The command line is ``refbpe.cli.verify``.
"""

from .encoding import verify_encoding
from .merges import CAUSES, verify_merges
from .readings import count_variant
from .replay import PairReplay

__all__ = ["CAUSES", "PairReplay", "count_variant", "verify_encoding", "verify_merges"]
