"""Schemas on the Spark side: table schema <-> Spark types, and schema enforcement and evolution for
writes (what may be appended as is, cast up, merged in, or must be refused).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.errors import SchemaMismatchError
from sqlext.log import type_widening
from sqlext.log.generated import GENERATION_EXPRESSION, IDENTITY_PREFIX

# data types a column may be cast up to silently when written (the table's type never changes)
_UPCASTS = {
    T.ByteType: (T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType),
    T.ShortType: (T.IntegerType, T.LongType, T.FloatType, T.DoubleType),
    T.IntegerType: (T.LongType, T.DoubleType),
    T.LongType: (),
    T.FloatType: (T.DoubleType,),
}


def spark_schema(schema_string: str) -> T.StructType:
    """The Spark StructType of a Delta ``schemaString``."""
    return T.StructType.fromJson(json.loads(schema_string))


def data_schema(schema: T.StructType, partition_columns: list[str]) -> T.StructType:
    """The columns stored in data files: the table's columns without the partition columns."""
    parts = {c.lower() for c in partition_columns}
    return T.StructType([f for f in schema.fields if f.name.lower() not in parts])


def _strip(dt: T.DataType) -> T.DataType:
    """A type with nullability and metadata dropped, to compare shapes."""
    if isinstance(dt, T.StructType):
        return T.StructType([T.StructField(f.name.lower(), _strip(f.dataType)) for f in dt.fields])
    if isinstance(dt, T.ArrayType):
        return T.ArrayType(_strip(dt.elementType))
    if isinstance(dt, T.MapType):
        return T.MapType(_strip(dt.keyType), _strip(dt.valueType))
    return dt


def same_type(a: T.DataType, b: T.DataType) -> bool:
    return _strip(a) == _strip(b)


def _can_upcast(source: T.DataType, target: T.DataType) -> bool:
    if isinstance(source, T.NullType):
        return True
    if isinstance(source, T.DecimalType) and isinstance(target, T.DecimalType):
        return (target.scale >= source.scale
                and target.precision - target.scale >= source.precision - source.scale)
    if isinstance(source, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)) and isinstance(
            target, T.DecimalType):
        digits = {T.ByteType: 3, T.ShortType: 5, T.IntegerType: 10, T.LongType: 20}[type(source)]
        return target.precision - target.scale >= digits
    return isinstance(target, _UPCASTS.get(type(source), ()))


@dataclass
class WritePlan:
    """How a DataFrame is aligned to a table for a write."""

    table_schema: T.StructType          # the schema the table has after the write
    schema_changed: bool
    columns: list                       # Column expressions producing the table's columns


def widened_field(field: T.StructField, data_type: T.DataType) -> T.StructField | None:
    """``field`` widened to ``data_type`` with the change recorded in its metadata (type
    widening's schema evolution), or None when Delta does not widen that way."""
    old, new = field.dataType.jsonValue(), data_type.jsonValue()
    if old == new or not (isinstance(old, str) and isinstance(new, str)
                          and type_widening.is_supported(old, new)):
        return None
    recorded = {"metadata": dict(field.metadata or {})}
    type_widening.record(recorded, old, new)
    return T.StructField(field.name, data_type, field.nullable, recorded["metadata"])


def _merge_struct(table: T.StructType, data: T.StructType, merge: bool, where: str,
                  table_name: str, widen: bool = False) -> tuple[T.StructType, bool]:
    fields = list(table.fields)
    by_name = {f.name.lower(): i for i, f in enumerate(fields)}
    changed = False
    extra = []
    for f in data.fields:
        i = by_name.get(f.name.lower())
        if i is None:
            extra.append(f)
            continue
        tf = fields[i]
        if isinstance(tf.dataType, T.StructType) and isinstance(f.dataType, T.StructType):
            merged, sub_changed = _merge_struct(tf.dataType, f.dataType, merge,
                                                f"{where}{tf.name}.", table_name, widen)
            if sub_changed:
                fields[i] = T.StructField(tf.name, merged, tf.nullable, tf.metadata)
                changed = True
        elif not same_type(tf.dataType, f.dataType) and not _can_upcast(f.dataType, tf.dataType):
            widened = widened_field(tf, f.dataType) if widen else None
            if widened is not None and merge:
                fields[i], changed = widened, True
                continue
            if widened is not None:
                raise SchemaMismatchError(
                    f"table {table_name}: column {where}{tf.name} has type "
                    f"{tf.dataType.simpleString()} but the data has "
                    f"{f.dataType.simpleString()}; the table's type widening allows widening "
                    "it: write with mergeSchema=True (SQL: set "
                    "spark.databricks.delta.schema.autoMerge.enabled), or cast the column to "
                    "the table's type. The table is unchanged.", table=table_name)
            raise SchemaMismatchError(
                f"table {table_name}: column {where}{tf.name} has type "
                f"{tf.dataType.simpleString()} but the data has {f.dataType.simpleString()}. "
                "Cast the column to the table's type, or replace the table schema with "
                "mode='overwrite', overwriteSchema=True. The table is unchanged.",
                error_class="DELTA_FAILED_TO_MERGE_FIELDS", table=table_name,
                message_parameters={"currentField": f"{where}{tf.name}",
                                    "updateField": f"{where}{f.name}"})
    if extra:
        if not merge:
            names = ", ".join(f"{where}{f.name} {f.dataType.simpleString()}" for f in extra)
            raise SchemaMismatchError(
                f"table {table_name}: the data has column(s) the table does not have: {names}. "
                "To add them, write with mergeSchema=True (SQL: MERGE WITH SCHEMA EVOLUTION / "
                "ALTER TABLE ADD COLUMNS). The table is unchanged.", table=table_name)
        fields += [T.StructField(f.name, f.dataType, True, written_metadata(f.metadata))
                   for f in extra]
        changed = True
    return T.StructType(fields), changed


def _aligned(expr, source: T.DataType | None, target: T.DataType):
    """``expr`` (of type ``source``; None = absent) shaped as ``target``."""
    if source is None:
        return F.lit(None).cast(target)
    if isinstance(target, T.StructType) and isinstance(source, T.StructType):
        src = {f.name.lower(): f for f in source.fields}
        parts = []
        for f in target.fields:
            sf = src.get(f.name.lower())
            child = expr.getField(sf.name) if sf is not None else None
            parts.append(_aligned(child, sf.dataType if sf else None, f.dataType).alias(f.name))
        aligned = F.struct(*parts)
        return F.when(expr.isNull(), F.lit(None).cast(target)).otherwise(aligned)
    if same_type(source, target):
        return expr
    return expr.cast(target)


def written_metadata(metadata: dict | None) -> dict:
    """A data column's field metadata as a table created (or a column added) from the data
    keeps it: without generation expressions and identity properties, which belong to the table
    the data was read from (delta-spark's ``removeDefaultExpressions``)."""
    return {k: v for k, v in (metadata or {}).items()
            if k != GENERATION_EXPRESSION and not k.startswith(IDENTITY_PREFIX)}


def quote_identifier(name: str) -> str:
    """``name`` as a Spark SQL identifier taken literally (dots, backquotes and all)."""
    return "`" + name.replace("`", "``") + "`"


def quoted_column(name: str):
    """``F.col`` for a column name taken literally (dots, backquotes and all)."""
    return F.col(quote_identifier(name))


def plan_write(df: DataFrame, table_schema: T.StructType | None, merge_schema: bool,
               table_name: str, widen_types: bool = False) -> WritePlan:
    """Check ``df`` against the table's schema and build the column expressions to write.

    Missing columns are written as NULL, safe upcasts are applied, extra columns need
    ``merge_schema``; with ``widen_types`` (the table's type widening is on) and
    ``merge_schema``, a column (or struct field) whose data type is a Delta widening of the
    table's takes the data's type, the change recorded in ``delta.typeChanges``; anything else
    raises :class:`SchemaMismatchError`.
    """
    names = [f.name.lower() for f in df.schema.fields]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise SchemaMismatchError(f"table {table_name}: the data has duplicate column(s) "
                                  f"{sorted(dupes)} (column names are case-insensitive)")
    if table_schema is None:
        schema = T.StructType([T.StructField(f.name, T.StringType() if isinstance(
            f.dataType, T.NullType) else f.dataType, True, written_metadata(f.metadata))
            for f in df.schema.fields])
        return WritePlan(schema, True, [_aligned(quoted_column(f.name), f.dataType, t.dataType)
                                        .alias(f.name) for f, t in zip(df.schema.fields, schema)])
    merged, changed = _merge_struct(table_schema, df.schema, merge_schema, "", table_name,
                                    widen_types)
    source = {f.name.lower(): f for f in df.schema.fields}
    columns = []
    for f in merged.fields:
        sf = source.get(f.name.lower())
        expr = quoted_column(sf.name) if sf is not None else None
        columns.append(_aligned(expr, sf.dataType if sf else None, f.dataType).alias(f.name))
    return WritePlan(merged, changed, columns)
