"""The rows of one Delta data file for Spark's Python data sources (``pyspark.sql.datasource``):
a partition per file (:class:`DeltaFile`) and its rows as the Arrow batches Spark expects
(:func:`read_delta_file`), read in a Python worker by the kernel's reader
(:mod:`sqlext.log.file_reader`). Served to the Thrift server's catalog source
(:mod:`sqlext.thrift.source`) and the streaming source (:mod:`sqlext.engine.streaming.source`).
"""

from __future__ import annotations

import json
from typing import Iterator

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.datasource import InputPartition

from sqlext.log.actions import AddFile, Metadata
from sqlext.log.column_mapping import MODE_KEY, ColumnMapping
from sqlext.log.file_reader import iter_logical
from sqlext.log.schema import parse_schema


class DeltaFile(InputPartition):
    """One live file of the snapshot a query reads: its full path, its partition values by
    logical column name (the log's strings), its deletion vector (the ``deletionVector`` of its
    action, or None), and the snapshot's schema (``schemaString``) and column mapping mode."""

    def __init__(self, location: str, path: str, partition_values: dict, deletion_vector,
                 schema_string: str, mode: str, version: int):
        super().__init__(path)
        self.location = location
        self.path = path
        self.partition_values = partition_values
        self.deletion_vector = deletion_vector
        self.schema_string = schema_string
        self.mode = mode
        self.version = version


def logical_schema(schema_string: str) -> T.StructType:
    """A Delta ``schemaString`` as the StructType users see: logical names, no column mapping
    metadata (nested fields included)."""
    from sqlext.engine.io.mapped_scan import logical_type
    return logical_type(T.StructType.fromJson(json.loads(schema_string)))


def read_delta_file(part: DeltaFile, schema: T.StructType) -> Iterator[pa.RecordBatch]:
    """The rows of one file in ``schema``'s columns, as Arrow record batches of the types
    Spark expects (its Arrow schema for ``schema``, timestamps in UTC), read by the kernel's
    reader (:func:`sqlext.log.file_reader.iter_logical`). Columns of ``schema`` the table has
    not (a change feed's ``_change_type``, ...) are NULL."""
    from sqlext.engine.io.scan import arrow_schema

    target = arrow_schema(schema)
    fields = parse_schema(part.schema_string)
    logical = {f.name.lower(): f.name for f in fields}
    mapping = ColumnMapping(part.mode, fields) if part.mode != "none" else None
    # the partition's values are keyed by lowercased logical names; an action's by physical ones
    values = {(mapping.physical_name(k) if mapping is not None else k): v
              for k, v in part.partition_values.items()}
    add = AddFile(part.path, values, 0, 0, deletion_vector=part.deletion_vector)
    metadata = Metadata("", part.schema_string, list(part.partition_values),
                        {MODE_KEY: part.mode})
    columns = [logical[f.name.lower()] for f in target if f.name.lower() in logical]
    for batch in iter_logical(part.location, add, metadata, columns, path=part.path,
                              version=part.version):
        arrays = []
        for out in target:
            name = logical.get(out.name.lower())
            column = batch.column(name) if name is not None else pa.nulls(batch.num_rows, out.type)
            arrays.append(column if column.type == out.type else column.cast(out.type))
        yield pa.RecordBatch.from_arrays(arrays, schema=target)
