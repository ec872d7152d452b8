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
"""

from __future__ import annotations

from typing import Any

from sqlext.log.actions import Metadata
from sqlext.log.schema import Field, parse_schema

MODE_KEY = "delta.columnMapping.mode"
PHYSICAL_NAME_KEY = "delta.columnMapping.physicalName"
FIELD_ID_KEY = "delta.columnMapping.id"
METADATA_KEYS = (PHYSICAL_NAME_KEY, FIELD_ID_KEY)
MODES = ("none", "name", "id")
_STATS_MAPS = ("minValues", "maxValues", "nullCount")


def mapping_mode(metadata: Metadata | None) -> str:
    """The table's column mapping mode, lowercased: ``none`` (also when unset), ``name``, ``id``."""
    mode = (metadata.configuration.get(MODE_KEY) if metadata is not None else None) or "none"
    return str(mode).strip().lower()


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
