"""The touched-files pattern shared by DELETE, UPDATE, MERGE and ``replaceWhere``: find the files
that really hold rows matching a condition, and rewrite only those.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sqlext.engine.files import WrittenFile, write_files
from sqlext.engine.scan import FILE_COLUMN, scan
from sqlext.engine.schemas import spark_schema
from sqlext.log.actions import AddFile
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog

CHANGE_TYPE = "_change_type"


@dataclass
class Rewrite:
    """The outcome of rewriting touched files: what to remove, add and record as changes."""

    removed: list[AddFile] = field(default_factory=list)
    added: list[WrittenFile] = field(default_factory=list)
    changes: list[WrittenFile] = field(default_factory=list)
    metrics: dict[str, int] = field(default_factory=dict)


def files_with_matches(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                       candidates: list[AddFile], condition: Column) -> list[AddFile]:
    """The candidate files holding at least one row where ``condition`` is true (one Spark scan)."""
    if not candidates:
        return []
    df = scan(spark, log, snapshot, candidates, with_file_column=True)
    hit = {r[0] for r in df.filter(condition.eqNullSafe(F.lit(True)))
           .select(FILE_COLUMN).distinct().collect()}
    return [f for f in candidates if f.path in hit]


def total_records(files: list[AddFile]) -> int | None:
    total = 0
    for f in files:
        n = f.num_records
        if n is None:
            return None
        total += n
    return total


def write_changes(spark: SparkSession, log: DeltaLog, snapshot: Snapshot, df: DataFrame,
                  change_type: Column | str) -> list[WrittenFile]:
    """Write rows to ``_change_data/`` with their ``_change_type``."""
    schema = spark_schema(snapshot.metadata.schema_string)
    ct = F.lit(change_type) if isinstance(change_type, str) else change_type
    return write_files(spark, df.withColumn(CHANGE_TYPE, ct), log, snapshot.partition_columns,
                       schema, kind="cdc")


def delete_matching_rows(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                         candidates: list[AddFile], condition: Column,
                         write_change_data: bool) -> Rewrite:
    """Rewrite the candidate files that hold rows where ``condition`` is true, keeping the rows
    where ``NOT (condition <=> true)``; the deleted rows go to the change feed when asked."""
    touched = files_with_matches(spark, log, snapshot, candidates, condition)
    if not touched:
        return Rewrite(metrics={"numDeletedRows": 0, "numCopiedRows": 0})
    rows = scan(spark, log, snapshot, touched)
    matches = condition.eqNullSafe(F.lit(True))
    kept = write_files(spark, rows.filter(~matches), log, snapshot.partition_columns,
                       spark_schema(snapshot.metadata.schema_string))
    copied = total_records([f.add() for f in kept])
    if copied is None:
        copied = rows.filter(~matches).count()
    before = total_records(touched)
    deleted = before - copied if before is not None else rows.filter(matches).count()
    changes = write_changes(spark, log, snapshot, rows.filter(matches), "delete") \
        if write_change_data and deleted else []
    return Rewrite(touched, kept, changes, {"numDeletedRows": deleted, "numCopiedRows": copied})
