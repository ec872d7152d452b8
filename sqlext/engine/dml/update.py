"""UPDATE, as delta-spark's UpdateCommand does it: only files holding rows where the condition is
true are rewritten.

- Files are pruned by partition values and min/max statistics. A condition on partition columns
  only (or none) selects whole files, and every row of them is updated without a scan to find
  them; otherwise one scan finds the files that really hold rows where ``condition <=> true``.
- In those files, matching rows get the ``set`` values (whole columns or nested fields), computed
  from the old row and cast to the column's type as delta-spark does (see
  :mod:`sqlext.engine.dml.assignments`); other rows are copied unchanged.
  Setting a partition column moves the row to its new partition.
- With the change feed on, each updated row yields ``update_preimage`` and ``update_postimage``
  change rows, written in the same Spark job as the data; copied rows yield none.
- No matching row: nothing is committed.

On a table with ``delta.enableDeletionVectors=true`` a condition that is not on partition columns
only rewrites nothing: the matching rows are marked deleted in deletion vectors
(:mod:`sqlext.engine.dml.marking`) and their new versions written to new files (delta-spark's
merge-on-read); rows that do not match are not copied.
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sqlext.engine.dml.assignments import resolve_set
from sqlext.engine.conditions import resolve_condition
from sqlext.engine.commit import begin_idempotent
from sqlext.engine.dml.command import (DmlResult, Timer, begin, commit, file_metrics, record_reads, removes,
                               spark_job_errors, table_frame)
from sqlext.engine.io.partitions import files_matching_partition_predicate
from sqlext.engine.dml.marking import (discarded_on_failure, mark_rows, matching_rows,
                                       uses_deletion_vectors)
from sqlext.engine.io.scan import stable_row_id_columns
from sqlext.engine.dml.rewrite import (rewrite_files, scan_rows, update_matching_rows,
                                       with_new_row_commit_version,
                                       updating)
from sqlext.engine.local import dml as local_dml
from sqlext.engine.generated import generated_columns, refuse_identity_update
from sqlext.engine.schemas import spark_schema
from sqlext.log import operations as ops
from sqlext.log.pruning import Pruner
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import Transaction

OPERATION = ops.Update.name


def update(spark: SparkSession, log: DeltaLog, condition=None, set=None, *,  # noqa: A002
           alias: str | None = None, txn: Transaction | None = None) -> DmlResult:
    """Set columns to new values in the rows where ``condition`` (SQL string or Column; None:
    all rows) is true. ``set`` maps column names (or nested field paths, ``a.b.c``) to SQL strings
    or Columns.

    ``alias`` is the name expressions may qualify columns with; ``txn`` a transaction already
    started (default: a new one on the latest version). Returns the committed version (None when
    nothing matched) and delta-spark's metrics.
    """
    timer = Timer()
    txn, snapshot = begin(log, txn, OPERATION, removes_data=True)
    if not begin_idempotent(spark, txn):
        # the session's txnAppId/txnVersion is in the log already: a no-op, as delta-spark
        return DmlResult(None, {})
    pcols = snapshot.partition_columns
    frame = table_frame(spark, snapshot, alias)
    case_sensitive = str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"
    schema = spark_schema(snapshot.metadata.schema_string)
    where = f"table {log.name}, version {snapshot.version}"
    assignments = resolve_set(frame, set, schema, where, OPERATION, case_sensitive)
    assigned = {name.lower() for name in assignments}
    refuse_identity_update(schema, assigned, where, OPERATION)
    # generated columns the statement does not set follow the updated row (as delta-spark)
    regenerate = (schema, [g for g in generated_columns(schema) if g.lower() not in assigned])
    cond = None
    if condition is not None:
        cond = resolve_condition(frame, condition, log.name, snapshot.version, OPERATION)
    candidates = snapshot.files
    if cond is not None and cond.predicate is not None:
        candidates = Pruner.of(cond.predicate, snapshot).prune(candidates)
    whole_files = cond is None or cond.metadata_only(pcols)
    if cond is not None and whole_files:
        with spark_job_errors(log, snapshot, OPERATION):
            candidates = files_matching_partition_predicate(spark, snapshot, candidates,
                                                            cond.column, alias=alias)
    if not whole_files and uses_deletion_vectors(snapshot):
        return _update_marking(spark, log, txn, snapshot, cond, assignments, candidates, alias,
                               timer, regenerate)
    with spark_job_errors(log, snapshot, OPERATION):
        # a few small files: on the driver, without a Spark job (None: not for that path)
        result = local_dml.update_rows(spark, log, snapshot, candidates,
                                       None if whole_files else cond.column, assignments,
                                       snapshot.change_data_feed_enabled, alias, regenerate,
                                       None if whole_files else cond.references)
        if result is None:
            result = update_matching_rows(spark, log, snapshot, candidates,
                                          None if whole_files else cond.column, assignments,
                                          snapshot.change_data_feed_enabled, alias, regenerate)
    txn.row_ids_preserved = result.row_ids_preserved
    touched = {f.path for f in result.removed}
    record_reads(txn, cond, [f for f in candidates if f.path not in touched])
    metrics = {**file_metrics(result.removed, result.added, result.changes), **result.metrics,
               "numFilesBeforeSkipping": len(snapshot.files_by_path),
               "numFilesAfterSkipping": len(candidates)}
    actions = (removes(result.removed) + [w.add() for w in result.added]
               + [c.cdc() for c in result.changes])
    return commit(spark, txn, actions, ops.Update(cond.sql if cond else None), metrics, timer)


def _update_marking(spark: SparkSession, log: DeltaLog, txn: Transaction, snapshot, cond,
                    assignments, candidates, alias: str | None, timer: Timer,
                    regenerate: tuple | None = None) -> DmlResult:
    """UPDATE on a table with deletion vectors: the matching rows are marked deleted in their
    files and their new versions (with their change rows) written to new files."""
    with_changes = snapshot.change_data_feed_enabled
    result = None
    with spark_job_errors(log, snapshot, OPERATION):
        hits = matching_rows(spark, log, snapshot, candidates, cond.column, alias)
        scan_ms = timer.lap()
        touched = [f for f in candidates if f.path in hits]
        if touched:
            stable = stable_row_id_columns(snapshot)
            rows = scan_rows(spark, log, snapshot, touched, alias,
                             stable_row_ids=stable).filter(cond.column.eqNullSafe(F.lit(True)))
            result = rewrite_files(spark, log, snapshot, [],
                                   updating(rows, F.lit(True),
                                            with_new_row_commit_version(snapshot, assignments),
                                            with_changes, regenerate),
                                   with_changes)
            txn.row_ids_preserved = stable is not None
    marking = mark_rows(log, touched, hits)
    record_reads(txn, cond, [f for f in candidates if f.path not in hits])
    added = result.added if result else []
    changes = result.changes if result else []
    marked = dict(marking.metrics)
    updated = marked.pop("numDeletedRows")
    metrics = {**file_metrics([], added, changes), **marked,
               "numUpdatedRows": updated, "numCopiedRows": 0,
               "numFilesBeforeSkipping": len(snapshot.files_by_path),
               "numFilesAfterSkipping": len(candidates),
               "scanTimeMs": scan_ms, "rewriteTimeMs": timer.lap()}
    actions = marking.actions() + [w.add() for w in added] + [c.cdc() for c in changes]
    with discarded_on_failure(spark, log, marking, added + changes):
        return commit(spark, txn, actions, ops.Update(cond.sql if cond else None), metrics, timer)
