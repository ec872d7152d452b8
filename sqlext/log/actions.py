"""Delta log actions: the typed records of one commit line, read and written as PROTOCOL.md says.

Each action keeps the fields it does not know in ``extra`` and writes them back unchanged, so a
rewrite (checkpoint, metadata change) never drops what another engine recorded. Action types this
module does not know are kept as :class:`UnknownAction`.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable
from urllib.parse import quote, unquote

# characters java.net.URI leaves as they are in a path; everything else is percent-encoded
_PATH_SAFE = "/=!$&'()*+,;@-._~:"


def encode_path(relative_path: str) -> str:
    """URI-encode a relative file path for an ``add``/``remove``/``cdc`` action."""
    return quote(relative_path, safe=_PATH_SAFE)


def decode_path(action_path: str) -> str:
    """The file-system path an action's ``path`` names (relative to the table, or absolute)."""
    return unquote(action_path)


def _take(d: dict, known: Iterable[str]) -> dict:
    return {k: v for k, v in d.items() if k not in known}


@dataclass
class Protocol:
    min_reader_version: int
    min_writer_version: int
    reader_features: list[str] | None = None
    writer_features: list[str] | None = None
    extra: dict = field(default_factory=dict)

    KEY = "protocol"
    _FIELDS = ("minReaderVersion", "minWriterVersion", "readerFeatures", "writerFeatures")

    @classmethod
    def from_dict(cls, d: dict) -> "Protocol":
        return cls(int(d["minReaderVersion"]), int(d["minWriterVersion"]),
                   list(d["readerFeatures"]) if d.get("readerFeatures") is not None else None,
                   list(d["writerFeatures"]) if d.get("writerFeatures") is not None else None,
                   _take(d, cls._FIELDS))

    def to_dict(self) -> dict:
        d = {"minReaderVersion": self.min_reader_version, "minWriterVersion": self.min_writer_version}
        if self.reader_features is not None:
            d["readerFeatures"] = list(self.reader_features)
        if self.writer_features is not None:
            d["writerFeatures"] = list(self.writer_features)
        return {**d, **self.extra}


@dataclass
class Metadata:
    id: str
    schema_string: str | None      # None only when a log's metaData lacks it (see from_dict)
    partition_columns: list[str]
    configuration: dict[str, str]
    name: str | None = None
    description: str | None = None
    format_provider: str = "parquet"
    format_options: dict = field(default_factory=dict)
    created_time: int | None = None
    extra: dict = field(default_factory=dict)

    KEY = "metaData"
    _FIELDS = ("id", "name", "description", "format", "schemaString", "partitionColumns",
               "configuration", "createdTime")

    @classmethod
    def from_dict(cls, d: dict) -> "Metadata":
        """Parse a ``metaData`` action. A missing ``schemaString`` is kept as None rather than
        refused here: Databricks' Delta Live Tables write a first commit without one and set it
        in the next (delta-rs's ``delta-live-table``); a version whose metadata has no schema is
        refused when its schema is needed (:attr:`Snapshot.schema`), later versions read."""
        fmt = d.get("format") or {}
        return cls(
            id=d["id"], schema_string=d.get("schemaString"),
            partition_columns=list(d.get("partitionColumns") or []),
            configuration=dict(d.get("configuration") or {}),
            name=d.get("name"), description=d.get("description"),
            format_provider=fmt.get("provider", "parquet"),
            format_options=dict(fmt.get("options") or {}),
            created_time=d.get("createdTime"), extra=_take(d, cls._FIELDS))

    @classmethod
    def new(cls, schema_string: str, partition_columns: list[str], configuration: dict[str, str],
            created_time: int, name: str | None = None, description: str | None = None) -> "Metadata":
        """Metadata for a table being created, with a fresh table id."""
        return cls(str(uuid.uuid4()), schema_string, list(partition_columns), dict(configuration),
                   name=name, description=description, created_time=created_time)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"id": self.id}
        if self.name is not None:
            d["name"] = self.name
        if self.description is not None:
            d["description"] = self.description
        d["format"] = {"provider": self.format_provider, "options": dict(self.format_options)}
        d["schemaString"] = self.schema_string
        d["partitionColumns"] = list(self.partition_columns)
        d["configuration"] = dict(self.configuration)
        if self.created_time is not None:
            d["createdTime"] = self.created_time
        return {**d, **self.extra}


# row tracking's fields of ``add`` and ``remove`` actions (sqlext.log.row_tracking), which a
# remove, a re-add and a checkpoint carry over from the file's last add
ROW_ID_FIELDS = ("baseRowId", "defaultRowCommitVersion")


@dataclass
class AddFile:
    path: str                                   # as in the log: relative and URI-encoded, or a URI
    partition_values: dict[str, str | None]
    size: int
    modification_time: int
    data_change: bool = True
    stats: str | None = None
    tags: dict[str, str] | None = None
    deletion_vector: dict | None = None
    extra: dict = field(default_factory=dict)

    KEY = "add"
    _FIELDS = ("path", "partitionValues", "size", "modificationTime", "dataChange", "stats",
               "tags", "deletionVector", "stats_parsed", "partitionValues_parsed")

    @classmethod
    def from_dict(cls, d: dict) -> "AddFile":
        return cls(d["path"], dict(d.get("partitionValues") or {}), int(d.get("size") or 0),
                   int(d.get("modificationTime") or 0), bool(d.get("dataChange", True)),
                   d.get("stats"), d.get("tags"), d.get("deletionVector"), _take(d, cls._FIELDS))

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"path": self.path, "partitionValues": dict(self.partition_values),
                             "size": self.size, "modificationTime": self.modification_time,
                             "dataChange": self.data_change}
        if self.stats is not None:
            d["stats"] = self.stats
        if self.tags is not None:
            d["tags"] = self.tags
        if self.deletion_vector is not None:
            d["deletionVector"] = self.deletion_vector
        return {**d, **self.extra}

    def parsed_stats(self) -> dict | None:
        """The ``stats`` JSON as a dict (``numRecords``, ``minValues``, ``maxValues``, ``nullCount``)."""
        if not self.stats:
            return None
        try:
            return json.loads(self.stats)
        except ValueError:
            return None

    @property
    def num_records(self) -> int | None:
        """Rows of the file that are live: ``numRecords`` less the deletion vector's
        ``cardinality``; None without statistics."""
        stats = self.parsed_stats()
        n = None if stats is None else stats.get("numRecords")
        if n is not None and self.deletion_vector:
            n -= int(self.deletion_vector.get("cardinality") or 0)
        return n

    def remove(self, deletion_timestamp: int, data_change: bool = True) -> "RemoveFile":
        """The ``remove`` action that logically deletes this file, with the same path string."""
        return RemoveFile(self.path, deletion_timestamp, data_change, True,
                          dict(self.partition_values), self.size, self.stats, self.tags,
                          self.deletion_vector,
                          {k: self.extra[k] for k in ROW_ID_FIELDS if k in self.extra})


@dataclass
class RemoveFile:
    path: str
    deletion_timestamp: int | None = None
    data_change: bool = True
    extended_file_metadata: bool | None = None
    partition_values: dict[str, str | None] | None = None
    size: int | None = None
    stats: str | None = None
    tags: dict[str, str] | None = None
    deletion_vector: dict | None = None
    extra: dict = field(default_factory=dict)

    KEY = "remove"
    _FIELDS = ("path", "deletionTimestamp", "dataChange", "extendedFileMetadata",
               "partitionValues", "size", "stats", "tags", "deletionVector")

    @classmethod
    def from_dict(cls, d: dict) -> "RemoveFile":
        return cls(d["path"], d.get("deletionTimestamp"), bool(d.get("dataChange", True)),
                   d.get("extendedFileMetadata"),
                   dict(d["partitionValues"]) if d.get("partitionValues") is not None else None,
                   d.get("size"), d.get("stats"), d.get("tags"), d.get("deletionVector"),
                   _take(d, cls._FIELDS))

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"path": self.path}
        if self.deletion_timestamp is not None:
            d["deletionTimestamp"] = self.deletion_timestamp
        d["dataChange"] = self.data_change
        if self.extended_file_metadata is not None:
            d["extendedFileMetadata"] = self.extended_file_metadata
        if self.partition_values is not None:
            d["partitionValues"] = dict(self.partition_values)
        if self.size is not None:
            d["size"] = self.size
        if self.stats is not None:
            d["stats"] = self.stats
        if self.tags is not None:
            d["tags"] = self.tags
        if self.deletion_vector is not None:
            d["deletionVector"] = self.deletion_vector
        return {**d, **self.extra}


@dataclass
class AddCDCFile:
    path: str
    partition_values: dict[str, str | None]
    size: int
    data_change: bool = False
    tags: dict[str, str] | None = None
    extra: dict = field(default_factory=dict)

    KEY = "cdc"
    _FIELDS = ("path", "partitionValues", "size", "dataChange", "tags")

    @classmethod
    def from_dict(cls, d: dict) -> "AddCDCFile":
        return cls(d["path"], dict(d.get("partitionValues") or {}), int(d.get("size") or 0),
                   bool(d.get("dataChange", False)), d.get("tags"), _take(d, cls._FIELDS))

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"path": self.path, "partitionValues": dict(self.partition_values),
                             "size": self.size, "dataChange": self.data_change}
        if self.tags is not None:
            d["tags"] = self.tags
        return {**d, **self.extra}


@dataclass
class SetTransaction:
    app_id: str
    version: int
    last_updated: int | None = None
    extra: dict = field(default_factory=dict)

    KEY = "txn"
    _FIELDS = ("appId", "version", "lastUpdated")

    @classmethod
    def from_dict(cls, d: dict) -> "SetTransaction":
        return cls(d["appId"], int(d["version"]), d.get("lastUpdated"), _take(d, cls._FIELDS))

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"appId": self.app_id, "version": self.version}
        if self.last_updated is not None:
            d["lastUpdated"] = self.last_updated
        return {**d, **self.extra}


@dataclass
class CommitInfo:
    """``commitInfo``: free-form provenance; kept as a dict with typed accessors."""

    values: dict

    KEY = "commitInfo"

    @classmethod
    def from_dict(cls, d: dict) -> "CommitInfo":
        return cls(dict(d))

    def to_dict(self) -> dict:
        return dict(self.values)

    @property
    def timestamp(self) -> int | None:
        return self.values.get("timestamp")

    @property
    def in_commit_timestamp(self) -> int | None:
        return self.values.get("inCommitTimestamp")

    @property
    def operation(self) -> str | None:
        return self.values.get("operation")


@dataclass
class UnknownAction:
    """An action type this version of sqlext does not know; preserved verbatim."""

    key: str
    value: Any

    def to_dict(self) -> Any:
        return self.value


Action = Protocol | Metadata | AddFile | RemoveFile | AddCDCFile | SetTransaction | CommitInfo | UnknownAction

_TYPES = {cls.KEY: cls for cls in (Protocol, Metadata, AddFile, RemoveFile, AddCDCFile,
                                   SetTransaction, CommitInfo)}


def action_from_json_obj(obj: dict) -> Action:
    """Turn one decoded log line (``{"add": {...}}``) into an action."""
    if not isinstance(obj, dict) or len(obj) != 1:
        raise ValueError(f"a log line must be an object with one action, got {str(obj)[:200]}")
    (key, value), = obj.items()
    cls = _TYPES.get(key)
    if cls is None or value is None:
        if key == "domainMetadata" and isinstance(value, dict) \
                and not isinstance(value.get("domain"), str):   # replay keys domains by name
            raise ValueError(f"domainMetadata.domain must be a string, got {value.get('domain')!r}")
        return UnknownAction(key, value)
    action = cls.from_dict(value)
    path = getattr(action, "path", "")
    if not isinstance(path, str):    # would fail far away, during replay, as a TypeError
        raise ValueError(f"{key}.path must be a string, got {path!r}")
    if isinstance(action, SetTransaction) and not isinstance(action.app_id, str):
        raise ValueError(f"txn.appId must be a string, got {action.app_id!r}")
    return action


def action_to_json_obj(action: Action) -> dict:
    """The one-key object that represents an action on a log line."""
    key = action.key if isinstance(action, UnknownAction) else action.KEY
    return {key: action.to_dict()}


def parse_commit(data: bytes | str) -> list[Action]:
    """Parse a commit file (newline-delimited JSON) into actions, in file order."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return [action_from_json_obj(json.loads(line)) for line in text.splitlines() if line.strip()]


def serialize_commit(actions: Iterable[Action]) -> bytes:
    """Render actions as a commit file: one compact JSON object per line."""
    lines = [json.dumps(action_to_json_obj(a), separators=(",", ":"), ensure_ascii=False)
             for a in actions]
    return ("\n".join(lines) + "\n").encode("utf-8")
