"""A schema change met by the Delta stream source, as delta-spark 4.4's ``DeltaSource`` meets it.

A commit whose ``metaData`` changes the schema stops the stream when the schema the query reads
cannot read the new one's data:

- on a column-mapped table, a rename or a drop (a column id whose name changed or which is gone)
  is read-incompatible for good: ``DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG``,
  on every restart from the same checkpoint (a new checkpoint starts after it), unless the
  reader has a ``schemaTrackingLocation`` (:mod:`.schema_log`: then this module is not used);
- otherwise a data schema the read schema does not cover (an added column, a widened type) is
  ``DELTA_SCHEMA_CHANGED_WITH_VERSION``: the query restarted (a new DataFrame, reading the new
  schema) goes on from its checkpoint.

A read schema with more (nullable) columns than the data, e.g. a new stream reading commits
made before an ADD COLUMN, reads on.
"""

from __future__ import annotations

import json

from pyspark.sql import types as T

from sqlext.errors import SqlextError
from sqlext.engine.io.python_source import logical_schema

ID_KEY = "delta.columnMapping.id"
PHYSICAL_KEY = "delta.columnMapping.physicalName"


def check_schema_change(location: str, version: int, read_schema: T.StructType,
                        new_schema_string: str, previous_schema_string: str | None,
                        column_mapped: bool) -> None:
    """Raise delta-spark's error when commit ``version`` of the table at ``location`` sets the
    schema ``new_schema_string`` (a Delta ``schemaString``; the one before it
    ``previous_schema_string``, None for the table's first) that a stream reading
    ``read_schema`` cannot go on with."""
    if column_mapped and previous_schema_string is not None \
            and not _additive(previous_schema_string, new_schema_string):
        raise SqlextError(
            "[DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG] Streaming read is not "
            "supported on tables with read-incompatible schema changes (e.g. rename or drop or "
            "datatype changes).\nPlease provide a 'schemaTrackingLocation' to enable "
            "non-additive schema evolution for Delta stream processing (or start the query "
            "again with a new checkpoint directory).\nRead schema: "
            f"{previous_schema_string}. Incompatible data schema: {new_schema_string}. "
            f"(table {location}, version {version})",
            error_class="DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG",
            sqlstate="42KD4", table=location, version=version)
    data_schema = logical_schema(new_schema_string)
    if not read_compatible(data_schema, read_schema):
        raise SqlextError(
            f"[DELTA_SCHEMA_CHANGED_WITH_VERSION] Detected schema change in version {version}:\n"
            f"streaming source schema: {read_schema.treeString()}\n\n"
            f"data file schema: {data_schema.treeString()}\n\n"
            "Please try restarting the query. If this issue repeats across query restarts "
            "without\nmaking progress, you have made an incompatible schema change and need to "
            "start your\nquery from scratch using a new checkpoint directory.\n"
            f"(table {location})",
            error_class="DELTA_SCHEMA_CHANGED_WITH_VERSION", sqlstate="KD007",
            table=location, version=version)


def read_compatible(data: T.DataType, read: T.DataType) -> bool:
    """Whether rows of type ``data`` read as ``read``: every field of ``data`` is in ``read``
    (names case-insensitive) with a type that reads it, nullable where the data is; ``read``
    may have more fields."""
    if isinstance(data, T.StructType) and isinstance(read, T.StructType):
        fields = {f.name.lower(): f for f in read.fields}
        return all(
            f.name.lower() in fields and (fields[f.name.lower()].nullable or not f.nullable)
            and read_compatible(f.dataType, fields[f.name.lower()].dataType)
            for f in data.fields)
    if isinstance(data, T.ArrayType) and isinstance(read, T.ArrayType):
        return read_compatible(data.elementType, read.elementType)
    if isinstance(data, T.MapType) and isinstance(read, T.MapType):
        return (read_compatible(data.keyType, read.keyType)
                and read_compatible(data.valueType, read.valueType))
    return data == read


def _additive(before: str, after: str) -> bool:
    """Whether every column id of ``before`` is in ``after`` under the same name path (no
    rename, no drop)."""
    new = column_paths(json.loads(after))
    return all(new.get(i) == path for i, path in column_paths(json.loads(before)).items())


def column_paths(schema: dict, prefix: tuple = ()) -> dict:
    """Column mapping id -> name path of each field of a schema's JSON, nested ones included."""
    out: dict = {}
    for field in schema.get("fields", []):
        path = prefix + (field["name"].lower(),)
        if ID_KEY in field.get("metadata", {}):
            out[field["metadata"][ID_KEY]] = path
        kind = field["type"]
        while isinstance(kind, dict) and kind.get("type") in ("array", "map"):
            kind = kind.get("elementType") or kind.get("valueType")
        if isinstance(kind, dict) and kind.get("type") == "struct":
            out.update(column_paths(kind, path))
    return out


def widened_types(before: str, after: str) -> list[tuple[tuple, str, str]]:
    """(name path, old type, new type) of each column of schema JSON ``before`` whose type
    ``after`` changes (a type widening), columns matched by column mapping id when they have
    one, else by name path; the path in physical names where columns have them (as
    delta-spark's error names them); types in SQL (``INT``, ``BIGINT``, ``DECIMAL(12,2)``)."""
    old, new = _leaf_types(json.loads(before)), _leaf_types(json.loads(after))
    return [(path, _sql_type(kind), _sql_type(new[key][1])) for key, (path, kind) in old.items()
            if key in new and new[key][1] != kind]


def _leaf_types(schema: dict, prefix: tuple = ()) -> dict:
    """Column key (mapping id, else name path) -> (physical name path, type JSON) of each
    primitive column of a schema's JSON, nested struct fields included."""
    out: dict = {}
    for field in schema.get("fields", []):
        path = prefix + (field.get("metadata", {}).get(PHYSICAL_KEY) or field["name"].lower(),)
        kind = field["type"]
        if isinstance(kind, dict) and kind.get("type") == "struct":
            out.update(_leaf_types(kind, path))
        elif not isinstance(kind, dict):
            key = field.get("metadata", {}).get(ID_KEY, path)
            out[key] = (path, kind)
    return out


def _sql_type(kind: str) -> str:
    return T._parse_datatype_json_value(kind).simpleString().upper()
