"""``CREATE [OR REPLACE] TABLE [IF NOT EXISTS]`` of sqlext tables, with columns or ``AS SELECT``.

A table is sqlext's when it is created ``USING delta``, or without ``USING`` while the session's
``spark.sql.sources.default`` is ``delta``, or at a ``delta.`/path```. Each statement is one
commit: version 0 for a new table; ``CREATE OR REPLACE`` on an existing table commits the next
version of the same table (same id, history kept) with the new schema, partitioning, data and
properties (properties not restated are kept). This module translates the statement; the table is
created by :func:`sqlext.names.create_table`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import SparkSession
from sqlglot import exp

from sqlext.catalog import TableRef
from sqlext.engine.ddl import TableDefinition
from sqlext.names import create_table
from sqlext.errors import AnalysisException, UnsupportedOperationError
from sqlext.log.storage import normalize_location
from sqlext.sql import plan as P
from sqlext.sql.nodes import delta_path, property_map
from sqlext.sql.plan_read import ReadPlan, plan_query
from sqlext.sql.resolve import Resolver, label
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
    return P.Plan(lambda: _run(resolver, spec),
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
                f"supported: {SUPPORTED}", table=text)
    if any(isinstance(p, exp.TemporaryProperty) for p in items):
        raise UnsupportedOperationError(f"CREATE TABLE {text}: temporary tables are not "
                                        "supported; use a TEMPORARY VIEW", table=text)
    columns = list(schema_node.expressions) if schema_node is not None else None
    query = stmt.expression
    if columns and query is not None:
        raise AnalysisException(f"CREATE TABLE {text}: give either columns or AS SELECT, not "
                                "both (the query decides the columns)", table=text)
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
                                            "need a column list", table=text)
                columns.append(part)
            partition_by.append(part.name)
    if delta_path(table) is not None and location is not None:
        raise AnalysisException(f"CREATE TABLE {text}: a path table cannot have a LOCATION",
                                table=text)
    if location is not None:
        names = resolver.schema_and_name(table)
        if names is None:
            raise AnalysisException(f"CREATE TABLE {text}: not a valid table name", table=text)
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


def _run(resolver: Resolver, spec: CreateSpec) -> None:
    """Run the statement: the column list becomes a schema, the query a DataFrame built only
    once the engine knows the table is written."""
    schema = (struct_from_columns(resolver.spark, spec.columns, spec.display)
              if spec.columns else None)
    query = (lambda: spec.query.dataframe(resolver.spark)) if spec.query is not None else None
    definition = TableDefinition(schema, query, spec.partition_by, spec.properties, spec.comment,
                                 external=spec.location is not None)
    create_table(resolver.spark, spec.ref, definition, replace=spec.replace,
                 if_not_exists=spec.if_not_exists, display=spec.display)
