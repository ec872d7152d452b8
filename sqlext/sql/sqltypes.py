"""Column definitions in SQL trees <-> Spark schemas.

SQL -> schema goes through Spark's own DDL parser (``StructType.fromDDL``) on column definitions
rendered from the tree, so every type Spark knows is read as Spark reads it, with ``NOT NULL`` and
``COMMENT``. Schema -> SQL builds ``ColumnDef`` trees (for ``SHOW CREATE TABLE``).
"""

from __future__ import annotations

import json

from pyspark.sql import SparkSession
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.engine import connect_plans
from sqlext.engine.session import is_connect
from sqlext.errors import AnalysisException, UnsupportedOperationError
from sqlext.log.generated import GENERATION_EXPRESSION, identity_metadata
from sqlext.sql.splice import render

_ALLOWED_CONSTRAINTS = (exp.NotNullColumnConstraint, exp.CommentColumnConstraint)
_GENERATION = (exp.ComputedColumnConstraint, exp.GeneratedAsIdentityColumnConstraint)


def struct_from_columns(spark: SparkSession, columns: list[exp.Expression],
                        table: str) -> T.StructType:
    """The Spark schema of ``CREATE TABLE t (<columns>)`` / ``ADD COLUMNS (<columns>)``."""
    defs = []
    generation: dict[str, dict] = {}
    for col in columns:
        if not isinstance(col, exp.ColumnDef) or col.args.get("kind") is None:
            raise AnalysisException(f"table {table}: column {col.sql(dialect='spark')} needs a "
                                    "type, e.g. (id BIGINT, name STRING)", table=table)
        kept = []
        for constraint in col.args.get("constraints") or []:
            kind = constraint.args.get("kind")
            if isinstance(kind, _GENERATION):
                if col.name in generation:
                    raise AnalysisException(f"table {table}: column {col.name} has two "
                                            "GENERATED clauses", table=table)
                generation[col.name] = _generation_metadata(col, kind, table)
                continue
            if not isinstance(kind, _ALLOWED_CONSTRAINTS):
                raise UnsupportedOperationError(
                    f"table {table}: column {col.name}: {constraint.sql(dialect='spark')} is not "
                    "supported; a column definition may have NOT NULL, COMMENT, GENERATED "
                    "ALWAYS AS (expr) and GENERATED ALWAYS | BY DEFAULT AS IDENTITY", table=table)
            kept.append(constraint)
        plain = col.copy()
        plain.set("constraints", [c.copy() for c in kept] or None)
        defs.append(plain.sql(dialect="spark"))
    try:
        if is_connect(spark):
            schema = connect_plans.ddl_schema(spark, ", ".join(defs))
        else:
            jvm_types = spark._jvm.org.apache.spark.sql.types
            schema_json = jvm_types.StructType.fromDDL(", ".join(defs)).json()
            schema = T.StructType.fromJson(json.loads(schema_json))
    except Exception as exc:  # noqa: BLE001 - Spark's parser rejects the definition
        raise AnalysisException(f"table {table}: invalid column definitions "
                                f"({', '.join(defs)}): {str(exc).splitlines()[0]}",
                                table=table) from exc
    names = [f.name.lower() for f in schema.fields]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise AnalysisException(f"table {table}: duplicate column name(s) {dupes}", table=table)
    if generation:
        schema = T.StructType([
            T.StructField(f.name, f.dataType, f.nullable,
                          {**(f.metadata or {}), **generation.get(f.name, {})})
            for f in schema.fields])
    return schema


def _generation_metadata(col: exp.ColumnDef, kind: exp.Expression, table: str) -> dict:
    """The field metadata of ``GENERATED ALWAYS AS (expr)`` (the expression as written) or of
    ``GENERATED ALWAYS | BY DEFAULT AS IDENTITY [(START WITH s INCREMENT BY n)]``."""
    if isinstance(kind, exp.ComputedColumnConstraint):
        return {GENERATION_EXPRESSION: render(kind.this).text}
    dtype = col.args["kind"]
    if not dtype.is_type(exp.DataType.Type.BIGINT):
        raise AnalysisException(f"table {table}: column {col.name}: an IDENTITY column must be "
                                f"BIGINT, not {dtype.sql(dialect='spark')} (as in delta-spark)",
                                table=table)
    start, step = (_integer(kind.args.get(k), 1, col.name, table) for k in ("start", "increment"))
    if step == 0:
        raise AnalysisException(f"table {table}: column {col.name}: IDENTITY INCREMENT BY "
                                "cannot be 0", table=table)
    return identity_metadata(start, step, allow_explicit_insert=not kind.this)


def _integer(node: exp.Expression | None, default: int, column: str, table: str) -> int:
    if node is None:
        return default
    negative = isinstance(node, exp.Neg)
    literal = node.this if negative else node
    if not isinstance(literal, exp.Literal) or literal.is_string:
        raise AnalysisException(f"table {table}: column {column}: IDENTITY START WITH and "
                                f"INCREMENT BY take integer literals, not {node.sql()}",
                                table=table)
    value = int(literal.this)
    return -value if negative else value




def column_defs(schema: T.StructType) -> list[exp.ColumnDef]:
    """``ColumnDef`` trees for a schema: name, type, NOT NULL, COMMENT."""
    defs = []
    for f in schema.fields:
        constraints = []
        if not f.nullable:
            constraints.append(exp.ColumnConstraint(kind=exp.NotNullColumnConstraint()))
        comment = (f.metadata or {}).get("comment")
        if comment:
            constraints.append(exp.ColumnConstraint(
                kind=exp.CommentColumnConstraint(this=exp.Literal.string(comment))))
        defs.append(exp.ColumnDef(this=exp.to_identifier(f.name),
                                  kind=sql_type(f.dataType),
                                  constraints=constraints or None))
    return defs


def sql_type(dt: T.DataType) -> exp.DataType:
    """The sqlglot type of a Spark type (nested field names quoted where needed)."""
    Type = exp.DataType.Type
    if isinstance(dt, T.StructType):
        fields = [exp.ColumnDef(this=exp.to_identifier(f.name), kind=sql_type(f.dataType))
                  for f in dt.fields]
        return exp.DataType(this=Type.STRUCT, expressions=fields, nested=True)
    if isinstance(dt, T.ArrayType):
        return exp.DataType(this=Type.ARRAY, expressions=[sql_type(dt.elementType)], nested=True)
    if isinstance(dt, T.MapType):
        return exp.DataType(this=Type.MAP, expressions=[sql_type(dt.keyType),
                                                        sql_type(dt.valueType)], nested=True)
    return exp.DataType.build(dt.simpleString(), dialect="spark")
