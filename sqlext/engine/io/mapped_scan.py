"""Reading the files of a column-mapped table (``delta.columnMapping.mode`` = ``name`` or ``id``):
parquet columns and partition values by physical names, rows presented by logical names.

The files are read by :func:`sqlext.engine.io.scan.read_files` in the table's *physical* schema (every
field, nested struct fields too, renamed to its ``delta.columnMapping.physicalName``; partition
columns filled from ``partitionValues`` by their physical keys), then one projection gives each
column its logical name: a plain alias for other types, a cast for types holding structs (a
struct cast keeps the values by position and takes the target's field names). In ``name`` mode
parquet columns are matched by physical name; in ``id`` mode by parquet field id, as the protocol
says (the requested fields carry ``parquet.field.id`` and the session's
``spark.sql.parquet.fieldId.read.enabled`` is switched on; it changes nothing for reads whose
schema has no field ids). Column mapping metadata is left out of the result's schema, as
delta-spark leaves it out. Tables without column mapping never come here.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from sqlext.engine.io.scan import ROW_INDEX_COLUMN, FileRead, read_files
from sqlext.engine.schemas import quoted_column
from sqlext.log.column_mapping import (FIELD_ID_KEY, ColumnMapping, physical_name,
                                       strip_mapping_metadata)
from sqlext.log.table import DeltaLog

FIELD_ID_METADATA = "parquet.field.id"
FIELD_ID_READ = "spark.sql.parquet.fieldId.read.enabled"


def _rebuilt(dt: T.DataType, make_field) -> T.DataType:
    """``dt`` with every struct field (inside arrays and maps too) replaced by
    ``make_field(field, its rebuilt type)``."""
    if isinstance(dt, T.StructType):
        return T.StructType([make_field(f, _rebuilt(f.dataType, make_field)) for f in dt.fields])
    if isinstance(dt, T.ArrayType):
        return T.ArrayType(_rebuilt(dt.elementType, make_field), dt.containsNull)
    if isinstance(dt, T.MapType):
        return T.MapType(_rebuilt(dt.keyType, make_field), _rebuilt(dt.valueType, make_field),
                         dt.valueContainsNull)
    return dt


def physical_field(field: T.StructField, dt: T.DataType, with_ids: bool) -> T.StructField:
    """A field by its physical name, of type ``dt``; ``with_ids``: carrying its column mapping
    id as the parquet field id."""
    field_id = field.metadata.get(FIELD_ID_KEY) if with_ids else None
    return T.StructField(physical_name(field.name, field.metadata), dt, field.nullable,
                         {FIELD_ID_METADATA: int(field_id)} if field_id is not None else {})


def physical_type(dt: T.DataType, with_ids: bool = False) -> T.DataType:
    """``dt`` with every struct field named by its physical name (inside arrays and maps too)."""
    return _rebuilt(dt, lambda f, t: physical_field(f, t, with_ids))


def logical_type(dt: T.DataType) -> T.DataType:
    """``dt`` as users see it: logical names, column mapping metadata removed."""
    return _rebuilt(dt, lambda f, t: T.StructField(f.name, t, f.nullable,
                                                   strip_mapping_metadata(f.metadata)))


def read_mapped_files(spark: SparkSession, log: DeltaLog, schema: T.StructType,
                      partition_columns: list[str], files: list[FileRead],
                      mapping: ColumnMapping | None,
                      extra_fields: list[T.StructField] = (),
                      version: int | None = None, row_index: bool = False) -> DataFrame:
    """:func:`sqlext.engine.io.scan.read_files` for a table with column ``mapping`` (``schema`` and
    ``partition_columns`` logical, each :class:`FileRead`'s partition values as the log keys
    them); without a mapping, exactly :func:`read_files`. Fields of ``schema`` that carry no
    physical name (e.g. a change file's ``_change_type``) are read by their own name;
    ``row_index`` adds each row's position in its file, as :func:`read_files` does."""
    if mapping is None:
        return read_files(spark, log, schema, partition_columns, files, extra_fields, version,
                          row_index=row_index)
    with_ids = mapping.mode == "id"
    if with_ids and spark.conf.get(FIELD_ID_READ, "false").lower() != "true":
        spark.conf.set(FIELD_ID_READ, "true")
    physical = T.StructType([physical_field(f, physical_type(f.dataType, with_ids), with_ids)
                             for f in schema.fields])
    df = read_files(spark, log, physical, [mapping.physical_name(c) for c in partition_columns],
                    files, extra_fields, version, row_index=row_index)
    columns = []
    for stored, field in zip(physical.fields, schema.fields):
        target = logical_type(field.dataType)
        column = quoted_column(stored.name)
        if target != stored.dataType:
            column = column.cast(target)
        columns.append(column.alias(field.name, metadata=strip_mapping_metadata(field.metadata)))
    columns += [quoted_column(f.name) for f in extra_fields]
    if row_index:
        columns.append(quoted_column(ROW_INDEX_COLUMN))
    return df.select(*columns)
