"""The warehouse: Parquet per partition, DuckDB views over it (SPEC 8, 10).

- ``datasets``: the hive layout, atomic Parquet writes and removals;
- ``publish``: the pipeline's rules on top (validate before publishing,
  rejected batches, pruning, flat datasets, stored fingerprints);
- ``views``: the DuckDB file of views, rebuilt atomically.

Knows nothing of boards or tables: it stores records.
"""
