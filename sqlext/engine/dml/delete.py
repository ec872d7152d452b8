"""DELETE, as delta-spark's DeleteCommand does it, in three cases:

1. no condition: every file is removed in one commit; no data is read;
2. a condition on partition columns only: the files whose partition values make it true are
   removed; no data file is read (Spark evaluates the condition on the distinct partition
   values, so its SQL semantics apply);
3. any other condition: files are pruned by partition values and min/max statistics, one scan
   finds the files that really hold rows where ``condition <=> true``, and only those are
   rewritten with the rows where ``NOT (condition <=> true)`` (rows where the condition is NULL
   stay). With the change feed on, the deleted rows are written as ``delete`` change rows in the
   same job. No matching row: nothing is committed.

Cases 1 and 2 write no change files: the change feed reads their ``remove`` actions as deletes.

On a table with ``delta.enableDeletionVectors=true``, case 3 rewrites nothing: the matching rows
are marked in deletion vectors (:mod:`sqlext.engine.dml.marking`), each touched file's ``remove``
followed by an ``add`` of the same path with its new vector; the change feed reads the deleted
rows from the vectors (no change data file, as delta-spark).
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from sqlext.engine.conditions import resolve_condition
from sqlext.engine.commit import begin_idempotent
from sqlext.engine.dml.command import (DmlResult, Timer, begin, commit, file_metrics, record_reads, removes,
                               spark_job_errors, table_frame)
from sqlext.engine.io.partitions import files_matching_partition_predicate
from sqlext.engine.dml.marking import (discarded_on_failure, mark_rows, matching_rows,
                                       uses_deletion_vectors)
from sqlext.engine.dml import local_match
from sqlext.engine.local import dml as local_dml
from sqlext.engine.dml.rewrite import delete_matching_rows, total_records
from sqlext.engine.session import conf_bytes
from sqlext.log import operations as ops
from sqlext.log.pruning import Pruner
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import Transaction

OPERATION = ops.Delete.name


def delete(spark: SparkSession, log: DeltaLog, condition=None, *, alias: str | None = None,
           txn: Transaction | None = None) -> DmlResult:
    """Delete the rows where ``condition`` (SQL string or Column; None: all rows) is true.

    ``alias`` is the name conditions may qualify columns with; ``txn`` a transaction already
    started (default: a new one on the latest version). Returns the committed version (None when
    nothing matched) and delta-spark's metrics.
    """
    timer = Timer()
    txn, snapshot = begin(log, txn, OPERATION)
    if not begin_idempotent(spark, txn):
        # the session's txnAppId/txnVersion is in the log already: a no-op, as delta-spark
        return DmlResult(None, {})
    pcols = snapshot.partition_columns
    cond = None
    if condition is not None:
        cond = resolve_condition(table_frame(spark, snapshot, alias), condition, log.name,
                                 snapshot.version, OPERATION)
    added, changes, scanned = [], [], []
    if cond is not None and not cond.metadata_only(pcols) and uses_deletion_vectors(snapshot):
        return _delete_marking(spark, log, txn, snapshot, cond, alias, timer)
    if cond is None:
        removed = snapshot.files
        rows = {"numDeletedRows": total_records(removed), "numCopiedRows": 0}
        scan_ms, rewrite_ms = timer.lap(), 0
    elif cond.metadata_only(pcols):
        # pruning first only narrows the distinct partition values Spark has to evaluate
        candidates = Pruner.of(cond.predicate, snapshot).prune(snapshot.files) \
            if cond.predicate is not None else snapshot.files
        with spark_job_errors(log, snapshot, OPERATION):
            removed = files_matching_partition_predicate(spark, snapshot, candidates,
                                                         cond.column, alias=alias)
        rows = {"numDeletedRows": total_records(removed), "numCopiedRows": 0}
        scan_ms, rewrite_ms = timer.lap(), 0
    else:
        scanned = Pruner.of(cond.predicate, snapshot).prune(snapshot.files) \
            if cond.predicate is not None else snapshot.files
        with spark_job_errors(log, snapshot, OPERATION):
            # a few small files: on the driver, without a Spark job (None: not for that path)
            result = local_dml.delete_rows(spark, log, snapshot, scanned, cond.column,
                                           snapshot.change_data_feed_enabled, alias,
                                           cond.references)
            if result is None:
                result = delete_matching_rows(spark, log, snapshot, scanned, cond.column,
                                              snapshot.change_data_feed_enabled, alias)
        removed, added, changes, rows = result.removed, result.added, result.changes, result.metrics
        txn.row_ids_preserved = result.row_ids_preserved
        scan_ms, rewrite_ms = rows.pop("scanTimeMs"), rows.pop("rewriteTimeMs")
    touched = {f.path for f in removed}
    record_reads(txn, cond, [f for f in scanned if f.path not in touched])
    metrics = {**file_metrics(removed, added, changes), **rows,
               "numFilesBeforeSkipping": len(snapshot.files_by_path),
               "numFilesAfterSkipping": len(scanned) if scanned else len(removed),
               "scanTimeMs": scan_ms, "rewriteTimeMs": rewrite_ms}
    actions = removes(removed) + [w.add() for w in added] + [c.cdc() for c in changes]
    return commit(spark, txn, actions, ops.Delete(cond.sql if cond else None), metrics, timer)


def _delete_marking(spark: SparkSession, log: DeltaLog, txn: Transaction, snapshot, cond,
                    alias: str | None, timer: Timer) -> DmlResult:
    """Case 3 on a table with deletion vectors: mark the matching rows, rewrite no file."""
    scanned = Pruner(cond.predicate, snapshot.schema, snapshot.partition_columns).prune(
        snapshot.files) if cond.predicate is not None else snapshot.files
    # a narrow condition on a few small files: found on the driver, no Spark job
    hits = local_match.local_matching_rows(
        log, snapshot, scanned, cond.predicate, alias,
        conf_bytes(spark, local_match.MAX_BYTES_CONF, local_match.MAX_BYTES_DEFAULT))
    if hits is None:
        with spark_job_errors(log, snapshot, OPERATION):
            hits = matching_rows(spark, log, snapshot, scanned, cond.column, alias)
    scan_ms = timer.lap()
    touched = [f for f in scanned if f.path in hits]
    # No change data file: the change feed reads the deleted rows from the vectors (the rows
    # each new vector deletes and the old one did not), as delta-spark writes and reads it.
    marking = mark_rows(log, touched, hits)
    record_reads(txn, cond, [f for f in scanned if f.path not in hits])
    metrics = {**file_metrics([], [], []), **marking.metrics, "numCopiedRows": 0,
               "numFilesBeforeSkipping": len(snapshot.files_by_path),
               "numFilesAfterSkipping": len(scanned),
               "scanTimeMs": scan_ms, "rewriteTimeMs": timer.lap()}
    with discarded_on_failure(spark, log, marking, []):
        return commit(spark, txn, marking.actions(), ops.Delete(cond.sql), metrics, timer)
