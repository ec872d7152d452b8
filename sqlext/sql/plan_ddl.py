"""``CREATE [OR REPLACE] TABLE [IF NOT EXISTS]`` of sqlext tables, with columns or ``AS SELECT``.

A table is sqlext's when it is created ``USING delta``, or without ``USING`` while the session's
``spark.sql.sources.default`` is ``delta``, or at a ``delta.`/path```. Each statement is one
commit: version 0 for a new table; ``CREATE OR REPLACE`` on an existing table commits the next
version of the same table (same id, history kept) with the new schema, partitioning, data and
properties (properties not restated are kept).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field

from pyspark.sql import SparkSession
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.catalog import TableRef
from sqlext.engine.commit import commit
from sqlext.engine.convert import require_empty_location
from sqlext.engine.post_commit import after_commit
from sqlext.engine.schemas import same_type, spark_schema
from sqlext.engine.write import DEFAULT_NEW_TABLE_CONFIGURATION, write
from sqlext.errors import (AnalysisException, ConcurrentModificationException,
                           TableAlreadyExistsError, UnsupportedOperationError)
from sqlext.log.actions import Metadata
from sqlext.log.protocol import protocol_for_new_table, upgrade_for_configuration
from sqlext.log.storage import normalize_location
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import now_ms
from sqlext.sql import plan as P
from sqlext.sql.nodes import delta_path, property_map
from sqlext.sql.plan_read import ReadPlan, plan_query
from sqlext.sql.resolve import Resolver, label, spark_name
from sqlext.sql.sqltypes import struct_from_columns

_KNOWN_PROPERTIES = (exp.FileFormatProperty, exp.PartitionedByProperty, exp.LocationProperty,
                     exp.SchemaCommentProperty)
SUPPORTED = ("CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t [(columns)] USING delta "
             "[PARTITIONED BY (cols)] [LOCATION 'path'] [COMMENT 'text'] "
             "[TBLPROPERTIES (k = v, ...)] [AS query]")


@dataclass
class CreateSpec:
    """What a CREATE TABLE statement asks for."""

    table: exp.Table
    ref: TableRef
    columns: list[exp.Expression] | None
    partition_by: list[str]
    properties: dict[str, str]
    comment: str | None
    location: str | None
    replace: bool
    if_not_exists: bool
    query: ReadPlan | None
    params: dict = field(default_factory=dict)

    @property
    def display(self) -> str:
        return self.ref.display if self.ref.name else label(self.table)


def is_delta_create(spark: SparkSession, stmt: exp.Create) -> bool:
    """Whether a CREATE TABLE makes a sqlext table."""
    table = stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this
    props = stmt.args.get("properties")
    provider = props.find(exp.FileFormatProperty) if props else None
    if provider is not None:
        return provider.name.lower() == "delta"
    if delta_path(table) is not None:
        return True
    return str(spark.conf.get("spark.sql.sources.default", "parquet")).lower() == "delta"


def plan_create_table(resolver: Resolver, stmt: exp.Create) -> P.Plan | None:
    """The plan of a CREATE TABLE that makes a sqlext table, else None."""
    if not is_delta_create(resolver.spark, stmt):
        return None
    spec = _spec(resolver, stmt)
    return P.Plan(lambda: _create(resolver, spec),
                  spec.query.sql() if spec.query else None,
                  spec.query.labels if spec.query else {})


def _spec(resolver: Resolver, stmt: exp.Create) -> CreateSpec:
    schema_node = stmt.this if isinstance(stmt.this, exp.Schema) else None
    table = schema_node.this if schema_node is not None else stmt.this
    text = label(table)
    items = stmt.args["properties"].expressions if stmt.args.get("properties") else []
    for item in items:
        if not isinstance(item, _KNOWN_PROPERTIES) and type(item) is not exp.Property:
            raise UnsupportedOperationError(
                f"CREATE TABLE {text}: {item.sql(dialect='spark')} is not supported; "
                f"supported: {SUPPORTED}")
    if any(isinstance(p, exp.TemporaryProperty) for p in items):
        raise UnsupportedOperationError(f"CREATE TABLE {text}: temporary tables are not "
                                        "supported; use a TEMPORARY VIEW")
    columns = list(schema_node.expressions) if schema_node is not None else None
    query = stmt.expression
    if columns and query is not None:
        raise AnalysisException(f"CREATE TABLE {text}: give either columns or AS SELECT, not "
                                "both (the query decides the columns)")
    location = _first(items, exp.LocationProperty)
    location = location.this.name if location is not None else None
    comment = _first(items, exp.SchemaCommentProperty)
    comment = comment.this.name if comment is not None else None
    partitioned = _first(items, exp.PartitionedByProperty)
    partition_by = []
    if partitioned is not None:
        for part in partitioned.this.expressions:
            if isinstance(part, exp.ColumnDef) and part.args.get("kind") is not None:
                if columns is None:
                    raise AnalysisException(f"CREATE TABLE {text}: typed PARTITIONED BY columns "
                                            "need a column list")
                columns.append(part)
            partition_by.append(part.name)
    if delta_path(table) is not None and location is not None:
        raise AnalysisException(f"CREATE TABLE {text}: a path table cannot have a LOCATION")
    if location is not None:
        names = resolver.schema_and_name(table)
        if names is None:
            raise AnalysisException(f"CREATE TABLE {text}: not a valid table name")
        ref = TableRef(normalize_location(location), names[0], names[1], managed=False)
    else:
        ref = resolver.ref_for(table)
    return CreateSpec(table, ref, columns, partition_by, property_map(items), comment, location,
                      bool(stmt.args.get("replace")), bool(stmt.args.get("exists")),
                      plan_query(resolver, _with_ctes(stmt, query)) if query is not None else None)


def _first(items, kind):
    return next((p for p in items if isinstance(p, kind)), None)


def _with_ctes(stmt: exp.Create, query: exp.Expression) -> exp.Expression:
    with_ = stmt.args.get("with_")
    if with_ is None:
        return query
    query = query.copy()
    query.set("with_", with_.copy())
    return query


# --- running ----------------------------------------------------------------------------------


def _create(resolver: Resolver, spec: CreateSpec):
    spark, catalog = resolver.spark, resolver.catalog
    registered = catalog.lookup(spec.ref.schema, spec.ref.name) if spec.ref.name else None
    if registered is not None and spec.location is not None \
            and registered.location != spec.ref.location and not spec.if_not_exists:
        raise TableAlreadyExistsError(f"table {registered.display} already exists at "
                                      f"{registered.location}")
    ref = registered or spec.ref
    if ref.name and not catalog.schema_exists(ref.schema):
        raise AnalysisException(f"CREATE TABLE {spec.display}: schema `{ref.schema}` not found; "
                                f"create it first (CREATE SCHEMA {ref.schema})")
    log = DeltaLog(ref.location, name=ref.display)
    exists = log.exists()
    if exists and spec.if_not_exists:
        return None
    if not exists and ref.name and not registered and _spark_has_table(spark, ref):
        if spec.if_not_exists:
            return None
        raise TableAlreadyExistsError(f"table {ref.display} already exists in Spark's catalog "
                                      "(not a sqlext table); drop it first or use another name")
    if exists and not spec.replace:
        if spec.location is not None and registered is None and spec.query is None:
            return _register_existing(resolver, spec, log)
        raise TableAlreadyExistsError(
            f"table {ref.display} already exists (version {log.snapshot().version}); use CREATE "
            "TABLE IF NOT EXISTS, CREATE OR REPLACE TABLE, or another name")
    operation = ("CREATE OR REPLACE TABLE" if spec.replace else "CREATE TABLE") + (
        " AS SELECT" if spec.query is not None else "")
    params = {"isManaged": str(bool(ref.managed and ref.name)).lower(),
              "description": spec.comment, "partitionBy": json.dumps(spec.partition_by),
              "properties": json.dumps(spec.properties)}
    try:
        if spec.query is not None:
            df = spec.query.dataframe(spark)
            write(spark, df, ref.display, "overwrite" if exists else "errorifexists",
                  partitionBy=spec.partition_by, overwriteSchema=exists,
                  configuration=spec.properties, operation=operation, operationParameters=params,
                  tableRef=ref, description=spec.comment)
        else:
            schema = _column_schema(resolver, spec)
            _commit_schema(spark, log, ref, schema, spec, operation, params)
    except ConcurrentModificationException as exc:
        if not exists:
            raise TableAlreadyExistsError(f"table {ref.display} was created by a concurrent "
                                          "writer") from exc
        raise
    if ref.name:
        after_commit(ref.display, None, "registering the table's name in the catalog",
                     lambda: catalog.register(ref))
    return None


def _spark_has_table(spark: SparkSession, ref: TableRef) -> bool:
    try:
        return bool(spark.catalog.tableExists(spark_name(ref.schema, ref.name)))
    except Exception:  # noqa: BLE001 - schema unknown to Spark
        return False


def _column_schema(resolver: Resolver, spec: CreateSpec) -> T.StructType:
    if not spec.columns:
        raise AnalysisException(f"CREATE TABLE {spec.display}: give the columns, e.g. "
                                "(id BIGINT, name STRING), or AS SELECT ...")
    return struct_from_columns(resolver.spark, spec.columns, spec.display)


def _partition_columns(spec: CreateSpec, schema: T.StructType) -> list[str]:
    names = {f.name.lower(): f.name for f in schema.fields}
    missing = [c for c in spec.partition_by if c.lower() not in names]
    if missing:
        raise AnalysisException(f"table {spec.display}: partition column(s) {missing} are not "
                                f"columns of the table ({', '.join(names.values())})")
    if len(spec.partition_by) == len(schema.fields) and schema.fields:
        raise AnalysisException(f"table {spec.display}: cannot partition by every column")
    return [names[c.lower()] for c in spec.partition_by]


def _commit_schema(spark: SparkSession, log: DeltaLog, ref: TableRef, schema: T.StructType,
                   spec: CreateSpec, operation: str, params: dict) -> int:
    """Commit a table with ``schema`` and no rows: version 0, or a replacing version."""
    pcols = _partition_columns(spec, schema)
    snapshot = log.snapshot() if log.exists() else None
    if snapshot is None:
        require_empty_location(log)            # never a table over someone's files
    txn = log.start_transaction(snapshot)
    if snapshot is None:
        conf = {**DEFAULT_NEW_TABLE_CONFIGURATION, **spec.properties}
        metadata = Metadata.new(schema.json(), pcols, conf, now_ms(), name=ref.name,
                                description=spec.comment)
        txn.update_protocol(protocol_for_new_table(conf))
        removes = []
    else:
        old = snapshot.metadata
        conf = {**old.configuration, **spec.properties}
        metadata = dataclasses.replace(old, schema_string=schema.json(), partition_columns=pcols,
                                       configuration=conf, description=spec.comment)
        upgraded = upgrade_for_configuration(snapshot.protocol, conf)
        if upgraded is not None:
            txn.update_protocol(upgraded)
        txn.read_whole_table()
        ts = now_ms()
        removes = [f.remove(ts) for f in snapshot.files]
    txn.update_metadata(metadata)
    metrics = {"numRemovedFiles": len(removes)} if snapshot is not None else {}
    return commit(spark, txn, removes, operation, params, metrics)


def _register_existing(resolver: Resolver, spec: CreateSpec, log: DeltaLog):
    """``CREATE TABLE t [(cols)] USING delta LOCATION '<existing table>'``: name it."""
    snapshot = log.snapshot()
    if spec.columns:
        wanted = struct_from_columns(resolver.spark, spec.columns, spec.display)
        actual = spark_schema(snapshot.metadata.schema_string)
        same = len(wanted.fields) == len(actual.fields) and all(
            w.name.lower() == a.name.lower() and same_type(w.dataType, a.dataType)
            for w, a in zip(wanted.fields, actual.fields))
        if not same:
            raise AnalysisException(
                f"CREATE TABLE {spec.display}: the columns given ({wanted.simpleString()}) do not "
                f"match the existing table at {spec.ref.location} ({actual.simpleString()}); "
                "omit the columns to register the table as it is")
    resolver.catalog.register(spec.ref)
    return None
