"""Column mapping (the Delta table feature ``columnMapping``, modes ``name`` and ``id``): the
names users see (logical) and the names data files, partition values and statistics use
(physical).

With ``delta.columnMapping.mode`` = ``name`` or ``id``, every field of the schema, nested struct
fields too, carries ``delta.columnMapping.physicalName`` and ``delta.columnMapping.id`` in its
metadata. Parquet files hold the physical names (``id`` mode adds the ids as parquet field ids),
``partitionValues`` and the ``minValues``/``maxValues``/``nullCount`` statistics are keyed by
physical names, and ``metaData.partitionColumns`` lists logical names. A rename changes only the
logical name; a drop removes the field, so files keep columns no logical name reaches.

Each version's own schema decides the mapping: time travel across a rename reads the old name.

Writing (``name`` mode): :func:`assign_column_mapping` gives every field of a metadata being
committed that has none an id (``delta.columnMapping.maxColumnId`` + 1, ...) and a physical name:
its own name when an existing table turns column mapping on (its files already use those names,
as delta-spark does), ``col-<uuid>`` for the fields of a new table and columns added later.
:func:`rename_field` and :func:`drop_fields` change only the schema: files are never rewritten.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

from sqlext.errors import AnalysisException, UnsupportedOperationError
from sqlext.log import table_properties as props
from sqlext.log.actions import Metadata
from sqlext.log.schema import Field, parse_schema

MODE_KEY = "delta.columnMapping.mode"
PHYSICAL_NAME_KEY = "delta.columnMapping.physicalName"
FIELD_ID_KEY = "delta.columnMapping.id"
MAX_COLUMN_ID_KEY = "delta.columnMapping.maxColumnId"
METADATA_KEYS = (PHYSICAL_NAME_KEY, FIELD_ID_KEY)
#: what a table without column mapping must do before RENAME / DROP COLUMN (delta-spark's advice)
ENABLE_ADVICE = ("enable column mapping first: ALTER TABLE <table> SET TBLPROPERTIES "
                 "('delta.columnMapping.mode' = 'name') (the table's protocol is upgraded to "
                 "reader 2 / writer 5, or gains the columnMapping feature)")
MODES = ("none", "name", "id")
_STATS_MAPS = ("minValues", "maxValues", "nullCount")


def mapping_mode(metadata: Metadata | None) -> str:
    """The table's column mapping mode, lowercased: ``none`` (also when unset), ``name``, ``id``."""
    return props.COLUMN_MAPPING_MODE.of(metadata.configuration if metadata is not None else None)


def physical_name(field_name: str, metadata: dict | None) -> str:
    """The physical name of a field given its logical name and schema metadata (the logical
    name when the field carries none, as in tables that enabled column mapping later)."""
    value = (metadata or {}).get(PHYSICAL_NAME_KEY)
    return value if isinstance(value, str) and value else field_name


class _Node:
    """One level of the name tree: physical (lowercased) -> (logical name, children)."""

    __slots__ = ("by_physical", "by_logical")

    def __init__(self, fields: list[Field]):
        self.by_physical: dict[str, tuple[str, _Node | None]] = {}
        self.by_logical: dict[str, str] = {}
        for f in fields:
            phys = physical_name(f.name, f.metadata)
            children = _Node(f.children()) if f.is_struct else None
            self.by_physical[phys.lower()] = (f.name, children)
            self.by_logical[f.name.lower()] = phys


class ColumnMapping:
    """The logical <-> physical names of one schema (one version of a table).

    Build it with :meth:`of` (None for tables without column mapping, so that callers keep
    their plain path) or directly from a mode and the schema's fields.
    """

    def __init__(self, mode: str, fields: list[Field]):
        self.mode = mode
        self.fields = fields
        self._root = _Node(fields)

    @classmethod
    def of(cls, metadata: Metadata | None) -> "ColumnMapping | None":
        """The mapping of a version's metadata, or None when its mode is ``none``."""
        mode = mapping_mode(metadata)
        if mode == "none" or metadata is None:
            return None
        return cls(mode, parse_schema(metadata.schema_string))

    def physical_name(self, logical: str) -> str:
        """The physical name of a top-level column (matched case-insensitively; a name that is
        no column of the schema is returned as is)."""
        return self._root.by_logical.get(logical.lower(), logical)

    def logical_name(self, physical: str) -> str | None:
        """The logical name of a top-level physical column, or None when no column has it (a
        dropped column)."""
        entry = self._root.by_physical.get(physical.lower())
        return entry[0] if entry is not None else None

    def logical_partition_values(self, values: dict[str, str | None] | None) -> dict[str, str | None]:
        """``partitionValues`` (keyed by physical names) keyed by logical names; keys of no
        column of the schema are kept as they are."""
        out: dict[str, str | None] = {}
        for key, value in (values or {}).items():
            out[self.logical_name(key) or key] = value
        return out

    def logical_stats(self, stats: dict[str, Any]) -> dict[str, Any]:
        """Decoded ``stats`` with ``minValues``/``maxValues``/``nullCount`` keyed by logical
        names, nested structs included; values of columns no logical name reaches (dropped
        columns) are left out. Other keys (``numRecords``, ``tightBounds``) are kept."""
        out = dict(stats)
        for key in _STATS_MAPS:
            value = stats.get(key)
            if isinstance(value, dict):
                out[key] = _logical_values(value, self._root)
        return out


def _logical_values(values: dict[str, Any], node: _Node) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        entry = node.by_physical.get(key.lower())
        if entry is None:
            continue
        logical, children = entry
        if isinstance(value, dict):
            out[logical] = _logical_values(value, children) if children is not None else value
        else:
            out[logical] = value
    return out


def strip_mapping_metadata(metadata: dict | None) -> dict:
    """A field's schema metadata without the column mapping keys (what users see)."""
    return {k: v for k, v in (metadata or {}).items() if k not in METADATA_KEYS}


# --- writing --------------------------------------------------------------------------------------


def _struct_fields(dtype: Any) -> list[dict]:
    """The field dicts (mutable, of a decoded schema) of every struct directly reachable from a
    type: the struct itself, or the element/key/value structs of arrays and maps."""
    if not isinstance(dtype, dict):
        return []
    kind = dtype.get("type")
    if kind == "struct":
        return dtype.get("fields", [])
    if kind == "array":
        return _struct_fields(dtype.get("elementType"))
    if kind == "map":
        return _struct_fields(dtype.get("keyType")) + _struct_fields(dtype.get("valueType"))
    return []


def _walk(fields: list[dict]):
    """Every field dict of a decoded schema, nested ones (inside structs, arrays, maps) too."""
    for f in fields:
        yield f
        yield from _walk(_struct_fields(f.get("type")))


def assign_column_mapping(metadata: Metadata, previous: Metadata | None,
                          table: str = "the table") -> Metadata:
    """``metadata`` (about to be committed after ``previous``, None for a new table) with every
    field given a column mapping id and physical name it lacks, and
    ``delta.columnMapping.maxColumnId`` set; unchanged when the mode is ``none``.

    Fields of a table turning mapping on keep their names as physical names (the files hold
    them); fields of a new table, and columns added to a mapped table, get ``col-<uuid>``.
    Changing the mode of a mapped table (back to ``none``, or ``name`` <-> ``id``) and starting
    ``id`` mode are refused with :class:`UnsupportedOperationError`."""
    mode = mapping_mode(metadata)
    before = mapping_mode(previous) if previous is not None else "none"
    if mode not in MODES:
        raise UnsupportedOperationError(
            f"table {table}: unknown delta.columnMapping.mode {mode!r}; use 'name'")
    if before != "none" and mode != before:
        raise UnsupportedOperationError(
            f"table {table}: changing delta.columnMapping.mode from {before!r} to {mode!r} is "
            "not supported; the table is unchanged")
    if mode == "none":
        return metadata
    decoded = json.loads(metadata.schema_string)
    fields = list(_walk(decoded.get("fields", [])))
    missing = [f for f in fields if not (f.get("metadata") or {}).get(PHYSICAL_NAME_KEY)
               or (f.get("metadata") or {}).get(FIELD_ID_KEY) is None]
    conf = metadata.configuration
    ids = [int(f["metadata"][FIELD_ID_KEY]) for f in fields
           if (f.get("metadata") or {}).get(FIELD_ID_KEY) is not None]
    top = max([props.COLUMN_MAPPING_MAX_ID.of(conf)] + ids)
    if previous is not None:
        top = max(top, props.COLUMN_MAPPING_MAX_ID.of(previous.configuration))
    if not missing and conf.get(MAX_COLUMN_ID_KEY) == str(top):
        return metadata
    if missing and mode == "id":
        raise UnsupportedOperationError(
            f"table {table}: sqlext writes column mapping in 'name' mode only "
            "(delta.columnMapping.mode = 'name'); 'id' mode tables are read-only in sqlext")
    keep_names = previous is not None and before == "none"
    if previous is not None and before != "none":
        _inherit(decoded.get("fields", []), json.loads(previous.schema_string).get("fields", []))
        missing = [f for f in missing if not (f.get("metadata") or {}).get(PHYSICAL_NAME_KEY)
                   or (f.get("metadata") or {}).get(FIELD_ID_KEY) is None]
    for f in missing:
        md = f.setdefault("metadata", {})
        if md.get(FIELD_ID_KEY) is None:
            top += 1
            md[FIELD_ID_KEY] = top
        if not md.get(PHYSICAL_NAME_KEY):
            md[PHYSICAL_NAME_KEY] = f["name"] if keep_names else f"col-{uuid.uuid4()}"
    return dataclasses.replace(
        metadata, schema_string=json.dumps(decoded, separators=(",", ":")),
        configuration={**conf, MAX_COLUMN_ID_KEY: str(top)})


def _inherit(fields: list[dict], previous: list[dict]) -> None:
    """Give fields that lost their column mapping metadata (a schema rebuilt from a DataFrame)
    the id and physical name of the previous schema's field of the same name and path."""
    by_name = {f["name"].lower(): f for f in previous}
    for f in fields:
        old = by_name.get(f["name"].lower())
        if old is None:
            continue
        md, old_md = f.setdefault("metadata", {}), old.get("metadata") or {}
        if not md.get(PHYSICAL_NAME_KEY) and md.get(FIELD_ID_KEY) is None \
                and old_md.get(PHYSICAL_NAME_KEY):
            md[PHYSICAL_NAME_KEY] = old_md[PHYSICAL_NAME_KEY]
            md[FIELD_ID_KEY] = old_md.get(FIELD_ID_KEY)
        _inherit(_struct_fields(f.get("type")), _struct_fields(old.get("type")))


def _find(fields: list[dict], path: list[str], table: str, what: str) -> tuple[list[dict], int]:
    """(the list holding the field at ``path``, its index); a missing field raises
    :class:`AnalysisException`."""
    level = fields
    for i, part in enumerate(path):
        names = [f["name"] for f in level]
        idx = next((j for j, n in enumerate(names) if n.lower() == part.lower()), None)
        if idx is None:
            raise AnalysisException(
                f"table {table}: {what}: column {'.'.join(path[:i + 1])} does not exist "
                f"(columns here: {', '.join(names)}); the table is unchanged")
        if i == len(path) - 1:
            return level, idx
        level = _struct_fields(level[idx].get("type"))
        if not level:
            raise AnalysisException(f"table {table}: {what}: {'.'.join(path[:i + 1])} is not "
                                    "a struct; the table is unchanged")
    raise AnalysisException(f"table {table}: {what}: no column named")


def _require_mapping(metadata: Metadata, table: str, what: str) -> None:
    if mapping_mode(metadata) == "none":
        raise UnsupportedOperationError(
            f"table {table}: {what} needs column mapping (the table has "
            f"delta.columnMapping.mode = 'none'): {ENABLE_ADVICE}. The table is unchanged.",
            error_class="DELTA_UNSUPPORTED_DROP_COLUMN" if what.startswith("DROP")
            else "DELTA_UNSUPPORTED_RENAME_COLUMN", sqlstate="0AKDC", table=table)


def rename_field(metadata: Metadata, path: list[str], new_name: str,
                 table: str = "the table") -> Metadata:
    """``metadata`` with the field at ``path`` (a top-level column, or ``["s", "a"]`` for a
    struct field) renamed to ``new_name``: only its logical name changes, its physical name (what
    files, partition values and statistics use) stays. A renamed partition column stays one.

    Refused (:class:`UnsupportedOperationError`) without column mapping; a missing field or a
    new name already taken at that level raises :class:`AnalysisException`."""
    what = f"RENAME COLUMN {'.'.join(path)} TO {new_name}"
    _require_mapping(metadata, table, what)
    decoded = json.loads(metadata.schema_string)
    level, idx = _find(decoded["fields"], path, table, what)
    old = level[idx]["name"]
    if any(f["name"].lower() == new_name.lower() for j, f in enumerate(level) if j != idx):
        raise AnalysisException(f"table {table}: {what}: a column named {new_name} already "
                                "exists; the table is unchanged")
    level[idx]["name"] = new_name
    pcols = list(metadata.partition_columns)
    if len(path) == 1:
        pcols = [new_name if c.lower() == old.lower() else c for c in pcols]
    return dataclasses.replace(metadata, schema_string=json.dumps(decoded, separators=(",", ":")),
                               partition_columns=pcols)


def drop_fields(metadata: Metadata, paths: list[list[str]], table: str = "the table",
                if_exists: bool = False) -> Metadata:
    """``metadata`` without the fields at ``paths`` (top-level columns or struct fields); the
    files keep their values, which no logical name reaches any more.

    Refused (:class:`UnsupportedOperationError`) without column mapping, for a partition column
    (as delta-spark refuses it) and when no column would be left; a missing field raises
    :class:`AnalysisException` unless ``if_exists`` (``metadata`` itself comes back when nothing
    was dropped)."""
    what = "DROP COLUMN " + ", ".join(".".join(p) for p in paths)
    _require_mapping(metadata, table, what)
    decoded = json.loads(metadata.schema_string)
    dropped = 0
    for path in paths:
        if len(path) == 1 and path[0].lower() in {c.lower() for c in metadata.partition_columns}:
            raise UnsupportedOperationError(
                f"table {table}: {what}: dropping a partition column ({path[0]}) is not "
                "supported (delta-spark refuses it too); the table is unchanged")
        try:
            level, idx = _find(decoded["fields"], path, table, what)
        except AnalysisException:
            if if_exists:
                continue
            raise
        if len(level) == 1:
            raise AnalysisException(f"table {table}: {what}: cannot drop the last field of "
                                    f"{'a table' if len(path) == 1 else '.'.join(path[:-1])}; "
                                    "the table is unchanged")
        del level[idx]
        dropped += 1
    if not dropped:
        return metadata
    return dataclasses.replace(metadata, schema_string=json.dumps(decoded, separators=(",", ":")))
