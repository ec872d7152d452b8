"""Type widening (the ``typeWidening`` table feature) as delta-spark 4.4 applies it.

With ``delta.enableTypeWidening = true`` a column's type may change to a wider one without
rewriting data: ``ALTER TABLE t ALTER COLUMN c TYPE <wider>``, or schema evolution (a write with
``mergeSchema``, or INSERT / MERGE with ``spark.databricks.delta.schema.autoMerge.enabled``).
Files written before keep their narrower physical type; readers read them as the current type
(Spark's parquet reader does that for every change below). Each change is recorded in the
changed field's metadata under ``delta.typeChanges`` (``{"toType", "fromType"}``, plus
``"fieldPath"`` — ``element``, ``key``, ``value`` — for an array element or map key / value).

The widenings (delta-spark's ``TypeWidening.isTypeChangeSupported``): byte -> short -> int ->
long; float -> double; date -> timestamp_ntz; byte / short / int -> double; decimal -> a decimal
with at least as many integer digits and at least the same scale; byte / short / int ->
decimal(10, 0) and wider; long -> decimal(20, 0) and wider. Types are Delta's schema JSON names
(``"integer"``, ``"decimal(10,2)"``); this module needs no pyspark.
"""

from __future__ import annotations

import re

from sqlext.errors import UnsupportedTableFeatureError

FEATURES = ("typeWidening", "typeWidening-preview")
ENABLE_KEY = "delta.enableTypeWidening"
TYPE_CHANGES_KEY = "delta.typeChanges"

_INTEGRAL = ("byte", "short", "integer", "long")
# the integer digits a decimal needs to hold each integral type (Spark's DecimalType.forType)
_DIGITS = {"byte": 3, "short": 5, "integer": 10, "long": 20}
_NUMERIC_ORDER = ("byte", "short", "integer", "long", "float", "double")
_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$")


def _decimal(name) -> tuple[int, int] | None:
    m = _DECIMAL.match(name) if isinstance(name, str) else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def _wider_decimal(to: tuple[int, int], integer_digits: int, scale: int) -> bool:
    return to[0] - to[1] >= integer_digits and to[1] >= scale


def can_up_cast(from_type, to_type) -> bool:
    """Spark's ``Cast.canUpCast`` for atomic types (the changes Spark's ALTER COLUMN analysis
    lets through to the table, which then accepts or refuses them)."""
    if from_type == to_type:
        return True
    if to_type == "string":
        return isinstance(from_type, str)
    if from_type in _NUMERIC_ORDER and to_type in _NUMERIC_ORDER:
        return _NUMERIC_ORDER.index(from_type) < _NUMERIC_ORDER.index(to_type)
    to_dec, from_dec = _decimal(to_type), _decimal(from_type)
    if to_dec and from_dec:
        return _wider_decimal(to_dec, from_dec[0] - from_dec[1], from_dec[1])
    if to_dec and from_type in _DIGITS:
        return _wider_decimal(to_dec, _DIGITS[from_type], 0)
    if from_dec and to_type in ("float", "double"):
        return True
    return from_type == "date" and to_type in ("timestamp", "timestamp_ntz")


def is_supported(from_type, to_type) -> bool:
    """Whether Delta's type widening allows ``from_type`` -> ``to_type`` (atomic types)."""
    if from_type == to_type:
        return True
    if not can_up_cast(from_type, to_type):
        return False
    if from_type in _INTEGRAL and to_type in _INTEGRAL:
        return True
    if (from_type, to_type) in (("float", "double"), ("date", "timestamp_ntz")):
        return True
    if from_type in ("byte", "short", "integer") and to_type == "double":
        return True
    to_dec, from_dec = _decimal(to_type), _decimal(from_type)
    if to_dec and from_dec:
        return True          # can_up_cast checked the digits and scale
    if to_dec and from_type in ("byte", "short", "integer"):
        return _wider_decimal(to_dec, 10, 0)     # all stored as INT32
    return bool(to_dec) and from_type == "long" and _wider_decimal(to_dec, 20, 0)


def enabled(configuration: dict) -> bool:
    """Whether the table property ``delta.enableTypeWidening`` is true."""
    return str(configuration.get(ENABLE_KEY, "false")).strip().lower() == "true"


def supported(protocol) -> bool:
    """Whether the protocol lists a type widening feature."""
    listed = set(protocol.reader_features or []) | set(protocol.writer_features or [])
    return any(f in listed for f in FEATURES)


def record(field: dict, from_type: str, to_type: str, field_path: str | None = None) -> None:
    """Append one change to ``field``'s (a schema JSON field) ``delta.typeChanges``."""
    change = {"toType": to_type, "fromType": from_type}
    if field_path:
        change["fieldPath"] = field_path
    metadata = field.setdefault("metadata", {})
    metadata[TYPE_CHANGES_KEY] = list(metadata.get(TYPE_CHANGES_KEY) or []) + [change]


def type_changes(schema: dict, prefix: str = "") -> list[tuple[str, dict]]:
    """Every recorded change of a schema JSON (struct), as (column path, change)."""
    out = []
    for field in schema.get("fields") or []:
        path = f"{prefix}{field['name']}"
        for change in (field.get("metadata") or {}).get(TYPE_CHANGES_KEY) or []:
            out.append((path, change))
        for nested, inner in _structs(field["type"], path):
            out += type_changes(nested, inner + ".")
    return out


def _structs(dtype, path: str):
    if isinstance(dtype, dict):
        kind = dtype.get("type")
        if kind == "struct":
            yield dtype, path
        elif kind == "array":
            yield from _structs(dtype["elementType"], path + ".element")
        elif kind == "map":
            yield from _structs(dtype["keyType"], path + ".key")
            yield from _structs(dtype["valueType"], path + ".value")


def check_readable(table: str, version: int, protocol, schema: dict) -> None:
    """Raise :class:`UnsupportedTableFeatureError` when the schema records a type change Delta
    does not define (a non-compliant writer's): old files cannot be read as the new type.
    delta-spark refuses such tables the same way (``DELTA_UNSUPPORTED_TYPE_CHANGE_IN_SCHEMA``)."""
    if not supported(protocol):
        return
    for path, change in type_changes(schema):
        old, new = change.get("fromType"), change.get("toType")
        if isinstance(old, str) and isinstance(new, str) and not is_supported(old, new) \
                and not {old, new} <= {"string"}:
            where = path + (f".{change['fieldPath']}" if change.get("fieldPath") else "")
            raise UnsupportedTableFeatureError(
                f"cannot read table {table} at version {version}: its schema records a type "
                f"change of {where} from {old} to {new}, which Delta's type widening does not "
                "allow, so files written before it cannot be read as the new type. Read it "
                "with the engine that made the change, or restore a version before it",
                error_class="DELTA_UNSUPPORTED_TYPE_CHANGE_IN_SCHEMA", table=table,
                version=version, message_parameters={"fieldName": where, "fromType": old,
                                                     "toType": new})
