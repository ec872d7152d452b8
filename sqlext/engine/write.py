"""The write command: append, overwrite, replaceWhere, dynamic partition overwrite, schema
enforcement and evolution, idempotent writes — each as one commit.

:func:`write` checks its options once (:class:`~sqlext.engine.writes.options.WriteOptions`)
and runs the stages of :mod:`sqlext.engine.writes`: plan (:mod:`~sqlext.engine.writes.plan`),
write (:mod:`~sqlext.engine.writes.execution`), then commit (here, with
:mod:`~sqlext.engine.writes.metrics`'s actions, parameters and metrics, and the options'
:class:`~sqlext.engine.commit.CommitProperties`); what runs after the commit is in
:mod:`sqlext.engine.post_commit`.
"""

from __future__ import annotations

import dataclasses

from pyspark.sql import DataFrame, SparkSession

from sqlext.engine.commit import commit, skips_empty_commit
from sqlext.engine.dml.rewrite import discard
from sqlext.engine.session import prepare
from sqlext.engine.table_metadata import stage_metadata
from sqlext.engine.writes.execution import WriteOutcome, execute_write
from sqlext.engine.writes.metrics import write_actions, write_metrics, write_operation
from sqlext.engine.writes.options import WriteOptions, write_options
from sqlext.engine.writes.plan import TableWrite, plan_table_write
from sqlext.errors import ProtocolChangedException
from sqlext.log.operations import Operation
from sqlext.log.generated import with_high_water_marks
from sqlext.log.table_ref import TableRef


def write(spark: SparkSession, df: DataFrame, table_ref: TableRef, mode: str = "append",
          partitionBy: list[str] | str | None = None, replaceWhere: str | None = None,
          mergeSchema: bool | None = None, overwriteSchema: bool = False,
          configuration: dict[str, str] | None = None, userMetadata: str | None = None,
          txnAppId: str | None = None, txnVersion: int | None = None, *,
          partitionOverwriteMode: str | None = None, operation: Operation | None = None,
          description: str | None = None, replace_table: bool = False) -> int:
    """Write ``df`` to the resolved table ``table_ref`` in one commit; returns the version.

    See :func:`sqlext.write` for the options (``mergeSchema`` not given: the session's
    ``spark.databricks.delta.schema.autoMerge.enabled``). ``partitionOverwriteMode`` ("static"/"dynamic")
    overrides ``spark.sql.sources.partitionOverwriteMode`` for overwrites of partitioned tables.
    ``description`` sets the table's comment (SQL ``COMMENT``) when the write creates or
    replaces the table. ``replace_table`` (CREATE OR REPLACE TABLE ... AS SELECT) drops the
    table's CHECK constraints not restated in ``configuration``, as delta-spark's REPLACE does.
    ``operation``: the commit's operation when not ``WRITE`` (a STREAMING UPDATE, a CREATE TABLE
    AS SELECT), recorded with the write's parameters followed by its own.
    """
    prepare(spark)
    options = write_options(
        spark, mode, partitionBy, replaceWhere, mergeSchema, overwriteSchema, userMetadata,
        txnAppId, txnVersion, configuration=configuration, description=description,
        partition_overwrite_mode=partitionOverwriteMode, operation=operation,
        replace_table=replace_table)
    for attempt in range(2):
        try:
            return _write_once(spark, df, table_ref, options)
        except ProtocolChangedException:
            # lost the race to create the table: an append retries against the new table
            if attempt or options.mode != "append":
                raise
    raise AssertionError("unreachable")


def _write_once(spark: SparkSession, df: DataFrame, ref: TableRef, options: WriteOptions) -> int:
    """The three stages: plan, write, commit."""
    plan = plan_table_write(spark, df, ref, options)
    if isinstance(plan, int):
        return plan                   # nothing to write: the table's version
    return _commit(spark, plan, execute_write(spark, plan, options), options)


def _commit(spark: SparkSession, plan: TableWrite, outcome: WriteOutcome,
            options: WriteOptions) -> int:
    """The commit stage: the identity values generated, the actions, parameters and metrics;
    no commit when nothing changed (delta-spark's ``commitIfNeeded``)."""
    txn = plan.txn
    marks = outcome.identity.high_water_marks()
    if marks:
        # the values generated are recorded in this commit: a concurrent writer that generated
        # values too changed the metadata first, so one of the two conflicts
        stage_metadata(txn, dataclasses.replace(txn.metadata, schema_string=with_high_water_marks(
            txn.metadata.schema_string, marks)))
    actions = write_actions(outcome)
    empty = [w for w in outcome.written if w.num_records == 0]
    if empty:
        discard(spark, plan.log, empty)
    if plan.snapshot is not None and options.operation is None \
            and skips_empty_commit(spark, txn, actions, options.commit):
        # nothing written, removed or changed: no commit, as delta-spark's commitIfNeeded
        # (spark.databricks.delta.skipRecordingEmptyCommits)
        return plan.snapshot.version
    return commit(spark, txn, actions, write_operation(plan, outcome, options),
                  metrics=write_metrics(plan, outcome, options), properties=options.commit)
