"""Delta table schemas (the ``schemaString`` JSON, which is Spark's StructType JSON) in pure Python,
and partition values: how a typed value is written in ``partitionValues`` and read back.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
from dataclasses import dataclass
from typing import Any



@dataclass(frozen=True)
class Field:
    name: str
    type: Any            # a primitive type name ("long", "decimal(10,2)") or a dict (struct/array/map)
    nullable: bool = True
    metadata: dict | None = None

    @property
    def is_struct(self) -> bool:
        return isinstance(self.type, dict) and self.type.get("type") == "struct"

    def children(self) -> list["Field"]:
        """The fields of a struct-typed field (empty for any other type)."""
        return fields_of(self.type) if self.is_struct else []


def fields_of(struct: dict) -> list[Field]:
    """The fields of a struct type given as a decoded JSON dict."""
    return [Field(f["name"], f["type"], f.get("nullable", True), f.get("metadata") or {})
            for f in struct.get("fields", [])]


def parse_schema(schema_string: str) -> list[Field]:
    """The top-level fields of a ``schemaString``."""
    return fields_of(json.loads(schema_string))


def schema_string(fields: list[Field]) -> str:
    """Render fields back to a ``schemaString`` (compact, as Spark writes it)."""
    return json.dumps({"type": "struct", "fields": [
        {"name": f.name, "type": f.type, "nullable": f.nullable, "metadata": f.metadata or {}}
        for f in fields]}, separators=(",", ":"))


# --- partition values -----------------------------------------------------------------------------

_UTC = _dt.timezone.utc


def format_partition_value(value: Any, type_name: Any) -> str | None:
    """The ``partitionValues`` string for a typed value (None for null), as delta-spark writes it."""
    if value is None:
        return None
    if type_name == "boolean":
        return "true" if value else "false"
    if type_name in ("timestamp", "timestamp_ntz"):
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None:
                value = value.astimezone(_UTC).replace(tzinfo=None)
            text = value.strftime("%Y-%m-%d %H:%M:%S")
            return text + (f".{value.microsecond:06d}" if value.microsecond else "")
        return str(value)
    if type_name == "date" and isinstance(value, _dt.date):
        return value.isoformat()
    if type_name == "binary" and isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("latin-1")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    return str(value)


def parse_partition_value(text: str | None, type_name: Any) -> Any:
    """The typed Python value of a ``partitionValues`` string (None for null).

    Timestamps come back as naive UTC datetimes for ``timestamp`` (the log stores them in UTC
    when written by sqlext; older writers used the session time zone, which cannot be known).
    An empty string is null for every type, string included (the protocol's rule; delta-rs
    writes ``""`` for an empty string partition value and it, DuckDB and Spark read it as null).
    """
    if text is None or text == "":
        return None
    if type_name == "string":
        return text
    if type_name in ("byte", "short", "integer", "long"):
        return int(text)
    if type_name in ("float", "double"):
        return float(text)
    if type_name == "boolean":
        return text.lower() == "true"
    if type_name == "date":
        return _dt.date.fromisoformat(text[:10])
    if type_name in ("timestamp", "timestamp_ntz"):
        return parse_timestamp_text(text)
    if isinstance(type_name, str) and type_name.startswith("decimal"):
        return decimal.Decimal(text)
    if type_name == "binary":
        return text.encode("latin-1")
    return text


def partition_value(text: str | None, type_name: Any) -> Any:
    """A ``partitionValues`` string as the value Arrow and Spark take for its Delta type: as
    :func:`parse_partition_value`, with ``timestamp`` values aware datetimes in UTC (the one
    place partition values are typed for reading)."""
    value = parse_partition_value(text, type_name)
    if type_name == "timestamp" and isinstance(value, _dt.datetime):
        value = value.replace(tzinfo=_UTC)
    return value


def parse_timestamp_text(text: str) -> _dt.datetime:
    """Parse ``2021-01-01 10:00:00[.ffffff][Z|+hh:mm]`` or ISO ``T`` forms to a naive UTC datetime."""
    t = text.strip().replace("T", " ")
    if t.endswith("Z"):
        t = t[:-1] + "+00:00"
    value = _dt.datetime.fromisoformat(t)
    if value.tzinfo is not None:
        value = value.astimezone(_UTC).replace(tzinfo=None)
    return value
