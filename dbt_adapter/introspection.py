"""``SHOW TABLE EXTENDED [IN schema] LIKE 'pattern'`` answered for sqlext tables and views.

dbt-spark lists a schema's relations with this statement and reads each relation's type,
provider and columns from its ``information`` text. Spark's own answer knows only the tables in
Spark's catalog, so this module answers it from sqlext's catalog (tables with ``Provider: delta``,
and the views sqlext keeps), merged with Spark's rows for what Spark's catalog holds in that
schema. Columns and rows are Spark's: ``namespace, tableName, isTemporary, information``.

:func:`statement_handler` recognises the statement; the connection routes it here instead of to
``sqlext.sql`` (whose runner does not implement it).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from sqlglot.tokens import TokenType

from sqlext.catalog import Catalog
from sqlext.engine.schemas import spark_schema
from sqlext.errors import AnalysisException, SqlextError
from sqlext.log.table import DeltaLog
from sqlext.sql.describe import like_matcher
from sqlext.sql.dialect import Sqlext
from sqlext.sql.statement_text import strip_leading_comments
from sqlext.catalog import ViewStore

RESULT_SCHEMA = T.StructType([
    T.StructField("namespace", T.StringType(), False),
    T.StructField("tableName", T.StringType(), False),
    T.StructField("isTemporary", T.BooleanType(), False),
    T.StructField("information", T.StringType(), False),
])


def statement_handler(text: str) -> Callable[[SparkSession], DataFrame] | None:
    """A function answering ``text`` when it is ``SHOW TABLE EXTENDED ...``, else None."""
    head = strip_leading_comments(text)[:40].upper().split()
    if head[:3] != ["SHOW", "TABLE", "EXTENDED"]:
        return None
    tokens = [t for t in Sqlext().tokenize(text) if t.token_type != TokenType.SEMICOLON]
    rest = tokens[3:]
    schema = pattern = None
    if len(rest) >= 2 and rest[0].text.upper() in ("IN", "FROM"):
        schema, rest = rest[1].text, rest[2:]
    if len(rest) >= 2 and rest[0].text.upper() == "LIKE" and rest[1].token_type == TokenType.STRING:
        pattern, rest = rest[1].text, rest[2:]
    if rest:                      # PARTITION (...) and other forms: Spark's own statement
        return None
    return lambda spark: show_table_extended(spark, schema, pattern)


def show_table_extended(spark: SparkSession, schema: str | None, pattern: str | None) -> DataFrame:
    """Spark's ``SHOW TABLE EXTENDED`` rows for the relations of ``schema`` matching ``pattern``."""
    catalog = Catalog(spark)
    schema = (schema or catalog.current_schema()).lower()
    matches = like_matcher(pattern)
    rows: dict[str, tuple] = {}
    spark_has = _spark_has_schema(spark, schema)
    if spark_has:
        for row in spark.sql(_spark_statement(schema, pattern)).collect():
            if not row["isTemporary"]:
                rows[row["tableName"]] = (row["namespace"], row["tableName"], False,
                                          row["information"])
    if not spark_has and schema not in catalog.list_schemas():
        raise AnalysisException(f"[SCHEMA_NOT_FOUND] The schema `{schema}` cannot be found "
                                "(SHOW TABLE EXTENDED)")
    for name in catalog.list_tables(schema):
        if matches(name):
            info = table_information(spark, catalog, schema, name)
            if info is not None:
                rows[name] = (schema, name, False, info)
    views = ViewStore(spark, catalog)
    for name in views.persistent_views(schema):
        if matches(name):
            view = views.persistent(schema, name)
            rows[name] = (schema, name, False, _lines([
                ("Catalog", "spark_catalog"), ("Database", schema), ("Table", name),
                ("Type", "VIEW"), ("View Text", view.query if view else "")]))
    return spark.createDataFrame([rows[k] for k in sorted(rows)], RESULT_SCHEMA)


def table_information(spark: SparkSession, catalog: Catalog, schema: str, name: str) -> str | None:
    """The ``information`` text of a sqlext table, or None when its log is gone."""
    ref = catalog.lookup(schema, name)
    if ref is None:
        return None
    try:
        snapshot = DeltaLog(ref.location, name=ref.display).snapshot()
    except SqlextError:
        return None
    md = snapshot.metadata
    fields = [("Catalog", "spark_catalog"), ("Database", schema), ("Table", name)]
    if md.created_time:
        created = dt.datetime.fromtimestamp(md.created_time / 1000, dt.timezone.utc)
        fields.append(("Created Time", created.strftime("%a %b %d %H:%M:%S UTC %Y")))
    fields += [("Type", "MANAGED" if ref.managed else "EXTERNAL"), ("Provider", "delta"),
               ("Location", ref.location)]
    if md.description:
        fields.append(("Comment", md.description))
    props = ", ".join(f"{k}={v}" for k, v in sorted(snapshot.configuration.items()))
    fields.append(("Table Properties", f"[{props}]"))
    if snapshot.partition_columns:
        fields.append(("Partition Columns",
                       "[" + ", ".join(f"`{c}`" for c in snapshot.partition_columns) + "]"))
    return _lines(fields) + "Schema: root\n" + schema_lines(spark_schema(md.schema_string))


def schema_lines(schema: T.StructType) -> str:
    """The top-level columns as Spark's tree lines, with SQL type names (``bigint``, not
    ``long``) so that dbt's catalog shows the types ``describe`` shows."""
    return "".join(f" |-- {f.name}: {f.dataType.simpleString()} "
                   f"(nullable = {str(f.nullable).lower()})\n" for f in schema.fields)


def _lines(fields: list[tuple[str, str]]) -> str:
    return "".join(f"{k}: {v}\n" for k, v in fields)


def _spark_has_schema(spark: SparkSession, schema: str) -> bool:
    try:
        return bool(spark.catalog.databaseExists(schema))
    except Exception:  # noqa: BLE001
        return False


def _spark_statement(schema: str, pattern: str | None) -> str:
    from sqlglot import exp

    db = exp.to_identifier(schema, quoted=True).sql(dialect="spark")
    like = exp.Literal.string(pattern if pattern is not None else "*").sql(dialect="spark")
    return f"SHOW TABLE EXTENDED IN {db} LIKE {like}"
