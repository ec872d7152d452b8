"""What DELETE and UPDATE (and MERGE) share around their data work: the transaction and its
snapshot, checks before any file is written, the table as an empty frame for analysing
conditions, timings, and the commit with delta-spark's operation parameters and metrics.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sqlext.engine import commit as commit_assembly   # this module's commit() wraps it
from sqlext.engine import spark_jobs
from sqlext.engine.schemas import spark_schema
from sqlext.errors import TableNotFoundError, UnsupportedOperationError
from sqlext.log import operations as ops
from sqlext.log.protocol import check_readable, check_writable
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import Transaction, now_ms


@dataclass
class DmlResult:
    """What a DML statement did: the version it committed (None: nothing to commit) and its
    ``operationMetrics``."""

    version: int | None
    metrics: dict[str, int] = field(default_factory=dict)


class Timer:
    """Milliseconds since the statement started, and since the last mark."""

    def __init__(self) -> None:
        self.start = self.last = time.monotonic()

    def total(self) -> int:
        return int((time.monotonic() - self.start) * 1000)

    def lap(self) -> int:
        now = time.monotonic()
        elapsed, self.last = int((now - self.last) * 1000), now
        return elapsed


def begin(log: DeltaLog, txn: Transaction | None, operation: str,
          removes_data: bool = True) -> tuple[Transaction, Snapshot]:
    """The statement's transaction (a new one on the latest version unless given) and its
    snapshot, after checking that sqlext may read and change the table."""
    txn = txn or log.start_transaction()
    snapshot = txn.snapshot
    if snapshot is None:
        raise TableNotFoundError(f"{log.name} is not a Delta table (no _delta_log at "
                                 f"{log.location}); {operation} needs an existing table")
    check_readable(log.name, snapshot.version, snapshot.protocol, snapshot.metadata)
    check_writable(log.name, snapshot.version, snapshot.protocol, snapshot.metadata)
    if removes_data and snapshot.properties.append_only:
        raise UnsupportedOperationError(
            f"table {log.name}, version {snapshot.version} is append-only "
            f"(delta.appendOnly=true): {operation} would remove data. Set "
            "delta.appendOnly=false to allow it. The table is unchanged.")
    return txn, snapshot


@contextlib.contextmanager
def spark_job_errors(log: DeltaLog, snapshot: Snapshot, operation: str):
    """Turn a failed Spark job of the statement into a sqlext error (nothing is committed then):
    :class:`InvariantViolationError` for sqlext's own row checks (NOT NULL, values that do not
    fit their column), :class:`SqlextError` for anything else (e.g. an ANSI cast error)."""
    with spark_jobs.spark_job_errors(log.name, snapshot.version, operation):
        yield


# the most recently used empty table frames (a frame is immutable; building one costs a few
# milliseconds of Spark analysis, a noticeable part of a small DML statement)
_TABLE_FRAMES: dict[tuple, DataFrame] = {}
_TABLE_FRAMES_KEPT = 32


def table_frame(spark: SparkSession, snapshot: Snapshot, alias: str | None) -> DataFrame:
    """An empty DataFrame with the table's column names and types (aliased), to analyse
    expressions against. Every column reads as nullable: take nullability from the schema.

    Built from ``range(0)``, not ``createDataFrame([])``, which ships an (empty) RDD from Python
    and costs a noticeable part of a one-file DELETE."""
    key = (id(spark), snapshot.metadata.schema_string, alias)
    df = _TABLE_FRAMES.pop(key, None)
    if df is None or df.sparkSession is not spark:
        schema = spark_schema(snapshot.metadata.schema_string)
        df = spark.range(0).select(*[F.lit(None).cast(f.dataType).alias(f.name)
                                     for f in schema.fields])
        df = df.alias(alias) if alias else df
    _TABLE_FRAMES[key] = df
    while len(_TABLE_FRAMES) > _TABLE_FRAMES_KEPT:
        _TABLE_FRAMES.pop(next(iter(_TABLE_FRAMES)))
    return df


def commit(spark: SparkSession, txn: Transaction, actions: list, operation: ops.Operation,
           metrics: dict, timer: Timer) -> DmlResult:
    """Commit ``actions`` as ``operation`` (a :class:`~sqlext.log.operations.Delete` or
    :class:`~sqlext.log.operations.Update`: ``operationParameters.predicate`` is a JSON array of
    the condition's SQL); nothing when there are none, as delta-spark's ``commitIfNeeded``
    (unless ``spark.databricks.delta.skipRecordingEmptyCommits`` is false: then an empty
    commit)."""
    if commit_assembly.skips_empty_commit(spark, txn, actions):
        metrics["executionTimeMs"] = timer.total()
        return DmlResult(None, metrics)
    metrics["executionTimeMs"] = timer.total()
    version = commit_assembly.commit(spark, txn, actions, operation, metrics=metrics)
    return DmlResult(version, metrics)


def file_metrics(removed, added, changes) -> dict:
    """delta-spark's file and byte counts of a DML commit."""
    return {"numRemovedFiles": len(removed), "numAddedFiles": len(added),
            "numAddedChangeFiles": len(changes),
            "numRemovedBytes": sum(f.size for f in removed),
            "numAddedBytes": sum(f.size for f in added),
            "changeFileBytes": sum(f.size for f in changes)}


def removes(files, timestamp: int | None = None) -> list:
    """``remove`` actions for ``files`` with one deletion timestamp."""
    ts = now_ms() if timestamp is None else timestamp
    return [f.remove(ts) for f in files]


def record_reads(txn: Transaction, condition, kept_candidates) -> None:
    """Tell the transaction what the statement read: the rows matching ``condition`` (the whole
    table without one, or when sqlext cannot parse it) and the candidate files it scanned but
    does not remove. Files it removes are left out on purpose: a concurrent removal of one of
    those is reported as ``ConcurrentDeleteDeleteException``, which says what happened."""
    if condition is None or condition.predicate is None:
        txn.read_whole_table()
    else:
        txn.read_predicate(condition.predicate)
    txn.read_files(kept_candidates)
