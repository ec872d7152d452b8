"""``ALTER TABLE t ALTER|CHANGE COLUMN c TYPE <wider type>`` and the type widening of schema
evolution, as delta-spark 4.4 does them (the rules: :mod:`sqlext.log.type_widening`).

A widening is one metadata commit (``CHANGE COLUMN``): the field's new type, and the change
appended to its ``delta.typeChanges``; no data file is rewritten. Refusals carry delta-spark's
error conditions: ``NOT_SUPPORTED_CHANGE_COLUMN`` for a change Spark does not consider an up-cast
(``bigint`` to ``int``, ``decimal(5,2)`` to ``decimal(5,3)``), and
``DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP`` for an up-cast Delta does not widen (``bigint``
to ``double``, ``tinyint`` to ``decimal(4,1)``) or any change while ``delta.enableTypeWidening``
is not true.
"""

from __future__ import annotations

import copy
import dataclasses
import json

from pyspark.sql import SparkSession
from pyspark.sql import types as T

from sqlext.engine.commit import commit
from sqlext.engine.dml.command import begin
from sqlext.errors import AnalysisException
from sqlext.log import operations as ops
from sqlext.log import type_widening
from sqlext.log.protocol_changes import merged
from sqlext.log.table_ref import TableRef
from sqlext.log.table import DeltaLog
from sqlext.log.widening_dependents import refuse_dependent_changes


@dataclasses.dataclass
class _Target:
    """Where ``CHANGE COLUMN`` finds a field in a schema's JSON form."""
    field: dict              # the struct field holding the change's metadata
    holder: dict             # the dict holding the changed type, under ``key``
    key: str
    field_path: str | None   # the path below ``field`` (``element``, ``key``, ``value``) or None
    names: list[str]         # the path as the schema spells it (``["s", "x"]``)
    siblings: list | None    # the struct's fields the target is one of (None: element/key/value)


def change_column(spark: SparkSession, ref: TableRef, path: list[str],
                  new_type: T.DataType | None = None, comment: str | None = None,
                  position: tuple[str, str | None] | None = None) -> int:
    """``ALTER|CHANGE COLUMN`` of the column or nested field at ``path`` (``["c"]``,
    ``["s", "x"]``, ``["a", "element"]``, ``["m", "key"]``): widen it to ``new_type`` (None:
    keep its type), set its ``comment`` if given, move it within its struct to ``position``
    (``("FIRST", None)`` or ``("AFTER", name)``) if given, all in one commit, as delta-spark;
    return the version committed."""
    log = DeltaLog(ref.location, name=ref.display)
    txn, snapshot = begin(log, None, ops.ChangeColumn.name, removes_data=False)
    schema = json.loads(snapshot.metadata.schema_string)
    case_sensitive = spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true"
    target = _locate(schema, path, case_sensitive, ref, snapshot.version)
    field, holder, key = target.field, target.holder, target.key
    old = holder[key]
    new = old if new_type is None else new_type.jsonValue()
    shown = ".".join(path)
    params = {"table": ref.display, "version": snapshot.version}
    if comment is not None and target.siblings is None:
        raise AnalysisException(
            f"ALTER TABLE {ref.display} CHANGE COLUMN {shown}: can't add a comment to "
            f"{'.'.join(target.names)} (version {snapshot.version}): a map key/value or array "
            "element has no comment; comment the column instead. The table is unchanged.",
            error_class="DELTA_UNSUPPORTED_COMMENT_MAP_ARRAY", sqlstate="0AKDC",
            message_parameters={"fieldPath": ".".join(target.names)}, **params)
    if new_type is not None and (not isinstance(old, str) or not isinstance(new, str)
                                 or not type_widening.can_up_cast(old, new)):
        raise AnalysisException(
            f"ALTER TABLE {ref.display} ALTER COLUMN {shown} TYPE {new_type.simpleString()}: "
            f"changing {shown} from {_sql(old)} to {new_type.simpleString()} is not supported "
            f"(version {snapshot.version}); only widening changes are. The table is unchanged.",
            error_class="NOT_SUPPORTED_CHANGE_COLUMN", message_parameters={
                "table": ref.display, "originName": shown, "originType": _sql(old),
                "newName": shown, "newType": new_type.simpleString().upper()}, **params)
    if comment is not None:
        field.setdefault("metadata", {})["comment"] = comment
    if position is not None:
        _move(target, position, ref, snapshot.version)
    if old == new:     # the history shows the field's earlier type changes then, as delta-spark
        return _commit(spark, txn, snapshot, schema, target, position, widened=False)
    widening_on = (type_widening.enabled(snapshot.configuration)
                   and type_widening.supported(snapshot.protocol))
    if not (widening_on and type_widening.is_supported(old, new)):
        advice = ("this is not one of Delta's type widenings (byte/short/int to a wider "
                  "integer, to double or to decimal(10,0) and wider; long to decimal(20,0) "
                  "and wider; float to double; a wider decimal; date to timestamp_ntz)"
                  if widening_on else
                  "set the table property delta.enableTypeWidening = true first")
        raise AnalysisException(
            f"ALTER TABLE {ref.display} CHANGE COLUMN {shown}: changing its type from "
            f"{_sql(old)} to {new_type.simpleString()} is not supported at version "
            f"{snapshot.version}: {advice}. The table is unchanged.",
            error_class="DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP",
            message_parameters={"fieldPath": shown, "oldField": _sql(old),
                                "newField": new_type.simpleString().upper()}, **params)
    before = copy.deepcopy(schema)
    holder[key] = new
    refuse_dependent_changes(ref.display, snapshot.version, before, schema,
                             snapshot.configuration, f"ALTER TABLE {ref.display} ALTER COLUMN "
                             f"{shown} TYPE {new_type.simpleString()}")
    type_widening.record(field, old, new, target.field_path)
    if new == "timestamp_ntz":
        upgraded = merged(txn.new_protocol or snapshot.protocol, {"timestampNtz"})
        if upgraded is not None:
            txn.update_protocol(upgraded)
    return _commit(spark, txn, snapshot, schema, target, position)


def _commit(spark, txn, snapshot, schema: dict, target: _Target, position,
            widened: bool = True) -> int:
    txn.update_metadata(dataclasses.replace(
        snapshot.metadata, schema_string=json.dumps(schema, separators=(",", ":"))))
    operation = ops.ChangeColumn(_history_field(target, widened),
                                 position=_position_text(position))
    return commit(spark, txn, [], operation, metrics={})


def _history_field(target: _Target, widened: bool) -> dict:
    """The changed field as delta-spark's history names it: its dotted path (``s.x``,
    ``a.element``), its type, nullability and metadata (without ``delta.typeChanges`` when
    this commit ``widened`` it; an element, key or value has none)."""
    if target.siblings is None:
        nullable = {"elementType": "containsNull", "valueType": "valueContainsNull"}.get(
            target.key)
        return {"name": ".".join(target.names), "type": target.holder[target.key],
                "nullable": bool(target.holder.get(nullable, False)), "metadata": {}}
    field = target.field
    return {"name": ".".join(target.names), "type": field["type"],
            "nullable": field.get("nullable", True),
            "metadata": {k: v for k, v in (field.get("metadata") or {}).items()
                         if not widened or k != type_widening.TYPE_CHANGES_KEY}}


def _position_text(position) -> str | None:
    """``FIRST`` / ``AFTER c`` as delta-spark's history writes a position."""
    if position is None:
        return None
    kind, anchor = position
    return kind if anchor is None else f"{kind} {anchor}"


def _move(target: _Target, position, ref: TableRef, version: int) -> None:
    """Move the target field to ``position`` among its struct's fields."""
    kind, anchor = position
    siblings, field = target.siblings, target.field
    shown = ".".join(target.names)
    if siblings is None:
        raise AnalysisException(
            f"ALTER TABLE {ref.display} CHANGE COLUMN {shown} {_position_text(position)}: an "
            f"array element or map key/value has no position (version {version}); the table "
            "is unchanged", error_class="DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP",
            table=ref.display, version=version)
    siblings.remove(field)
    if kind == "FIRST":
        siblings.insert(0, field)
        return
    at = next((i for i, f in enumerate(siblings) if f["name"].lower() == anchor.lower()), None)
    if at is None:
        parent = target.names[:-1]
        missing = ".".join([*parent, anchor])
        raise AnalysisException(
            f"ALTER TABLE {ref.display} CHANGE COLUMN {shown} AFTER {anchor}: the table has no "
            f"column or field {missing} (version {version}); name one of "
            f"{', '.join(f['name'] for f in siblings)}. The table is unchanged.",
            error_class="UNRESOLVED_COLUMN.WITH_SUGGESTION", sqlstate="42703",
            message_parameters={"objectName": missing}, table=ref.display, version=version)
    siblings.insert(at + 1, field)


def _sql(type_json) -> str:
    return T._parse_datatype_json_value(type_json).simpleString().upper() \
        if isinstance(type_json, (str, dict)) else str(type_json)


def _locate(schema: dict, path: list[str], case_sensitive: bool, ref: TableRef,
            version: int) -> _Target:
    """The field ``path`` names in ``schema`` (an unknown name is Spark's
    ``UNRESOLVED_COLUMN``)."""
    dtype_holder, key, field, below, names, siblings = {"type": schema}, "type", None, [], [], None
    for name in path:
        dtype = dtype_holder[key]
        kind = dtype.get("type") if isinstance(dtype, dict) else None
        if kind == "struct":
            wanted = name if case_sensitive else name.lower()
            fields = dtype.get("fields") or []
            found = next((f for f in fields
                          if (f["name"] if case_sensitive else f["name"].lower()) == wanted),
                         None)
            if found is not None:
                field, dtype_holder, key, below, siblings = found, found, "type", [], fields
                names.append(found["name"])
                continue
        elif kind == "array" and name.lower() == "element":
            dtype_holder, key, siblings = dtype, "elementType", None
            below.append("element")
            names.append("element")
            continue
        elif kind == "map" and name.lower() in ("key", "value"):
            dtype_holder, key, siblings = dtype, f"{name.lower()}Type", None
            below.append(name.lower())
            names.append(name.lower())
            continue
        raise AnalysisException(
            f"ALTER TABLE {ref.display} ALTER COLUMN {'.'.join(path)}: the table has no such "
            f"column or field (version {version}); the table is unchanged",
            error_class="UNRESOLVED_COLUMN.WITH_SUGGESTION", sqlstate="42703",
            message_parameters={"objectName": ".".join(path)}, table=ref.display,
            version=version)
    return _Target(field, dtype_holder, key, ".".join(below) or None, names, siblings)
