"""Data in and out of a table's files on Spark: scans of a snapshot into a DataFrame (``scan``),
data and change-file writes with their statistics (``files``), partition predicates decided by
Spark (``partitions``), plain parquet reads on the driver (``plain_parquet``) and the bridge from
Spark's storage configuration to the kernel's stores (``storage_bridge``)."""
