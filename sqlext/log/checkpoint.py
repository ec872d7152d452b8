"""Checkpoints: the table state at one version as parquet, read and written with pyarrow.

Reads classic (``N.checkpoint.parquet``) and multi-part (``N.checkpoint.i.n.parquet``) checkpoints,
with statistics as the ``stats`` JSON string or only as the ``stats_parsed`` struct, and V2
checkpoints (the ``v2Checkpoint`` table feature): a top-level file, UUID-named
(``N.checkpoint.<uuid>.json`` or ``.parquet``) or classic-named, holding one
``checkpointMetadata`` action and any number of ``sidecar`` actions naming parquet files in
``_delta_log/_sidecars/`` that hold the ``add`` and ``remove`` actions. Writes classic checkpoints
in the column layout delta-spark uses, plus ``_last_checkpoint``.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import io
import json
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from sqlext.log.actions import (ROW_ID_FIELDS, Action, AddFile, CommitInfo, Metadata, Protocol,
                                RemoveFile, SetTransaction, UnknownAction, parse_commit)

_STR_MAP = pa.map_(pa.string(), pa.string())

# PROTOCOL.md's deletion vector descriptor, as delta-spark writes it in checkpoints
_DV = pa.struct([("storageType", pa.string()), ("pathOrInlineDv", pa.string()),
                 ("offset", pa.int32()), ("sizeInBytes", pa.int32()), ("cardinality", pa.int64()),
                 ("maxRowIndex", pa.int64())])
_ADD = pa.struct([("path", pa.string()), ("partitionValues", _STR_MAP), ("size", pa.int64()),
                  ("modificationTime", pa.int64()), ("dataChange", pa.bool_()),
                  ("tags", _STR_MAP), ("deletionVector", _DV), ("stats", pa.string()),
                  ("baseRowId", pa.int64()), ("defaultRowCommitVersion", pa.int64())])
_REMOVE = pa.struct([("path", pa.string()), ("deletionTimestamp", pa.int64()),
                     ("dataChange", pa.bool_()), ("extendedFileMetadata", pa.bool_()),
                     ("partitionValues", _STR_MAP), ("size", pa.int64()), ("tags", _STR_MAP),
                     ("deletionVector", _DV), ("baseRowId", pa.int64()),
                     ("defaultRowCommitVersion", pa.int64())])
_METADATA = pa.struct([("id", pa.string()), ("name", pa.string()), ("description", pa.string()),
                       ("format", pa.struct([("provider", pa.string()), ("options", _STR_MAP)])),
                       ("schemaString", pa.string()), ("partitionColumns", pa.list_(pa.string())),
                       ("configuration", _STR_MAP), ("createdTime", pa.int64())])
_PROTOCOL = pa.struct([("minReaderVersion", pa.int32()), ("minWriterVersion", pa.int32()),
                       ("readerFeatures", pa.list_(pa.string())),
                       ("writerFeatures", pa.list_(pa.string()))])
_TXN = pa.struct([("appId", pa.string()), ("version", pa.int64()), ("lastUpdated", pa.int64())])
_DOMAIN = pa.struct([("domain", pa.string()), ("configuration", pa.string()),
                     ("removed", pa.bool_())])

CHECKPOINT_SCHEMA = pa.schema([("txn", _TXN), ("add", _ADD), ("remove", _REMOVE),
                               ("metaData", _METADATA), ("protocol", _PROTOCOL),
                               ("domainMetadata", _DOMAIN)])
# a V2 checkpoint (the v2Checkpoint table feature) also holds one checkpointMetadata action
_CHECKPOINT_METADATA = pa.struct([("version", pa.int64()), ("tags", _STR_MAP)])
V2_CHECKPOINT_SCHEMA = CHECKPOINT_SCHEMA.append(pa.field("checkpointMetadata",
                                                         _CHECKPOINT_METADATA))

_KNOWN = {"add": AddFile, "remove": RemoveFile, "metaData": Metadata, "protocol": Protocol,
          "txn": SetTransaction}


# --- reading ------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A pyarrow-to-Python value made JSON-like: maps as dicts, temporal values as ISO strings."""
    if isinstance(value, list) and value and isinstance(value[0], tuple) and len(value[0]) == 2:
        return {k: _plain(v) for k, v in value}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat(timespec="milliseconds") + "Z"
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value


def _map_fields(row: dict, names: Iterable[str]) -> None:
    for name in names:
        v = row.get(name)
        if isinstance(v, list):
            row[name] = {k: val for k, val in v}


def _stats_from_parsed(parsed: dict) -> str:
    """The ``stats`` JSON string of a ``stats_parsed`` struct (decimals written exactly)."""
    return _stats_json(parsed)


def _stats_json(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_stats_json(v)}" for k, v in value.items()
                              if v is not None) + "}"
    if isinstance(value, decimal.Decimal):
        # exact, unlike a float: a rounded-down maximum would let pruning drop matching files
        return str(value) if value.is_finite() else json.dumps(str(value))
    if isinstance(value, list) and not (value and isinstance(value[0], tuple)):
        return "[" + ",".join(_stats_json(v) for v in value) + "]"
    return json.dumps(_plain(value), separators=(",", ":"))


def _row_to_action(key: str, row: dict) -> Action:
    row = {k: v for k, v in row.items() if v is not None or k == "partitionValues"}
    _map_fields(row, ("partitionValues", "tags", "configuration"))
    if key == "metaData" and isinstance(row.get("format"), dict):
        _map_fields(row["format"], ("options",))
    if key == "add" and row.get("stats") is None and row.get("stats_parsed") is not None:
        row["stats"] = _stats_from_parsed(row.pop("stats_parsed"))
    row.pop("stats_parsed", None)
    row.pop("partitionValues_parsed", None)
    if isinstance(row.get("deletionVector"), dict):
        row["deletionVector"] = _plain(row["deletionVector"])
    if key in ("add", "remove") and row.get("partitionValues") is None:
        row["partitionValues"] = {}
    cls = _KNOWN.get(key)
    if cls is None:
        return UnknownAction(key, _plain(row))
    return cls.from_dict(row)


def _column_values(struct: pa.Array, name: str) -> list | None:
    """A struct field as a Python list, or None when the field is absent or entirely null."""
    idx = struct.type.get_field_index(name)
    if idx < 0:
        return None
    child = struct.field(idx)
    if child.null_count == len(child):
        return None
    if pa.types.is_map(child.type):
        return _map_values(child)
    return child.to_pylist()


def _map_values(array: pa.Array) -> list[dict | None]:
    """A ``map<string,string>`` array as dicts, decoded from its flat keys and items (much faster
    than ``to_pylist``, which builds a list of tuples per row)."""
    n = len(array)
    if isinstance(array, pa.ExtensionArray):  # pragma: no cover - not used by Delta
        return array.to_pylist()
    offsets = array.offsets.to_pylist()
    keys = array.keys.to_pylist()
    items = array.items.to_pylist()
    valid = array.is_valid().to_pylist() if array.null_count else None
    out: list[dict | None] = []
    append = out.append
    for i in range(n):
        if valid is not None and not valid[i]:
            append(None)
            continue
        lo, hi = offsets[i], offsets[i + 1]
        if hi - lo == 1:
            append({keys[lo]: items[lo]})
        else:
            append(dict(zip(keys[lo:hi], items[lo:hi])))
    return out


def _decode_adds(struct: pa.StructArray) -> list[AddFile]:
    """``add`` rows of a checkpoint decoded column by column straight into :class:`AddFile`."""
    n = len(struct)
    none = [None] * n
    paths = struct.field("path").to_pylist()
    pvs = _column_values(struct, "partitionValues") or none
    sizes = _column_values(struct, "size") or none
    mtimes = _column_values(struct, "modificationTime") or none
    changes = _column_values(struct, "dataChange") or none
    stats = _column_values(struct, "stats") or none
    tags = _column_values(struct, "tags") or none
    dvs = _column_values(struct, "deletionVector")
    dvs = [None if d is None else _plain(d) for d in dvs] if dvs is not None else none
    parsed = _column_values(struct, "stats_parsed")
    if parsed is not None:
        stats = [s if s is not None or p is None else _stats_from_parsed(p)
                 for s, p in zip(stats, parsed)]
    known = set(AddFile._FIELDS)
    extra_names = [struct.type.field(i).name for i in range(struct.type.num_fields)
                   if struct.type.field(i).name not in known]
    extra_cols = [(name, _column_values(struct, name)) for name in extra_names]
    extra_cols = [(name, col) for name, col in extra_cols if col is not None]
    extras = ([{name: _plain(col[i]) for name, col in extra_cols if col[i] is not None}
               for i in range(n)] if extra_cols else None)
    out = []
    append = out.append
    for i, (path, pv, size, mtime, change, st, tg, dv) in enumerate(
            zip(paths, pvs, sizes, mtimes, changes, stats, tags, dvs)):
        append(AddFile(path, pv if pv is not None else {}, size or 0, mtime or 0,
                       True if change is None else change, st, tg, dv,
                       extras[i] if extras is not None else {}))
    return out


def actions_from_checkpoint_table(table: pa.Table) -> list[Action]:
    """The actions stored in a checkpoint parquet table (column-wise decoding for speed)."""
    out: list[Action] = []
    for key in table.column_names:
        if key in ("commitInfo", "cdc"):
            continue  # not part of table state
        column = table.column(key)
        if column.null_count == len(column):
            continue
        valid = column.filter(column.is_valid())
        struct = valid.combine_chunks() if isinstance(valid, pa.ChunkedArray) else valid
        if not pa.types.is_struct(struct.type):
            continue
        if key == "add" and struct.type.get_field_index("path") >= 0:
            out.extend(_decode_adds(struct))
            continue
        names = [struct.type.field(i).name for i in range(struct.type.num_fields)]
        columns = [struct.field(i).to_pylist() for i in range(len(names))]
        for values in zip(*columns):
            out.append(_row_to_action(key, dict(zip(names, values))))
    return out


def read_checkpoint(data_parts: list[bytes]) -> list[Action]:
    """Actions from the parts of one checkpoint, each given as the parquet file's bytes."""
    actions: list[Action] = []
    for data in data_parts:
        actions.extend(actions_from_checkpoint_table(pq.read_table(pa.BufferReader(data))))
    return actions


def read_checkpoint_file(name: str, data: bytes) -> list[Action]:
    """The actions of one checkpoint file (a part, a V2 top-level file or a sidecar): JSON lines
    when ``name`` ends with ``.json``, parquet otherwise."""
    if name.endswith(".json"):
        return [a for a in parse_commit(data) if not isinstance(a, CommitInfo)]
    return actions_from_checkpoint_table(pq.read_table(pa.BufferReader(data)))


def sidecar_paths(actions: list[Action]) -> list[str]:
    """The ``path`` of every ``sidecar`` action among a V2 checkpoint's top-level actions, as
    written: a file name relative to ``_delta_log/_sidecars/``, or an absolute URI."""
    out = []
    for a in actions:
        if isinstance(a, UnknownAction) and a.key == "sidecar":
            path = a.value.get("path") if isinstance(a.value, dict) else None
            if not path:
                raise ValueError(f"a sidecar action without a path: {a.value!r}")
            out.append(path)
    return out


def checkpoint_metadata_version(actions: list[Action]) -> int | None:
    """The ``version`` of a V2 checkpoint's ``checkpointMetadata`` action (None when absent:
    a classic checkpoint). Raises ``ValueError`` when there are several."""
    found = [a.value for a in actions
             if isinstance(a, UnknownAction) and a.key == "checkpointMetadata"]
    if len(found) > 1:
        raise ValueError(f"{len(found)} checkpointMetadata actions (a checkpoint has at most one)")
    if not found:
        return None
    return int(found[0]["version"]) if isinstance(found[0], dict) else None


# --- writing ------------------------------------------------------------------------------------


def _as_map(d: dict | None):
    return None if d is None else list(d.items())


def _dv_row(dv: dict | None) -> dict | None:
    """A ``deletionVector`` object as a row of the checkpoint's struct (absent fields null)."""
    return None if not dv else {f.name: dv.get(f.name) for f in _DV}


def _add_row(a: AddFile) -> dict:
    return {"path": a.path, "partitionValues": _as_map(a.partition_values), "size": a.size,
            "modificationTime": a.modification_time, "dataChange": False,
            "tags": _as_map(a.tags), "deletionVector": _dv_row(a.deletion_vector),
            "stats": a.stats, **_row_ids(a.extra)}


def _row_ids(extra: dict) -> dict:
    """Row tracking's fields of an add or remove (kept by checkpoints, PROTOCOL.md)."""
    return {k: extra.get(k) for k in ROW_ID_FIELDS}


def _remove_row(r: RemoveFile) -> dict:
    return {"path": r.path, "deletionTimestamp": r.deletion_timestamp, "dataChange": False,
            "extendedFileMetadata": r.extended_file_metadata,
            "partitionValues": _as_map(r.partition_values), "size": r.size,
            "tags": _as_map(r.tags), "deletionVector": _dv_row(r.deletion_vector),
            **_row_ids(r.extra)}


def _metadata_row(m: Metadata) -> dict:
    return {"id": m.id, "name": m.name, "description": m.description,
            "format": {"provider": m.format_provider, "options": _as_map(m.format_options)},
            "schemaString": m.schema_string, "partitionColumns": m.partition_columns,
            "configuration": _as_map(m.configuration), "createdTime": m.created_time}


def checkpoint_bytes(protocol: Protocol, metadata: Metadata, files: Iterable[AddFile],
                     tombstones: Iterable[RemoveFile], txns: Iterable[SetTransaction],
                     domains: Iterable[dict] = (), v2_version: int | None = None
                     ) -> tuple[bytes, int, int]:
    """A classic checkpoint of the given table state: (parquet bytes, number of actions, add count).

    Actions are written with ``dataChange=false``, as the protocol asks of checkpoints. With
    ``v2_version`` the file follows the V2 spec (a ``checkpointMetadata`` action of that version,
    no sidecars), as tables with the ``v2Checkpoint`` feature require of every checkpoint.
    """
    rows: list[dict] = [{"protocol": {"minReaderVersion": protocol.min_reader_version,
                                      "minWriterVersion": protocol.min_writer_version,
                                      "readerFeatures": protocol.reader_features,
                                      "writerFeatures": protocol.writer_features}},
                        {"metaData": _metadata_row(metadata)}]
    rows += [{"txn": {"appId": t.app_id, "version": t.version, "lastUpdated": t.last_updated}}
             for t in txns]
    rows += [{"domainMetadata": d} for d in domains]
    if v2_version is not None:
        rows.append({"checkpointMetadata": {"version": v2_version, "tags": None}})
    n_adds = 0
    for a in files:
        rows.append({"add": _add_row(a)})
        n_adds += 1
    rows += [{"remove": _remove_row(r)} for r in tombstones]
    table = pa.Table.from_pylist(rows, schema=CHECKPOINT_SCHEMA if v2_version is None
                                 else V2_CHECKPOINT_SCHEMA)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="snappy")
    return sink.getvalue(), len(rows), n_adds


def last_checkpoint_bytes(version: int, size: int, num_add_files: int, size_in_bytes: int) -> bytes:
    """The ``_last_checkpoint`` JSON for a single-part checkpoint."""
    return json.dumps({"version": version, "size": size, "sizeInBytes": size_in_bytes,
                       "numOfAddFiles": num_add_files}, separators=(",", ":")).encode()
