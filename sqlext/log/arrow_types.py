"""Delta schema types (``schemaString`` JSON, :mod:`sqlext.log.schema`) as Arrow types, the
way PySpark's ``to_arrow_schema`` maps the same Spark types (timestamps in microseconds, in UTC
for ``timestamp``, none for ``timestamp_ntz``), so that batches the kernel reads need no
conversion on their way to Spark. No pyspark here.
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa

from sqlext.log.schema import Field, fields_of

_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$")
_PRIMITIVES = {
    "string": pa.string(), "long": pa.int64(), "integer": pa.int32(), "short": pa.int16(),
    "byte": pa.int8(), "float": pa.float32(), "double": pa.float64(), "boolean": pa.bool_(),
    "binary": pa.binary(), "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"), "void": pa.null(),
    # a variant's parquet form (PROTOCOL.md "Variant Data Type")
    "variant": pa.struct([("value", pa.binary()), ("metadata", pa.binary())]),
}


def arrow_type(delta_type: Any) -> pa.DataType | None:
    """The Arrow type of a Delta type (a name such as ``"decimal(10,2)"`` or a struct, array or
    map dict); None for a type the kernel has no Arrow form of (the file's own type is kept)."""
    if isinstance(delta_type, str):
        if delta_type in _PRIMITIVES:
            return _PRIMITIVES[delta_type]
        if delta_type.startswith(("char(", "varchar(")):
            return pa.string()
        m = _DECIMAL.match(delta_type)
        return pa.decimal128(int(m.group(1)), int(m.group(2))) if m else None
    if not isinstance(delta_type, dict):
        return None
    kind = delta_type.get("type")
    if kind == "struct":
        children = [arrow_field(f) for f in fields_of(delta_type)]
        return None if any(c is None for c in children) else pa.struct(children)
    if kind == "array":
        element = arrow_type(delta_type.get("elementType"))
        return None if element is None else pa.list_(element)
    if kind == "map":
        key, value = arrow_type(delta_type.get("keyType")), arrow_type(delta_type.get("valueType"))
        return None if key is None or value is None else pa.map_(key, value)
    return None


def arrow_field(field: Field) -> pa.Field | None:
    """A Delta field as an Arrow field of its logical name (None as for :func:`arrow_type`)."""
    dtype = arrow_type(field.type)
    return None if dtype is None else pa.field(field.name, dtype, nullable=field.nullable)
