"""Learning the merges: the stage after counting.

    ``merge``     the merge engine: a heap with lazy deletion over an inverted index pair -> words
    ``train``     ``train_bpe`` and the other public trainers: count, merge, build the vocab
    ``profiles``  trainers' conventions (cs336, rustbpe, hf, SuperBPE): tie rule, id layout, input cuts
    ``settings``  a run's conventions resolved and checked once: ``TrainSettings``, which every trainer takes
    ``extend``    continuing a model: its merges replayed, its ids kept

The package imports nothing up front; import the module you need.
"""
