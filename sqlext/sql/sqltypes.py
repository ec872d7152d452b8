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

_ALLOWED_CONSTRAINTS = (exp.NotNullColumnConstraint, exp.CommentColumnConstraint)


def struct_from_columns(spark: SparkSession, columns: list[exp.Expression],
                        table: str) -> T.StructType:
    """The Spark schema of ``CREATE TABLE t (<columns>)`` / ``ADD COLUMNS (<columns>)``."""
    defs = []
    for col in columns:
        if not isinstance(col, exp.ColumnDef) or col.args.get("kind") is None:
            raise AnalysisException(f"table {table}: column {col.sql(dialect='spark')} needs a "
                                    "type, e.g. (id BIGINT, name STRING)")
        for constraint in col.args.get("constraints") or []:
            if not isinstance(constraint.args.get("kind"), _ALLOWED_CONSTRAINTS):
                raise UnsupportedOperationError(
                    f"table {table}: column {col.name}: {constraint.sql(dialect='spark')} is not "
                    "supported; a column definition may have NOT NULL and COMMENT")
        defs.append(col.sql(dialect="spark"))
    try:
        if is_connect(spark):
            schema = connect_plans.ddl_schema(spark, ", ".join(defs))
        else:
            jvm_types = spark._jvm.org.apache.spark.sql.types
            schema_json = jvm_types.StructType.fromDDL(", ".join(defs)).json()
            schema = T.StructType.fromJson(json.loads(schema_json))
    except Exception as exc:  # noqa: BLE001 - Spark's parser rejects the definition
        raise AnalysisException(f"table {table}: invalid column definitions "
                                f"({', '.join(defs)}): {str(exc).splitlines()[0]}") from exc
    names = [f.name.lower() for f in schema.fields]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise AnalysisException(f"table {table}: duplicate column name(s) {dupes}")
    return schema


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
