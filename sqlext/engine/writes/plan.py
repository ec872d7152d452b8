"""The plan stage of a write: what is written, under which schema, partitioning and metadata
(delta-rs ``operations/write/schema_evolution.rs``); no data file is written yet."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession

from sqlext.engine.constraints import without_check_constraints
from sqlext.engine.generated import fill_generated, refuse_explicit_identity
from sqlext.engine.maintenance.convert import require_empty_location
from sqlext.engine.schemas import WritePlan as SchemaPlan
from sqlext.engine.schemas import plan_write, spark_schema
from sqlext.engine.table_metadata import new_table_metadata, stage_metadata
from sqlext.engine.writes.options import WriteOptions
from sqlext.errors import AnalysisException, SchemaMismatchError, TableAlreadyExistsError
from sqlext.log.actions import Metadata
from sqlext.log.protocol import check_writable
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog
from sqlext.log.table_properties import CHANGE_DATA_FEED
from sqlext.log.table_ref import TableRef
from sqlext.log.transaction import Transaction
from sqlext.log import type_widening


@dataclass
class TableWrite:
    """A planned write: the table (``snapshot`` None: the write creates it), its transaction
    with the metadata staged, and the rows to write (``data``: the table's columns, generated
    ones filled)."""
    ref: TableRef
    log: DeltaLog
    snapshot: Snapshot | None
    txn: Transaction
    schema: SchemaPlan            # the table's schema as written, and whether it changed
    partition_columns: list[str]
    replace_schema: bool
    data: DataFrame
    supplied: set[str]            # the columns the input has (lowercased)
    metadata: Metadata            # as staged: column mapping ids and physical names assigned
    change_data_feed: bool
    started: float                # time.time() when the write began

    @property
    def version(self) -> int | None:
        """The version the write reads (None: it creates the table)."""
        return self.snapshot.version if self.snapshot is not None else None


def plan_table_write(spark: SparkSession, df: DataFrame, ref: TableRef,
                     options: WriteOptions) -> TableWrite | int:
    """Plan writing ``df`` to ``ref``: a :class:`TableWrite`, or the table's version when there
    is nothing to write (the application transaction is committed already, mode ``ignore`` on
    an existing table). Mode ``error`` on an existing table, partition columns that differ from
    the table's, and a schema the table does not take are refused here."""
    started = time.time()
    log = DeltaLog(ref.location, name=ref.display)
    listing = log.listing()
    exists = listing.latest_version is not None
    snapshot = log.snapshot(listing=listing) if exists else None
    if not exists:
        require_empty_location(log)                  # never a table over someone's files
    app = options.commit.app_transaction
    if snapshot is not None and app is not None:
        done = snapshot.txn_version(app[0])
        if done is not None and done >= app[1]:
            return snapshot.version          # this (appId, version) was committed already
    if exists and options.save_mode == "ErrorIfExists":
        raise TableAlreadyExistsError(
            f"table {ref.display} already exists (version {snapshot.version}); use "
            "mode='append' or 'overwrite'", table=ref.display, version=snapshot.version,
            error_class="TABLE_OR_VIEW_ALREADY_EXISTS" if ref.name else "DELTA_PATH_EXISTS",
            message_parameters={"relationName": ref.display} if ref.name
            else {"path": ref.location})
    if exists and options.mode == "ignore":
        return snapshot.version
    txn = log.start_transaction(snapshot)
    replace_schema = snapshot is None or (options.overwrite and options.overwrite_schema)
    old_pcols = snapshot.partition_columns if snapshot else []
    pcols = _partition_columns(ref, old_pcols, options.partition_by, replace_schema)
    table_schema = None if replace_schema else spark_schema(snapshot.metadata.schema_string)
    widen = table_schema is not None and type_widening.enabled(snapshot.configuration) \
        and type_widening.supported(snapshot.protocol)
    plan = plan_write(df, table_schema, options.merge_schema, ref.display, widen_types=widen)
    names = {f.name.lower(): f.name for f in plan.table_schema.fields}
    missing = [c for c in pcols if c.lower() not in names]
    if missing:
        raise AnalysisException(f"table {ref.display}: partition column(s) {missing} are not "
                                f"columns of the data ({list(names.values())})")
    pcols = [names[c.lower()] for c in pcols]
    data = df if plan.columns is None else df.select(*plan.columns)
    supplied = {f.name.lower() for f in df.schema.fields}
    if snapshot is not None and not replace_schema:
        refuse_explicit_identity(plan.table_schema, supplied,
                                 f"table {ref.display}, version {snapshot.version}",
                                 options.operation_name)
        data = fill_generated(data, plan.table_schema, supplied)

    metadata = _metadata(snapshot, plan, pcols, options, replace_schema, ref)
    if metadata is not None:
        stage_metadata(txn, metadata)
    effective = txn.metadata
    if snapshot is not None:
        # the commit's check, made before any data file is written (e.g. deletion vectors)
        check_writable(log.name, snapshot.version, txn.new_protocol or snapshot.protocol,
                       effective)
    return TableWrite(ref, log, snapshot, txn, plan, pcols, replace_schema, data, supplied,
                      effective, CHANGE_DATA_FEED.of(effective.configuration), started)


def _partition_columns(ref: TableRef, existing: list[str], requested: tuple[str, ...] | None,
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


def _metadata(snapshot, plan, pcols, options: WriteOptions, replace_schema, ref
              ) -> Metadata | None:
    schema_string = plan.table_schema.json()
    configuration, description = options.configuration, options.description
    if snapshot is None:
        return new_table_metadata(schema_string, pcols, configuration, ref.name, description)
    old = snapshot.metadata
    kept = (without_check_constraints(old.configuration) if options.replace_table
            else old.configuration)
    conf = {**kept, **{k: str(v) for k, v in (configuration or {}).items()}}
    new_schema = schema_string if (plan.schema_changed or replace_schema) else old.schema_string
    desc = description if (replace_schema and description is not None) else old.description
    if (new_schema, pcols, conf, desc) == (old.schema_string, old.partition_columns,
                                           old.configuration, old.description):
        return None
    return dataclasses.replace(old, schema_string=new_schema, partition_columns=pcols,
                               configuration=conf, description=desc)
