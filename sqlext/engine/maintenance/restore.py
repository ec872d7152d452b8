"""RESTORE TABLE t TO VERSION AS OF n | TIMESTAMP AS OF ts, as delta-spark's RestoreTableCommand:
the Spark side (session settings, result frame) over the kernel's :mod:`sqlext.log.restore`.

One commit brings the table back to an older version: ``add`` (``dataChange=true``) for each file
of that version the latest one lacks, ``remove`` (``dataChange=true``) for each file of the latest
version the old one lacks, the old version's metadata, and a protocol that is never downgraded.
The change feed reads the commit as the inserts and deletes it amounts to. The files to add must
still exist: a version whose files were vacuumed cannot be restored
(:class:`~sqlext.errors.DeltaFileNotFoundError`) unless ``spark.sql.files.ignoreMissingFiles`` is
true, in which case the missing files are left out. The transaction reads the whole table, so any
concurrent data change makes the RESTORE fail rather than undo it silently.

Metrics (commit and result), delta-spark's: ``tableSizeAfterRestore``, ``numOfFilesAfterRestore``,
``numRemovedFiles``, ``numRestoredFiles``, ``removedFilesSize``, ``restoredFilesSize``.
"""

from __future__ import annotations

from sqlext.log.restore import RestoreResult, restore_table
from sqlext.log.table import DeltaLog

IGNORE_MISSING_FILES = "spark.sql.files.ignoreMissingFiles"

#: RESTORE's result columns (delta-spark's), in order, with the metric each one reports
RESULT_COLUMNS = [("table_size_after_restore", "tableSizeAfterRestore"),
                  ("num_of_files_after_restore", "numOfFilesAfterRestore"),
                  ("num_removed_files", "numRemovedFiles"),
                  ("num_restored_files", "numRestoredFiles"),
                  ("removed_files_size", "removedFilesSize"),
                  ("restored_files_size", "restoredFilesSize")]


def restore(spark, log: DeltaLog, version: int | None = None, timestamp=None) -> RestoreResult:
    """RESTORE with the session's settings: a timestamp is text (read in the session time zone),
    a datetime or a date; ``spark.sql.files.ignoreMissingFiles`` allows missing files."""
    from sqlext.engine.read import timestamp_ms
    from sqlext.engine.commit import commit_fields
    ts = None if timestamp is None else timestamp_ms(timestamp, spark, log.name)
    ignore = str(spark.conf.get(IGNORE_MISSING_FILES, "false")).lower() == "true"
    return restore_table(log, version, ts, timestamp_text=None if timestamp is None else str(timestamp),
                         ignore_missing_files=ignore, **commit_fields(spark))


def result_frame(spark, result: RestoreResult):
    """RESTORE's result row as a DataFrame with delta-spark's columns."""
    from pyspark.sql import types as T
    schema = T.StructType([T.StructField(name, T.LongType()) for name, _ in RESULT_COLUMNS])
    return spark.createDataFrame([tuple(int(result.metrics[m]) for _, m in RESULT_COLUMNS)],
                                 schema)
