"""Snapshots: the state of a table at one version, rebuilt by replaying the log."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from sqlext.errors import CorruptLogError
from sqlext.log.actions import (Action, AddFile, Metadata, Protocol, RemoveFile, SetTransaction,
                                UnknownAction, decode_path)
from sqlext.log.deletion_vectors import unique_id
from sqlext.log.schema import Field, parse_schema
from sqlext.log.table_properties import TableProperties


def tombstone_key(path: str, deletion_vector: dict | None) -> str:
    """The key of a tombstone in :attr:`Snapshot.tombstones`: its decoded path, followed by its
    deletion vector's unique id when it has one (log replay identifies a logical file by the
    pair, PROTOCOL.md "Action Reconciliation")."""
    dv_id = unique_id(deletion_vector)
    return path if dv_id is None else f"{path} @dv {dv_id}"


@dataclass
class Snapshot:
    """A table at one version: protocol, metadata, live files, tombstones, app transactions."""

    location: str
    version: int
    protocol: Protocol
    metadata: Metadata
    files_by_path: dict[str, AddFile]           # keyed by the decoded path
    tombstones: dict[str, RemoveFile] = field(default_factory=dict)   # by tombstone_key
    txns: dict[str, SetTransaction] = field(default_factory=dict)
    domains: dict[str, dict] = field(default_factory=dict)
    checkpoint_version: int | None = None
    _schema: list[Field] | None = field(default=None, repr=False)

    @property
    def files(self) -> list[AddFile]:
        """The live data files (``add`` actions) of this version."""
        return list(self.files_by_path.values())

    @property
    def schema(self) -> list[Field]:
        """The table's top-level columns, partition columns included."""
        if self._schema is None:
            try:
                self._schema = parse_schema(self.metadata.schema_string)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise CorruptLogError(
                    f"table {self.location}, version {self.version}: the table schema "
                    f"(metaData.schemaString) cannot be read ({type(exc).__name__}: {exc}); the "
                    "log is corrupt — restore the commit that set it from a backup",
                    table=self.location, version=self.version) from exc
        return self._schema

    @property
    def partition_columns(self) -> list[str]:
        return list(self.metadata.partition_columns)

    @property
    def configuration(self) -> dict[str, str]:
        return dict(self.metadata.configuration)

    @property
    def properties(self) -> TableProperties:
        """The table's properties, typed (:mod:`sqlext.log.table_properties`)."""
        return TableProperties(self.metadata.configuration)

    @property
    def change_data_feed_enabled(self) -> bool:
        return self.properties.change_data_feed

    @property
    def has_deletion_vectors(self) -> bool:
        """Whether a live file has a deletion vector (rows to skip when reading it)."""
        return any(f.deletion_vector for f in self.files_by_path.values())

    @property
    def num_records(self) -> int | None:
        """Rows in the table per the statistics (less the rows deletion vectors delete), or None
        when a file has none."""
        total = 0
        for f in self.files_by_path.values():
            n = f.num_records
            if n is None:
                return None
            total += n
        return total

    @property
    def size_in_bytes(self) -> int:
        return sum(f.size for f in self.files_by_path.values())

    def txn_version(self, app_id: str) -> int | None:
        """The last ``txnVersion`` committed for an application id, or None."""
        t = self.txns.get(app_id)
        return None if t is None else t.version


class Replayer:
    """Accumulates actions in log order into table state."""

    def __init__(self, base: Snapshot | None = None):
        self.protocol = base.protocol if base else None
        self.metadata = base.metadata if base else None
        self.files: dict[str, AddFile] = dict(base.files_by_path) if base else {}
        self.tombstones: dict[str, RemoveFile] = dict(base.tombstones) if base else {}
        self.txns: dict[str, SetTransaction] = dict(base.txns) if base else {}
        self.domains: dict[str, dict] = dict(base.domains) if base else {}

    def apply(self, actions: Iterable[Action]) -> None:
        files, tombstones = self.files, self.tombstones
        for a in actions:
            t = type(a)
            # a logical file is (path, deletion vector id); a snapshot has one per path
            if t is AddFile:
                key = a.path
                if "%" in key:
                    key = decode_path(key)
                files[key] = a
                if tombstones:
                    tombstones.pop(key if a.deletion_vector is None
                                   else tombstone_key(key, a.deletion_vector), None)
            elif t is RemoveFile:
                key = a.path
                if "%" in key:
                    key = decode_path(key)
                dv = a.deletion_vector
                live = files.get(key)
                if live is not None and unique_id(live.deletion_vector) == unique_id(dv):
                    del files[key]
                tombstones[key if dv is None else tombstone_key(key, dv)] = a
            elif t is Metadata:
                self.metadata = a
            elif t is Protocol:
                self.protocol = a
            elif t is SetTransaction:
                self.txns[a.app_id] = a
            elif t is UnknownAction and a.key == "domainMetadata" and isinstance(a.value, dict):
                if a.value.get("removed"):
                    self.domains.pop(a.value.get("domain"), None)
                else:
                    self.domains[a.value.get("domain")] = a.value

    def snapshot(self, location: str, version: int, checkpoint_version: int | None) -> Snapshot:
        if self.protocol is None or self.metadata is None:
            missing = " and ".join(n for n, v in (("protocol", self.protocol),
                                                  ("metaData", self.metadata)) if v is None)
            raise CorruptLogError(
                f"table {location}: the log up to version {version} has no {missing} action; "
                "it is not a valid Delta table", table=location, version=version)
        return Snapshot(location, version, self.protocol, self.metadata, self.files,
                        self.tombstones, self.txns, self.domains, checkpoint_version)
