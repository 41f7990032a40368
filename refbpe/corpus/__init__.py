"""A corpus, from files to word counts and back to token ids, in parallel.

``io``          reading inputs in chunks cut where cutting cannot change the pieces
``units``       work units: inputs cut into byte ranges or chunks, each run by a work function
``pool``        the process pool that runs them: start, submit, how a run ends
``claims``      a regular file's units claimed by the processes themselves (counting)
``count``       counting pre-tokens: a unit's word table, and the tables added up
``sequences``   cutting input into a trainer's sequences (lines, documents) and counting them
``spool``       the files that carry the pool's work and results between processes
``shard``       cutting inputs into shards for several machines
``cluster``     running the work units on a Dask cluster
``countfile``   word-count files (``.tsv``, ``.gz``): write, read, sum
``encode``      a corpus to token ids on counting's work units
``idfile``      token-id files: ``.npy``, ``.bin``, text
``progress``    progress lines and peak memory
"""
