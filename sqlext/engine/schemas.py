"""Schemas on the Spark side: table schema <-> Spark types, and schema enforcement and evolution for
writes (what may be appended as is, cast up, merged in, or must be refused).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.errors import SchemaMismatchError
from sqlext.log import type_widening
from sqlext.log.generated import GENERATION_EXPRESSION, IDENTITY_PREFIX
from sqlext.log.widening_dependents import refuse_evolution_widening

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


def can_upcast(source: T.DataType, target: T.DataType) -> bool:
    """Whether every value of ``source`` converts to ``target`` without loss of range (Spark's
    ``Cast.canUpCast`` for atomic types: a wider integral, floating or decimal type)."""
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
    columns: list | None                # Column expressions producing the table's columns
                                        # (None: the data's columns already are, in order)


def widened_field(field: T.StructField, data_type: T.DataType) -> T.StructField | None:
    """``field`` widened to ``data_type`` with each change recorded in ``delta.typeChanges``
    (type widening's schema evolution), or None when Delta widens nothing that way. Struct
    fields widen one by one (each records its own change; fields only the table has stay);
    an array element or map key / value records its change on ``field`` with its
    ``fieldPath``, as delta-spark does."""
    widened, changes = _widened_type(field.dataType, data_type, [])
    if widened is None:
        return None
    recorded = {"metadata": dict(field.metadata or {})}
    for field_path, old, new in changes:
        type_widening.record(recorded, old, new, field_path)
    return T.StructField(field.name, widened, field.nullable, recorded["metadata"])


def _widened_type(old: T.DataType, new: T.DataType, below: list[str]):
    """(``old`` widened towards ``new`` or None, [(fieldPath, from, to)] to record on the
    enclosing field)."""
    if isinstance(old, T.StructType) and isinstance(new, T.StructType):
        source = {f.name.lower(): f for f in new.fields}
        fields = [widened_field(f, source[f.name.lower()].dataType)
                  if f.name.lower() in source else None for f in old.fields]
        if all(f is None for f in fields):
            return None, []
        return T.StructType([w or f for w, f in zip(fields, old.fields)]), []
    if isinstance(old, T.ArrayType) and isinstance(new, T.ArrayType):
        element, changes = _widened_type(old.elementType, new.elementType, below + ["element"])
        return (T.ArrayType(element, old.containsNull) if element else None), changes
    if isinstance(old, T.MapType) and isinstance(new, T.MapType):
        key, key_changes = _widened_type(old.keyType, new.keyType, below + ["key"])
        value, value_changes = _widened_type(old.valueType, new.valueType, below + ["value"])
        if key is None and value is None:
            return None, []
        return (T.MapType(key or old.keyType, value or old.valueType, old.valueContainsNull),
                key_changes + value_changes)
    before, after = old.jsonValue(), new.jsonValue()
    if before == after or not (isinstance(before, str) and isinstance(after, str)
                               and type_widening.is_supported(before, after)):
        return None, []
    return new, [(".".join(below) or None, before, after)]


def nested_type(data_type: T.DataType, path) -> T.DataType | None:
    """The type of the struct field at ``path`` (names, case-insensitive) inside ``data_type``;
    None when there is none."""
    for name in path:
        if not isinstance(data_type, T.StructType):
            return None
        data_type = next((f.dataType for f in data_type.fields
                          if f.name.lower() == name.lower()), None)
    return data_type


def widened_at(field: T.StructField, path: list[str],
               data_type: T.DataType | None) -> T.StructField:
    """``field`` with its nested struct field at ``path`` (names below ``field``) widened to
    ``data_type`` (see :func:`widened_field`); unchanged when there is no such field (or
    ``data_type`` is None) or Delta
    does not widen it that way (a MERGE assignment ``SET s.x = src.s.x``)."""
    if data_type is None:
        return field
    if not path:
        return widened_field(field, data_type) or field
    if not isinstance(field.dataType, T.StructType):
        return field
    fields = [widened_at(f, path[1:], data_type) if f.name.lower() == path[0].lower() else f
              for f in field.dataType.fields]
    return T.StructField(field.name, T.StructType(fields), field.nullable, field.metadata)


def widened_for_insert(snapshot, schema: T.StructType, source: T.StructType,
                       targets: list[str], evolve: bool) -> T.StructType:
    """The schema a SQL INSERT's values are cast to: with schema evolution on (``evolve``: the
    session's ``spark.databricks.delta.schema.autoMerge.enabled``) and the table's type
    widening, a column whose values (``source``, in the order of ``targets``) have a type Delta
    widens it to keeps that type, so the write widens the column, as delta-spark's INSERT
    does."""
    if not (evolve and type_widening.enabled(snapshot.configuration)
            and type_widening.supported(snapshot.protocol)):
        return schema
    given = {t.lower(): f.dataType for t, f in zip(targets, source.fields)}
    return T.StructType([widened_at(f, [], given.get(f.name.lower())) for f in schema.fields])


def refuse_dependent_widening(table: str, snapshot, new_schema: T.StructType) -> None:
    """Refuse schema evolution that widens a column a CHECK constraint or a generated column
    depends on (:mod:`sqlext.log.widening_dependents`), before anything is written."""
    refuse_evolution_widening(table, snapshot.version, snapshot.metadata, dataclasses.replace(
        snapshot.metadata, schema_string=new_schema.json()))


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
        elif not same_type(tf.dataType, f.dataType) and not can_upcast(f.dataType, tf.dataType):
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
        return cast(F.lit(None), target)
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
    return cast(expr, target)


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


#: atomic types whose ``simpleString`` is SQL text Spark parses back to the same type
_SQL_NAMED = (T.BooleanType, T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType,
              T.DoubleType, T.DecimalType, T.DateType, T.TimestampType, T.TimestampNTZType,
              T.BinaryType)


def sql_type(data_type: T.DataType) -> str | None:
    """``data_type`` as Spark SQL type text (``bigint``, ``decimal(10,2)``...), or None for a
    type this does not render (nested, collated, char/varchar, intervals...). A cast to the text
    is one py4j call where a cast to the ``DataType`` takes several."""
    if type(data_type) in _SQL_NAMED or data_type == T.StringType():
        return data_type.simpleString()
    return None


def cast(column, data_type: T.DataType):
    """``column.cast(data_type)``, the same Spark expression, built with fewer py4j calls for
    the types :func:`sql_type` renders."""
    return column.cast(sql_type(data_type) or data_type)


def _already_aligned(data: T.StructType, table: T.StructType) -> bool:
    """Whether ``data``'s columns are the table's, in order, by their exact names and of types
    :func:`_aligned` leaves as they are: its projection would change nothing (and costs
    py4j round trips and an analysis per statement)."""
    return len(data.fields) == len(table.fields) and all(
        d.name == t.name and same_type(d.dataType, t.dataType)
        and not isinstance(t.dataType, T.StructType)
        for d, t in zip(data.fields, table.fields))


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
    if _already_aligned(df.schema, merged):
        return WritePlan(merged, changed, None)
    source = {f.name.lower(): f for f in df.schema.fields}
    columns = []
    for f in merged.fields:
        sf = source.get(f.name.lower())
        expr = quoted_column(sf.name) if sf is not None else None
        columns.append(_aligned(expr, sf.dataType if sf else None, f.dataType).alias(f.name))
    return WritePlan(merged, changed, columns)
