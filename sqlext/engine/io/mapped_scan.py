"""Reading the files of a column-mapped table (``delta.columnMapping.mode`` = ``name`` or ``id``):
parquet columns and partition values by physical names, rows presented by logical names.

The files are read by :func:`sqlext.engine.io.scan.read_files` in the table's *physical* schema (every
field, nested struct fields too, renamed to its ``delta.columnMapping.physicalName``; partition
columns filled from ``partitionValues`` by their physical keys), then one projection gives each
column its logical name: a plain alias for other types, a cast for types holding structs (a
struct cast keeps the values by position and takes the target's field names). delta-spark
writes the physical names in both modes (``id`` mode adds parquet field ids), so files are
matched by name. Column mapping metadata is left out of the result's schema, as delta-spark
leaves it out. Tables without column mapping never come here.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine.io.scan import FileRead, read_files
from sqlext.log.column_mapping import ColumnMapping, physical_name, strip_mapping_metadata
from sqlext.log.table import DeltaLog


def physical_type(dt: T.DataType) -> T.DataType:
    """``dt`` with every struct field named by its physical name (inside arrays and maps too)."""
    if isinstance(dt, T.StructType):
        return T.StructType([T.StructField(physical_name(f.name, f.metadata),
                                           physical_type(f.dataType), f.nullable)
                             for f in dt.fields])
    if isinstance(dt, T.ArrayType):
        return T.ArrayType(physical_type(dt.elementType), dt.containsNull)
    if isinstance(dt, T.MapType):
        return T.MapType(physical_type(dt.keyType), physical_type(dt.valueType),
                         dt.valueContainsNull)
    return dt


def logical_type(dt: T.DataType) -> T.DataType:
    """``dt`` as users see it: logical names, column mapping metadata removed."""
    if isinstance(dt, T.StructType):
        return T.StructType([T.StructField(f.name, logical_type(f.dataType), f.nullable,
                                           strip_mapping_metadata(f.metadata))
                             for f in dt.fields])
    if isinstance(dt, T.ArrayType):
        return T.ArrayType(logical_type(dt.elementType), dt.containsNull)
    if isinstance(dt, T.MapType):
        return T.MapType(logical_type(dt.keyType), logical_type(dt.valueType),
                         dt.valueContainsNull)
    return dt


def read_mapped_files(spark: SparkSession, log: DeltaLog, schema: T.StructType,
                      partition_columns: list[str], files: list[FileRead],
                      mapping: ColumnMapping | None,
                      extra_fields: list[T.StructField] = ()) -> DataFrame:
    """:func:`sqlext.engine.io.scan.read_files` for a table with column ``mapping`` (``schema`` and
    ``partition_columns`` logical, each :class:`FileRead`'s partition values as the log keys
    them); without a mapping, exactly :func:`read_files`. Fields of ``schema`` that carry no
    physical name (e.g. a change file's ``_change_type``) are read by their own name."""
    if mapping is None:
        return read_files(spark, log, schema, partition_columns, files, extra_fields)
    physical = T.StructType([T.StructField(physical_name(f.name, f.metadata),
                                           physical_type(f.dataType), f.nullable)
                             for f in schema.fields])
    df = read_files(spark, log, physical, [mapping.physical_name(c) for c in partition_columns],
                    files, extra_fields)
    columns = []
    for stored, field in zip(physical.fields, schema.fields):
        target = logical_type(field.dataType)
        column = F.col(_quoted(stored.name))
        if target != stored.dataType:
            column = column.cast(target)
        columns.append(column.alias(field.name, metadata=strip_mapping_metadata(field.metadata)))
    columns += [F.col(_quoted(f.name)) for f in extra_fields]
    return df.select(*columns)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
