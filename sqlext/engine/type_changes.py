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


def change_column_type(spark: SparkSession, ref: TableRef, path: list[str],
                       new_type: T.DataType, comment: str | None = None) -> int:
    """Widen the column or nested field at ``path`` (``["c"]``, ``["s", "x"]``,
    ``["a", "element"]``, ``["m", "key"]``) to ``new_type``, and set its ``comment`` if given
    (``CHANGE COLUMN c c BIGINT COMMENT '...'``: both in one commit, as delta-spark); return the
    version committed."""
    log = DeltaLog(ref.location, name=ref.display)
    txn, snapshot = begin(log, None, ops.ChangeColumn.name, removes_data=False)
    schema = json.loads(snapshot.metadata.schema_string)
    case_sensitive = spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true"
    field, holder, key, field_path = _locate(schema, path, case_sensitive, ref, snapshot.version)
    old, new = holder[key], new_type.jsonValue()
    shown = ".".join(path)
    params = {"table": ref.display, "version": snapshot.version}
    if not isinstance(old, str) or not isinstance(new, str) or \
            not type_widening.can_up_cast(old, new):
        raise AnalysisException(
            f"ALTER TABLE {ref.display} ALTER COLUMN {shown} TYPE {new_type.simpleString()}: "
            f"changing {shown} from {_sql(old)} to {new_type.simpleString()} is not supported "
            f"(version {snapshot.version}); only widening changes are. The table is unchanged.",
            error_class="NOT_SUPPORTED_CHANGE_COLUMN", message_parameters={
                "table": ref.display, "originName": shown, "originType": _sql(old),
                "newName": shown, "newType": new_type.simpleString().upper()}, **params)
    if comment is not None:
        field.setdefault("metadata", {})["comment"] = comment
    if old == new:
        return _commit(spark, txn, snapshot, schema, field)
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
    type_widening.record(field, old, new, field_path)
    if new == "timestamp_ntz":
        upgraded = merged(txn.new_protocol or snapshot.protocol, {"timestampNtz"})
        if upgraded is not None:
            txn.update_protocol(upgraded)
    return _commit(spark, txn, snapshot, schema, field)


def _commit(spark, txn, snapshot, schema: dict, field: dict) -> int:
    txn.update_metadata(dataclasses.replace(
        snapshot.metadata, schema_string=json.dumps(schema, separators=(",", ":"))))
    shown = {**field, "metadata": {k: v for k, v in (field.get("metadata") or {}).items()
                                   if k != type_widening.TYPE_CHANGES_KEY}}
    return commit(spark, txn, [], ops.ChangeColumn(shown), metrics={})


def _sql(type_json) -> str:
    return T._parse_datatype_json_value(type_json).simpleString().upper() \
        if isinstance(type_json, (str, dict)) else str(type_json)


def _locate(schema: dict, path: list[str], case_sensitive: bool, ref: TableRef, version: int):
    """(the struct field holding the change's metadata, the dict holding the changed type, its
    key, the ``fieldPath`` below that field or None) for ``path``."""
    dtype_holder, key, field, below = {"type": schema}, "type", None, []
    for name in path:
        dtype = dtype_holder[key]
        kind = dtype.get("type") if isinstance(dtype, dict) else None
        if kind == "struct":
            wanted = name if case_sensitive else name.lower()
            found = next((f for f in dtype.get("fields") or []
                          if (f["name"] if case_sensitive else f["name"].lower()) == wanted),
                         None)
            if found is not None:
                field, dtype_holder, key, below = found, found, "type", []
                continue
        elif kind == "array" and name.lower() == "element":
            dtype_holder, key = dtype, "elementType"
            below.append("element")
            continue
        elif kind == "map" and name.lower() in ("key", "value"):
            dtype_holder, key = dtype, f"{name.lower()}Type"
            below.append(name.lower())
            continue
        raise AnalysisException(
            f"ALTER TABLE {ref.display} ALTER COLUMN {'.'.join(path)}: the table has no such "
            f"column or field (version {version}); the table is unchanged",
            error_class="FIELD_NOT_FOUND", table=ref.display, version=version)
    return field, dtype_holder, key, ".".join(below) or None
