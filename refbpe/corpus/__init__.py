"""A corpus, from files to word counts and back to token ids, in parallel.

``io``          reading inputs in chunks cut where cutting cannot change the pieces
``count``       counting pre-tokens over a process pool (the work units and the pool)
``sequences``   cutting input into a trainer's sequences (lines, documents) and counting them
``spool``       the files that carry the pool's results between processes
``shard``       cutting inputs into shards for several machines
``cluster``     running the work units on a Dask cluster
``countfile``   word-count files (``.tsv``, ``.gz``): write, read, sum
``encode``      a corpus to token ids on counting's work units
``idfile``      token-id files: ``.npy``, ``.bin``, text
``progress``    progress lines and peak memory
"""
