"""The write command: append, overwrite, replaceWhere, dynamic partition overwrite, schema
enforcement and evolution, idempotent writes — each as one commit.
"""

from __future__ import annotations

import dataclasses
import json
import time

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sqlext.engine import codegen
from sqlext.engine.commit import auto_merge, commit, session_transaction, skips_empty_commit
from sqlext.engine.conditions import check_condition, spark_condition
from sqlext.engine.constraints import table_constraints, without_check_constraints
from sqlext.engine.maintenance.convert import require_empty_location
from sqlext.engine.io.files import CHANGE_TYPE, write_files
from sqlext.engine.local.insert import write_without_job
from sqlext.engine.io.partitions import files_matching_partition_predicate
from sqlext.engine.dml.assignments import runtime_error
from sqlext.engine.dml.rewrite import delete_matching_rows, discard
from sqlext.engine.generated import (IdentityValues, fill_generated, refuse_explicit_identity,
                                     with_identity_values)
from sqlext.engine.io.scan import partition_value
from sqlext.engine.schemas import plan_write, quote_identifier, spark_schema
from sqlext.engine.session import prepare
from sqlext.engine.spark_jobs import spark_job_errors
from sqlext.engine.table_metadata import new_table_metadata, stage_metadata
from sqlext.errors import (AnalysisException, IllegalArgumentError, ProtocolChangedException,
                           SchemaMismatchError, SqlextError, TableAlreadyExistsError)
from sqlext.log.actions import Metadata, SetTransaction
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.generated import with_high_water_marks
from sqlext.log.protocol import check_writable
from sqlext.log.pruning import Pruner, only_partition_columns, parse_predicate
from sqlext.log.table import DeltaLog
from sqlext.log.table_ref import TableRef
from sqlext.log.table_properties import CHANGE_DATA_FEED
from sqlext.log.transaction import now_ms
from sqlext.log import type_widening

_MODES = {"append": "Append", "overwrite": "Overwrite", "error": "ErrorIfExists",
          "errorifexists": "ErrorIfExists", "default": "ErrorIfExists", "ignore": "Ignore"}


def write(spark: SparkSession, df: DataFrame, table_ref: TableRef, mode: str = "append",
          partitionBy: list[str] | str | None = None, replaceWhere: str | None = None,
          mergeSchema: bool | None = None, overwriteSchema: bool = False,
          configuration: dict[str, str] | None = None, userMetadata: str | None = None,
          txnAppId: str | None = None, txnVersion: int | None = None, *,
          partitionOverwriteMode: str | None = None, operation: str | None = None,
          operation_parameters: dict | None = None, description: str | None = None,
          replace_table: bool = False) -> int:
    """Write ``df`` to the resolved table ``table_ref`` in one commit; returns the version.

    See :func:`sqlext.write` for the options (``mergeSchema`` not given: the session's
    ``spark.databricks.delta.schema.autoMerge.enabled``). ``partitionOverwriteMode`` ("static"/"dynamic")
    overrides ``spark.sql.sources.partitionOverwriteMode`` for overwrites of partitioned tables.
    ``description`` sets the table's comment (SQL ``COMMENT``) when the write creates or
    replaces the table. ``replace_table`` (CREATE OR REPLACE TABLE ... AS SELECT) drops the
    table's CHECK constraints not restated in ``configuration``, as delta-spark's REPLACE does.
    """
    prepare(spark)
    key = str(mode).lower()
    if key not in _MODES:
        raise SqlextError(f"unknown write mode {mode!r}: use append, overwrite, error, "
                          "errorifexists or ignore")
    if txnAppId is None and txnVersion is None:
        # delta-spark's session settings spark.databricks.delta.write.txnAppId/txnVersion
        # (the write's own options win)
        txnAppId, txnVersion = session_transaction(spark) or (None, None)
    if (txnAppId is None) != (txnVersion is None):
        raise IllegalArgumentError(
            "idempotent writes need both txnAppId and txnVersion",
            error_class="DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS", message_parameters={
                "reason": "Both txnVersion and txnAppId must be specified for idempotent data "
                          "frame writes"})
    if replaceWhere is not None and key != "overwrite":
        raise SqlextError("replaceWhere is only valid with mode='overwrite'")
    mergeSchema = auto_merge(spark, mergeSchema)
    if isinstance(partitionBy, str):
        partitionBy = [partitionBy]
    for attempt in range(2):
        try:
            return _write_once(spark, df, table_ref, key, partitionBy, replaceWhere, mergeSchema,
                               overwriteSchema, configuration, userMetadata, txnAppId, txnVersion,
                               partitionOverwriteMode, operation, operation_parameters,
                               description, replace_table)
        except ProtocolChangedException:
            # lost the race to create the table: an append retries against the new table
            if attempt or key != "append":
                raise
    raise AssertionError("unreachable")


def _write_once(spark, df, ref: TableRef, mode, partition_by, replace_where, merge_schema,
                overwrite_schema, configuration, user_metadata, app_id, app_version,
                partition_overwrite_mode, operation, operation_parameters,
                description=None, replace_table=False) -> int:
    started = time.time()
    log = DeltaLog(ref.location, name=ref.display)
    listing = log.listing()
    exists = listing.latest_version is not None
    snapshot = log.snapshot(listing=listing) if exists else None
    if not exists:
        require_empty_location(log)                  # never a table over someone's files
    if snapshot is not None and app_id is not None:
        done = snapshot.txn_version(app_id)
        if done is not None and done >= app_version:
            return snapshot.version          # this (appId, version) was committed already
    if exists and _MODES[mode] == "ErrorIfExists":
        raise TableAlreadyExistsError(
            f"table {ref.display} already exists (version {snapshot.version}); use "
            "mode='append' or 'overwrite'", table=ref.display, version=snapshot.version,
            error_class="TABLE_OR_VIEW_ALREADY_EXISTS" if ref.name else "DELTA_PATH_EXISTS",
            message_parameters={"relationName": ref.display} if ref.name
            else {"path": ref.location})
    if exists and mode == "ignore":
        return snapshot.version
    txn = log.start_transaction(snapshot)
    replace_schema = snapshot is None or (mode == "overwrite" and overwrite_schema)
    old_pcols = snapshot.partition_columns if snapshot else []
    pcols = _partition_columns(ref, old_pcols, partition_by, replace_schema)
    table_schema = None if replace_schema else spark_schema(snapshot.metadata.schema_string)
    widen = table_schema is not None and type_widening.enabled(snapshot.configuration) \
        and type_widening.supported(snapshot.protocol)
    plan = plan_write(df, table_schema, merge_schema, ref.display, widen_types=widen)
    names = {f.name.lower(): f.name for f in plan.table_schema.fields}
    missing = [c for c in pcols if c.lower() not in names]
    if missing:
        raise AnalysisException(f"table {ref.display}: partition column(s) {missing} are not "
                                f"columns of the data ({list(names.values())})")
    pcols = [names[c.lower()] for c in pcols]
    data = df.select(*plan.columns)
    supplied = {f.name.lower() for f in df.schema.fields}
    if snapshot is not None and not replace_schema:
        refuse_explicit_identity(plan.table_schema, supplied,
                                 f"table {ref.display}, version {snapshot.version}",
                                 operation or "WRITE")
        data = fill_generated(data, plan.table_schema, supplied)

    metadata = _metadata(snapshot, plan, pcols, configuration, replace_schema, ref, description,
                         replace_table)
    if metadata is not None:
        stage_metadata(txn, metadata)
    effective = txn.metadata     # as staged: column mapping ids and physical names assigned
    if snapshot is not None:
        # the commit's check, made before any data file is written (e.g. deletion vectors)
        check_writable(log.name, snapshot.version, txn.new_protocol or snapshot.protocol,
                       effective)
    cdf = CHANGE_DATA_FEED.of(effective.configuration)

    at_version = snapshot.version if snapshot is not None else None
    with spark_job_errors(ref.display, at_version, operation or "WRITE"), \
            codegen.interpreted_when_small(spark, codegen.input_bytes(data)):
        # rows outside replaceWhere are refused before anything is written
        condition = None
        if replace_where is not None:
            condition = spark_condition(replace_where, ref.display)
            check_condition(data, condition, replace_where, ref.display)
            data = _replace_where_checked(data, condition, replace_where, ref.display,
                                          at_version)

        identity = IdentityValues()
        if snapshot is not None and not replace_schema:
            data, identity = with_identity_values(data, plan.table_schema, supplied)
        replaced = None
        with_inserts = False
        if condition is not None and snapshot is not None and mode == "overwrite":
            replaced = _replaced_files(snapshot, replace_where)
            # rows a replaceWhere on data columns deletes become change rows, and a version
            # with change files must hold all of its changes there: the new rows are written
            # as inserts too, by the same job as the data (one evaluation of the rows)
            with_inserts = cdf and bool(replaced[1]) and not only_partition_columns(
                replaced[0], snapshot.partition_columns)
        constraints = table_constraints(plan.table_schema, effective.configuration)
        # little data, no Spark job: the rows written on the driver (sqlext.engine.local)
        written = None if with_inserts else write_without_job(spark, data, log, effective,
                                                               constraints, at_version)
        if written is None:
            written = write_files(spark, _with_insert_images(data) if with_inserts else data,
                                  log, pcols, plan.table_schema, constraints=constraints,
                                  kind="mixed" if with_inserts else "data", metadata=effective)
        inserts = [w for w in written if w.is_change_file]
        written = [w for w in written if not w.is_change_file]
        removed, rewritten, changes, extra_metrics = [], [], [], {}
        dynamic = (snapshot is not None and mode == "overwrite" and condition is None
                   and bool(pcols) and _dynamic(spark, partition_overwrite_mode)
                   and not replace_schema)
        if snapshot is not None and mode == "overwrite":
            if condition is not None:
                removed, rewritten, changes, extra_metrics = _replace_where(
                    spark, log, snapshot, txn, condition, replaced, cdf, inserts)
            elif dynamic:
                # "" is null in the log too (delta-rs writes it); names match case-insensitively
                mapping = ColumnMapping.of(effective)
                written_parts = {tuple(partition_value(w, c, mapping) or None for c in pcols)
                                 for w in written}
                removed = [f for f in snapshot.files
                           if tuple(partition_value(f, c, mapping) or None for c in pcols)
                           in written_parts]
                txn.read_whole_table()
            else:
                removed = snapshot.files
                txn.read_whole_table()

    marks = identity.high_water_marks()
    if marks:
        # the values generated are recorded in this commit: a concurrent writer that generated
        # values too changed the metadata first, so one of the two conflicts
        stage_metadata(txn, dataclasses.replace(txn.metadata, schema_string=with_high_water_marks(
            txn.metadata.schema_string, marks)))
    actions = []
    if app_id is not None:
        actions.append(SetTransaction(app_id, int(app_version), now_ms()))
    ts = now_ms()
    actions += [f.remove(ts) for f in removed]
    # a file of no rows (Spark writes one for an empty unpartitioned output) adds nothing: it is
    # left out of the commit, as delta-spark leaves it out, and counted in the metrics as there
    empty = [w for w in written if w.num_records == 0]
    actions += [w.add() for w in written if w.num_records != 0] + [w.add() for w in rewritten]
    actions += [c.cdc() for c in changes]
    out_rows = sum((w.num_records or 0) for w in written)
    metrics = {"numFiles": len(written), "numOutputRows": out_rows,
               "numOutputBytes": sum(w.size for w in written)}
    if removed or (snapshot is not None and mode == "overwrite"):
        metrics.update(numRemovedFiles=len(removed), numRemovedBytes=sum(f.size for f in removed))
    metrics.update(extra_metrics)
    if changes:
        metrics["numAddedChangeFiles"] = len(changes)
    params = {"mode": _MODES[mode], "partitionBy": json.dumps(pcols)}
    if replace_where is not None:
        params["predicate"] = replace_where  # delta-spark: the text itself, not a JSON list
    if dynamic:
        params["isDynamicPartitionOverwrite"] = True
    if merge_schema:
        params["canMergeSchema"] = True
    params.update(operation_parameters or {})
    if empty:
        discard(spark, log, empty)
    if snapshot is not None and operation is None and skips_empty_commit(spark, txn, actions):
        # nothing written, removed or changed: no commit, as delta-spark's commitIfNeeded
        # (spark.databricks.delta.skipRecordingEmptyCommits)
        return snapshot.version
    metrics["executionTimeMs"] = int((time.time() - started) * 1000)
    version = commit(spark, txn, actions, operation or "WRITE", params, metrics,
                     explicit_user_metadata=user_metadata)
    return version


def _dynamic(spark: SparkSession, override: str | None) -> bool:
    mode = override or spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static")
    return str(mode).lower() == "dynamic"


def _partition_columns(ref: TableRef, existing: list[str], requested: list[str] | None,
                       replace: bool) -> list[str]:
    if requested is None:
        return list(existing)
    if replace or [c.lower() for c in requested] == [c.lower() for c in existing]:
        return list(requested)
    def names(columns):
        return ", ".join(f"`{c}`" for c in columns)
    raise SchemaMismatchError(
        "[DELTA_METADATA_MISMATCH] A metadata mismatch was detected when writing to the Delta "
        f"table {ref.display}.\n- Partition columns do not match the partition columns of the "
        f"table.\nGiven: [{names(requested)}]\nTable: [{names(existing)}]\nOmit partitionBy, "
        "or replace the table with mode='overwrite', overwriteSchema=True. The table is "
        "unchanged.")


def _replace_where_checked(data: DataFrame, condition, replace_where: str, table: str,
                           version: int | None) -> DataFrame:
    """``data`` with a check, made by the write's own Spark job (no separate pass over the rows),
    that fails it at the first row outside ``replace_where``; the failure becomes an
    :class:`~sqlext.errors.InvariantViolationError` naming the predicate and the row."""
    at = f"table {table}" + (f", version {version}" if version is not None else "")
    message = (f"{at}: written data contains rows that do not satisfy the replaceWhere "
               f"predicate {replace_where!r}, e.g. ")
    row = F.to_json(F.struct(*[F.col(quote_identifier(c)) for c in data.columns]))
    try:
        data.select(row.alias("row")).schema  # noqa: B018 - a type to_json cannot show
        failure = runtime_error(message, row)
    except PySparkException:
        failure = runtime_error(message + "a row of the data")
    return data.filter(F.when(~condition.eqNullSafe(F.lit(True)), failure)
                       .otherwise(F.lit(True)))


def _metadata(snapshot, plan, pcols, configuration, replace_schema, ref,
              description=None, replace_table=False) -> Metadata | None:
    schema_string = plan.table_schema.json()
    if snapshot is None:
        return new_table_metadata(schema_string, pcols, configuration, ref.name, description)
    old = snapshot.metadata
    kept = without_check_constraints(old.configuration) if replace_table else old.configuration
    conf = {**kept, **{k: str(v) for k, v in (configuration or {}).items()}}
    new_schema = schema_string if (plan.schema_changed or replace_schema) else old.schema_string
    desc = description if (replace_schema and description is not None) else old.description
    if (new_schema, pcols, conf, desc) == (old.schema_string, old.partition_columns,
                                           old.configuration, old.description):
        return None
    return dataclasses.replace(old, schema_string=new_schema, partition_columns=pcols,
                               configuration=conf, description=desc)


def _replaced_files(snapshot, text: str) -> tuple:
    """(the parsed ``replaceWhere`` predicate, the files it may select by their statistics)."""
    predicate = parse_predicate(text)
    return predicate, Pruner.of(predicate, snapshot).prune(snapshot.files)


def _with_insert_images(data: DataFrame) -> DataFrame:
    """Each row of ``data`` twice: as data (``_change_type`` NULL) and as an ``insert`` change
    row, from one evaluation (:func:`write_files`' ``kind="mixed"`` input)."""
    fields = ", ".join(f"{quote_identifier(c)} AS {quote_identifier(c)}" for c in data.columns)

    def image(change_type: str) -> str:
        return f"struct({fields}, {change_type} AS {quote_identifier(CHANGE_TYPE)})"

    data_row, insert_row = image("CAST(NULL AS STRING)"), image("'insert'")
    return data.selectExpr(f"inline(array({data_row}, {insert_row}))")


def _replace_where(spark, log, snapshot, txn, condition, replaced, cdf, inserts):
    """Remove what ``replaceWhere`` replaces (``replaced``: :func:`_replaced_files`): whole files
    for a partition predicate, matching rows (touched files rewritten) for a predicate on data
    columns; ``inserts``, the new rows as change rows, join the deleted rows' change rows."""
    predicate, candidates = replaced
    txn.read_predicate(predicate)
    txn.read_files(candidates)
    if only_partition_columns(predicate, snapshot.partition_columns):
        removed = files_matching_partition_predicate(spark, snapshot, candidates, condition)
        return removed, [], [], {}
    result = delete_matching_rows(spark, log, snapshot, candidates, condition, cdf)
    txn.row_ids_preserved = result.row_ids_preserved
    changes = list(result.changes) + list(inserts)
    metrics = {"numDeletedRows": result.metrics["numDeletedRows"],
               "numCopiedRows": result.metrics["numCopiedRows"]}
    return result.removed, result.added, changes, metrics
