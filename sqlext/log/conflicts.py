"""Conflict detection between a transaction and the commits that won the race (Delta's rules).

Checks run in Delta's order: protocol change, metadata change, application transaction ids,
files added where the transaction read, files the transaction read that were removed, files
removed by both. The first conflict raises its typed exception; no conflict means the
transaction may commit at the next version.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlext.errors import (ConcurrentAppendException, ConcurrentDeleteDeleteException,
                           ConcurrentDeleteReadException, ConcurrentTransactionException,
                           MetadataChangedException, ProtocolChangedException)
from sqlext.log.actions import (Action, AddFile, CommitInfo, Metadata, Protocol, RemoveFile,
                                SetTransaction, decode_path)
from sqlext.log.pruning import Pruner

SERIALIZABLE = "Serializable"
WRITE_SERIALIZABLE = "WriteSerializable"


@dataclass
class ReadSet:
    """What a transaction read: predicates (None = the whole table) and the files it scanned."""

    predicates: list = field(default_factory=list)     # sqlglot expressions; None entry = all
    files: set[str] = field(default_factory=set)       # decoded paths
    whole_table: bool = False

    @property
    def empty(self) -> bool:
        return not self.predicates and not self.files and not self.whole_table


@dataclass
class WinningCommit:
    version: int
    actions: list[Action]

    def of(self, kind: type) -> list:
        return [a for a in self.actions if isinstance(a, kind)]

    @property
    def is_blind_append(self) -> bool:
        info = next(iter(self.of(CommitInfo)), None)
        return bool(info and info.values.get("isBlindAppend"))

    @property
    def operation(self) -> str:
        info = next(iter(self.of(CommitInfo)), None)
        return (info.operation if info else None) or "unknown operation"


def check_conflicts(table: str, winner: WinningCommit, reads: ReadSet, removes: set[str],
                    app_ids: set[str], metadata_changed: bool, isolation_level: str,
                    pruner_for) -> None:
    """Raise the typed exception for the first conflict between ``winner`` and this transaction.

    ``pruner_for(predicate)`` builds a :class:`Pruner` over the read snapshot's schema.
    """
    where = (f"table {table}: a concurrent {winner.operation} committed version {winner.version} "
             "first")
    # the fields of each exception: delta-spark's message parameters, table and version
    fields = {"table": table, "version": winner.version,
              "message_parameters": {"operation": winner.operation, "tableName": table,
                                     "version": winner.version}}
    if winner.of(Protocol):
        raise ProtocolChangedException(
            f"{where} and changed the protocol (or created the table). Retry the operation.",
            **fields)
    if winner.of(Metadata):
        raise MetadataChangedException(
            f"{where} and changed the table metadata (schema, partitioning or properties). "
            "Retry the operation against the new metadata.", **fields)
    clashing_ids = {t.app_id for t in winner.of(SetTransaction)} & app_ids
    if clashing_ids:
        raise ConcurrentTransactionException(
            f"{where} with the same application transaction id(s) {sorted(clashing_ids)}. "
            "Two writers must not share a txnAppId.", **fields)
    _check_added_files(where, winner, reads, metadata_changed, isolation_level, pruner_for,
                       fields)
    removed = {decode_path(r.path) for r in winner.of(RemoveFile)}
    read_and_removed = removed & reads.files
    if read_and_removed:
        raise ConcurrentDeleteReadException(
            f"{where} and removed file(s) this transaction read, e.g. "
            f"{sorted(read_and_removed)[0]}. Retry the operation.", **fields)
    if removed and reads.whole_table:
        raise ConcurrentDeleteReadException(
            f"{where} and removed file(s) from a table this transaction read in full, e.g. "
            f"{sorted(removed)[0]}. Retry the operation.", **fields)
    both_removed = removed & removes
    if both_removed:
        raise ConcurrentDeleteDeleteException(
            f"{where} and also removed file(s) this transaction removes, e.g. "
            f"{sorted(both_removed)[0]}. Retry the operation.", **fields)


def _check_added_files(where: str, winner: WinningCommit, reads: ReadSet, metadata_changed: bool,
                       isolation_level: str, pruner_for, fields: dict) -> None:
    if reads.empty:
        return
    if isolation_level == WRITE_SERIALIZABLE and not metadata_changed and winner.is_blind_append:
        return   # WriteSerializable lets blind appends slip in front of a reader
    added = [a for a in winner.of(AddFile) if a.data_change]
    if not added:
        return
    if reads.whole_table:
        raise ConcurrentAppendException(
            f"{where} and added files to a table this transaction read in full, e.g. "
            f"{added[0].path}. Retry the operation.", error_class=_append_condition(added[0]),
            **fields)
    for predicate in reads.predicates:
        pruner = pruner_for(predicate)
        for a in added:
            if pruner.might_match(a):
                cond = "" if predicate is None else f" matching {predicate.sql(dialect='spark')}"
                raise ConcurrentAppendException(
                    f"{where} and added file {a.path}{cond} — rows this transaction read would "
                    "have included. Retry the operation.", error_class=_append_condition(a),
                    **fields)


def _append_condition(added: AddFile) -> str:
    """delta-spark's condition for a conflicting added file: with a partition hint when the
    file belongs to a partition."""
    hint = "WITH_PARTITION_HINT" if added.partition_values else "WITHOUT_HINT"
    return f"DELTA_CONCURRENT_APPEND.{hint}"


def pruner_factory(snapshot) -> "callable":
    """A function building pruners over a snapshot's schema and partition columns."""
    def build(predicate):
        return Pruner.of(predicate, snapshot)
    return build
