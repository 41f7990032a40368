"""Learning the merges: the stage after counting.

    ``merge``        the merge engine: ``learn_merges``, the loop over the heap, why lazy deletion is sound
    ``table``        the engine's word table: the words end to end in one linked symbol array
    ``candidates``   the engine's first counts of a table of many distinct pairs: the candidates only
    ``step``         the engine's merge step: (a, b) -> z at each listed slot, the counts updated
    ``heap``         the engine's heap of pairs: entry order (tie rules), lazy deletion, refills
    ``tie_rules``    the tie rules a training can be held to (``--tie-rule``), by verify's names
    ``inherited``    a given merge list replayed first on the word table (extend, SuperBPE)
    ``traced``       the trace tables of ``train --trace``: count, ties and runner-up per merge
    ``merge_check``  another trainer's merges checked on the engine's state (``verify.certify``)
    ``train``        ``train_bpe`` and the other public trainers: count, merge, build the vocab
    ``profiles``     trainers' conventions (cs336, rustbpe, hf, SuperBPE): tie rule, id layout, input cuts
    ``settings``     a run's conventions resolved and checked once: ``TrainSettings``, every trainer's
    ``extend``       continuing a model: its merges replayed, its ids kept

The package imports nothing up front; import the module you need.
"""
