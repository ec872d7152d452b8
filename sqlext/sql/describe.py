"""DESCRIBE HISTORY | DETAIL | [EXTENDED] t, SHOW TABLES, SHOW TBLPROPERTIES, SHOW CREATE TABLE.

Results have the columns Spark and delta-spark give: ``col_name, data_type, comment`` for
DESCRIBE, ``namespace, tableName, isTemporary`` for SHOW TABLES, ``key, value`` for SHOW
TBLPROPERTIES, ``createtab_stmt`` for SHOW CREATE TABLE. They are local relations: fetching one
runs no Spark job (dbt describes every relation it builds).
"""

from __future__ import annotations

import re

from pyspark.sql import SparkSession
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.tables import DeltaTable
from sqlext.catalog import TableRef
from sqlext.engine.io.scan import local_frame
from sqlext.engine.schemas import spark_schema
from sqlext.errors import AnalysisException, TableNotFoundError, UnsupportedOperationError
from sqlext.log.table import DeltaLog
from sqlext.sql import nodes
from sqlext.sql import plan as P
from sqlext.sql.plan_read import plan_reads, view_query
from sqlext.sql.resolve import Kind, Resolver, label
from sqlext.sql.sqltypes import column_defs

_STR = T.StringType()
DESCRIBE_SCHEMA = T.StructType([T.StructField("col_name", _STR), T.StructField("data_type", _STR),
                                T.StructField("comment", _STR)])
SHOW_TABLES_SCHEMA = T.StructType([T.StructField("namespace", _STR),
                                   T.StructField("tableName", _STR),
                                   T.StructField("isTemporary", T.BooleanType())])
PROPERTIES_SCHEMA = T.StructType([T.StructField("key", _STR), T.StructField("value", _STR)])
CREATE_SCHEMA = T.StructType([T.StructField("createtab_stmt", _STR)])


def _table_ref(resolver: Resolver, table: exp.Table, verb: str,
               required: bool = True) -> TableRef | None:
    target = resolver.resolve(table)
    if target.kind is Kind.TABLE:
        return target.ref
    if not required:
        return None
    what = "a view" if target.kind is Kind.VIEW else "not a sqlext (Delta) table"
    raise TableNotFoundError(f"{verb} {label(table)}: {label(table)} is {what}; {verb} works on "
                             "sqlext tables (names in sqlext's catalog, or delta.`/path`)",
                             table=label(table))


def plan_history(resolver: Resolver, stmt: nodes.DescribeHistory) -> P.Plan:
    ref = _table_ref(resolver, stmt.this, "DESCRIBE HISTORY")
    limit = stmt.args.get("limit")
    n = int(limit.to_py()) if limit is not None else None
    return P.Plan(lambda: _delta_table(resolver.spark, ref).history(n))


def plan_detail(resolver: Resolver, stmt: nodes.DescribeDetail) -> P.Plan:
    ref = _table_ref(resolver, stmt.this, "DESCRIBE DETAIL")
    return P.Plan(lambda: _delta_table(resolver.spark, ref).detail())


def _delta_table(spark: SparkSession, ref: TableRef) -> DeltaTable:
    return DeltaTable(spark, ref).require()


# --- DESCRIBE [EXTENDED] ----------------------------------------------------------------------


def plan_describe(resolver: Resolver, stmt: exp.Describe) -> P.Plan | None:
    table = stmt.this
    if not isinstance(table, exp.Table) or stmt.args.get("partition"):
        return None
    target = resolver.resolve(table)
    spark = resolver.spark
    extended = str(stmt.args.get("style") or "").upper() in ("EXTENDED", "FORMATTED")
    if target.kind is Kind.VIEW:
        view = target.view
        # the view's own query (the columns renamed as the view names them): the text CREATE
        # VIEW analysed, so its remembered columns answer (ReadPlan.schema)
        body = plan_reads(resolver, view_query(view.query))
        reads = body or plan_reads(resolver, exp.select("*").from_(table.copy()))

        def run_view():
            schema = reads.schema(spark)
            if body is not None and view.columns:
                schema = T.StructType([T.StructField(name, f.dataType, f.nullable, f.metadata)
                                       for name, f in zip(view.columns, schema.fields)])
            rows = _column_rows(schema)
            if view.column_comments:
                rows = [(name, dtype, comment if comment is not None else own)
                        for (name, dtype, own), comment in zip(rows, view.column_comments)]
            if extended:
                rows += [("", "", None), ("# Detailed Table Information", "", None),
                         ("Table", view.name, None),
                         ("Type", "VIEW" if not view.temporary else "TEMPORARY VIEW", None)]
                if view.comment:
                    rows.append(("Comment", view.comment, None))
                rows.append(("View Text", view.query, None))
            return local_frame(spark, rows, DESCRIBE_SCHEMA)

        return P.Plan(run_view, reads.sql(), reads.labels)
    if target.kind is not Kind.TABLE:
        return None
    ref = target.ref
    return P.Plan(lambda: _describe_table(spark, ref, extended))


def _column_rows(schema: T.StructType) -> list[tuple]:
    return [(f.name, f.dataType.simpleString(), (f.metadata or {}).get("comment"))
            for f in schema.fields]


def _describe_table(spark: SparkSession, ref: TableRef, extended: bool):
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    schema = spark_schema(snapshot.metadata.schema_string)
    rows = _column_rows(schema)
    if snapshot.partition_columns:
        types = {f.name.lower(): f for f in schema.fields}
        rows += [("# Partition Information", "", None), ("# col_name", "data_type", "comment")]
        rows += _column_rows(T.StructType([types[c.lower()] for c in snapshot.partition_columns]))
    if extended:
        md = snapshot.metadata
        props = ",".join(f"{k}={v}" for k, v in sorted(snapshot.configuration.items()))
        rows += [("", "", None), ("# Detailed Table Information", "", None)]
        if ref.name:
            rows += [("Catalog", "spark_catalog", None), ("Database", ref.schema, None),
                     ("Table", ref.name, None)]
        rows += [("Type", "MANAGED" if ref.managed and ref.name else "EXTERNAL", None),
                 ("Location", ref.location, None), ("Provider", "delta", None)]
        if md.description:
            rows.append(("Comment", md.description, None))
        rows += [("Table Properties", f"[{props}]", None),
                 ("Version", str(snapshot.version), None)]
    return local_frame(spark, rows, DESCRIBE_SCHEMA)


# --- SHOW -------------------------------------------------------------------------------------


def like_matcher(pattern: str | None):
    """Spark's SHOW ... LIKE: ``*`` matches anything, ``|`` separates alternatives, case-blind."""
    if pattern is None:
        return lambda name: True
    regexes = [re.compile("(?i)" + part.strip().replace("*", ".*"))
               for part in pattern.split("|")]
    return lambda name: any(r.fullmatch(name) for r in regexes)


def plan_show_tables(resolver: Resolver, stmt: nodes.ShowTables) -> P.Plan:
    spark, catalog = resolver.spark, resolver.catalog
    db = stmt.args.get("db")
    schema = (db.text("db") or db.name).lower() if db is not None else None
    like = stmt.args.get("like")
    matches = like_matcher(like.to_py() if like is not None else None)
    rendered = stmt.sql(dialect="sqlext")

    def run():
        name = schema or resolver.current_schema()
        rows: dict[tuple[str, str], bool] = {}
        spark_has = _spark_database_exists(spark, name)
        if spark_has:
            for row in P.spark_sql(spark, rendered).collect():
                rows[(row[0], row[1])] = bool(row[2])
        sqlext_has = name in catalog.list_schemas()
        if not spark_has and not sqlext_has:
            raise AnalysisException(f"SHOW TABLES: schema `{name}` not found")
        for table in catalog.list_tables(name) + resolver.views.persistent_views(name):
            if matches(table):
                rows[(name, table)] = False
        for view in resolver.views.temporary_views():
            if matches(view.name):
                rows[("", view.name)] = True
        out = sorted(((ns, t, tmp) for (ns, t), tmp in rows.items()), key=lambda r: (r[2], r[1]))
        return local_frame(spark, out, SHOW_TABLES_SCHEMA)

    return P.Plan(run, rendered)


def _spark_database_exists(spark: SparkSession, name: str) -> bool:
    try:
        return bool(spark.catalog.databaseExists(name))
    except Exception:  # noqa: BLE001
        return False


def plan_show_tblproperties(resolver: Resolver, stmt: nodes.ShowTblProperties) -> P.Plan | None:
    ref = _table_ref(resolver, stmt.this, "SHOW TBLPROPERTIES", required=False)
    if ref is None:
        return None
    key = stmt.args.get("key")
    key = key.to_py() if key is not None else None
    spark = resolver.spark

    def run():
        snapshot = DeltaLog(ref.location, name=ref.display).snapshot()
        props = dict(snapshot.configuration)
        props["delta.minReaderVersion"] = str(snapshot.protocol.min_reader_version)
        props["delta.minWriterVersion"] = str(snapshot.protocol.min_writer_version)
        if key is not None:
            value = props.get(key, f"Table {ref.qualified_name or ref.location} does not have "
                                   f"property: {key}")
            rows = [(key, value)]
        else:
            rows = sorted(props.items())
        return local_frame(spark, rows, PROPERTIES_SCHEMA)

    return P.Plan(run)


def plan_show_create_table(resolver: Resolver, stmt: nodes.ShowCreateTable) -> P.Plan | None:
    ref = _table_ref(resolver, stmt.this, "SHOW CREATE TABLE", required=False)
    if ref is None:
        return None
    if stmt.args.get("as_serde"):
        raise UnsupportedOperationError("SHOW CREATE TABLE ... AS SERDE is for Hive tables; use "
                                        "SHOW CREATE TABLE t", table=ref.display)
    spark = resolver.spark
    table = stmt.this.copy()
    return P.Plan(lambda: local_frame(
        spark, [(create_statement(ref, table),)], CREATE_SCHEMA))


def create_statement(ref: TableRef, table: exp.Table) -> str:
    """A CREATE TABLE statement that makes a table like ``ref``'s current version."""
    snapshot = DeltaLog(ref.location, name=ref.display).snapshot()
    md = snapshot.metadata
    if ref.name:
        name = exp.Table(this=exp.to_identifier(ref.name), db=exp.to_identifier(ref.schema))
    else:
        name = exp.Table(this=exp.to_identifier(ref.location, quoted=True),
                         db=exp.to_identifier("delta"))
    props: list[exp.Expression] = [exp.FileFormatProperty(this=exp.var("delta"))]
    if snapshot.partition_columns:
        props.append(exp.PartitionedByProperty(this=exp.Schema(
            expressions=[exp.to_identifier(c) for c in snapshot.partition_columns])))
    if ref.name and not ref.managed:
        props.append(exp.LocationProperty(this=exp.Literal.string(ref.location)))
    if md.description:
        props.append(exp.SchemaCommentProperty(this=exp.Literal.string(md.description)))
    if snapshot.configuration:
        props += [exp.Property(this=exp.Literal.string(k), value=exp.Literal.string(v))
                  for k, v in sorted(snapshot.configuration.items())]
    create = exp.Create(
        this=exp.Schema(this=name, expressions=column_defs(spark_schema(md.schema_string))),
        kind="TABLE", properties=exp.Properties(expressions=props))
    return create.sql(dialect="spark")
