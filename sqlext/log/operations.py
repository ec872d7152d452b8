"""The operations sqlext commits, one small frozen dataclass each (model: delta-spark's
``DeltaOperations.scala``).

Each operation holds its ``commitInfo.operation`` name (:attr:`Operation.name`) and typed
parameters; :meth:`Operation.parameters` gives ``commitInfo.operationParameters`` exactly as
delta-spark writes them: a map of strings, where lists and maps are JSON text and booleans are
``"true"`` / ``"false"``. A parameter that is None is left out. Commands build an operation and
hand it to the commit (:meth:`sqlext.log.transaction.Transaction.commit`,
:func:`sqlext.engine.commit.commit`), which records its name and parameters.

The JSON text is byte for byte what earlier releases wrote: some parameters are compact
(``["a","b"]``, as delta-spark), others keep Python's default separators (``["a", "b"]``);
readers parse them, but tests compare the bytes, so each operation keeps its own.
"""

from __future__ import annotations

import dataclasses
import json
from typing import ClassVar

_COMPACT = {"separators": (",", ":")}
#: a struct field's keys in the order Spark writes them
_FIELD_KEYS = ("name", "type", "nullable", "metadata")


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _strings(values: dict) -> dict[str, str]:
    """``values`` without the None entries (every other value is already text)."""
    return {k: v for k, v in values.items() if v is not None}


@dataclasses.dataclass(frozen=True)
class Operation:
    """An operation a commit records; subclasses set :attr:`name` and their parameters."""

    name: ClassVar[str] = ""

    def parameters(self) -> dict[str, str]:
        """``commitInfo.operationParameters`` of this operation (a map of strings)."""
        return {}


# --- data -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Write(Operation):
    """``WRITE``: an append or overwrite (``mode`` as delta-spark spells it: ``Append``,
    ``Overwrite``, ``ErrorIfExists``, ``Ignore``); ``predicate`` is a replaceWhere's text
    itself, not a JSON list, as in delta-spark."""

    name: ClassVar[str] = "WRITE"
    mode: str
    partition_by: tuple[str, ...] = ()
    predicate: str | None = None
    dynamic_partition_overwrite: bool = False
    can_merge_schema: bool = False

    def parameters(self) -> dict[str, str]:
        """``mode``, ``partitionBy`` and, when they apply, ``predicate``,
        ``isDynamicPartitionOverwrite`` and ``canMergeSchema``."""
        return _strings({
            "mode": self.mode, "partitionBy": json.dumps(list(self.partition_by)),
            "predicate": self.predicate,
            "isDynamicPartitionOverwrite": "true" if self.dynamic_partition_overwrite else None,
            "canMergeSchema": "true" if self.can_merge_schema else None})


@dataclasses.dataclass(frozen=True)
class StreamingUpdate(Operation):
    """``STREAMING UPDATE``: one micro-batch of a streaming write. It commits through the
    write path, which records :class:`Write`'s parameters followed by these."""

    name: ClassVar[str] = "STREAMING UPDATE"
    output_mode: str
    query_id: str
    epoch_id: int

    def parameters(self) -> dict[str, str]:
        """``outputMode``, ``queryId`` and ``epochId``."""
        return {"outputMode": self.output_mode, "queryId": self.query_id,
                "epochId": str(self.epoch_id)}


@dataclasses.dataclass(frozen=True)
class WriteAs(Operation):
    """A write committed as another operation (:class:`StreamingUpdate`, one
    :class:`CreateTable` AS SELECT): ``operation``'s name, ``write``'s parameters followed by
    ``operation``'s (a key both have keeps its place among ``write``'s, with ``operation``'s
    value)."""

    write: Write
    operation: Operation

    @property
    def name(self) -> str:  # type: ignore[override]
        """The other operation's name."""
        return self.operation.name

    def parameters(self) -> dict[str, str]:
        """:class:`Write`'s parameters, then the other operation's."""
        return {**self.write.parameters(), **self.operation.parameters()}


def _predicate_list(predicate: str | None, **dumps) -> str:
    return json.dumps([predicate] if predicate is not None else [], **dumps)


@dataclasses.dataclass(frozen=True)
class Delete(Operation):
    """``DELETE`` (also TRUNCATE TABLE, as sqlext runs it): ``predicate`` is the condition's
    SQL, None without one."""

    name: ClassVar[str] = "DELETE"
    predicate: str | None = None

    def parameters(self) -> dict[str, str]:
        """``predicate``: a JSON list holding the condition (empty without one)."""
        return {"predicate": _predicate_list(self.predicate)}


@dataclasses.dataclass(frozen=True)
class Update(Delete):
    """``UPDATE``: ``predicate`` is the WHERE condition's SQL, None without one."""

    name: ClassVar[str] = "UPDATE"


@dataclasses.dataclass(frozen=True)
class Merge(Operation):
    """``MERGE``: the ON condition's SQL and each clause kind's list of
    ``{"predicate": ..., "actionType": ...}`` maps (delta-spark's ``MergePredicate``)."""

    name: ClassVar[str] = "MERGE"
    predicate: str
    matched: tuple[dict, ...] = ()
    not_matched: tuple[dict, ...] = ()
    not_matched_by_source: tuple[dict, ...] = ()

    def parameters(self) -> dict[str, str]:
        """``predicate``, ``matchedPredicates``, ``notMatchedPredicates`` and
        ``notMatchedBySourcePredicates``, compact JSON."""
        return {"predicate": json.dumps([self.predicate], **_COMPACT),
                "matchedPredicates": json.dumps(list(self.matched), **_COMPACT),
                "notMatchedPredicates": json.dumps(list(self.not_matched), **_COMPACT),
                "notMatchedBySourcePredicates": json.dumps(list(self.not_matched_by_source),
                                                           **_COMPACT)}


# --- table definition -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CreateTable(Operation):
    """``CREATE TABLE``, ``CREATE OR REPLACE TABLE`` (``replace``), each with ``AS SELECT``
    (``as_select``). One AS SELECT commits through the write path, which records
    :class:`Write`'s parameters followed by these."""

    managed: bool
    partition_by: tuple[str, ...] = ()
    properties: dict[str, str] = dataclasses.field(default_factory=dict)
    description: str | None = None
    replace: bool = False
    as_select: bool = False

    @property
    def name(self) -> str:  # type: ignore[override]
        """The operation's name: which of the four forms this is."""
        return (("CREATE OR REPLACE TABLE" if self.replace else "CREATE TABLE")
                + (" AS SELECT" if self.as_select else ""))

    def parameters(self) -> dict[str, str]:
        """``isManaged``, ``description`` (when there is one), ``partitionBy``, ``properties``."""
        return _strings({"isManaged": _flag(self.managed), "description": self.description,
                         "partitionBy": json.dumps(list(self.partition_by)),
                         "properties": json.dumps(self.properties)})


@dataclasses.dataclass(frozen=True)
class AddColumns(Operation):
    """``ADD COLUMNS``: the new fields, each in the schema's JSON form."""

    name: ClassVar[str] = "ADD COLUMNS"
    columns: tuple[dict, ...]

    def parameters(self) -> dict[str, str]:
        """``columns``: a JSON list of ``{"column": field}``."""
        return {"columns": json.dumps([{"column": c} for c in self.columns])}


@dataclasses.dataclass(frozen=True)
class ChangeColumn(Operation):
    """``CHANGE COLUMN`` (comment, nullability, identity high-water mark, type widening): the
    changed field in the schema's JSON form."""

    name: ClassVar[str] = "CHANGE COLUMN"
    column: dict
    position: str | None = None

    def parameters(self) -> dict[str, str]:
        """``column``: the field, compact JSON, its keys in delta-spark's order (``name``
        the field's dotted path); ``position`` (``FIRST``, ``AFTER c``) when it moved."""
        ordered = {k: self.column[k] for k in _FIELD_KEYS if k in self.column}
        out = {"column": json.dumps({**ordered, **self.column}, **_COMPACT)}
        if self.position is not None:
            out["position"] = self.position
        return out


@dataclasses.dataclass(frozen=True)
class RenameColumn(Operation):
    """``RENAME COLUMN``: the field's path before and after (``["s", "a"]`` for a struct
    field)."""

    name: ClassVar[str] = "RENAME COLUMN"
    old_path: tuple[str, ...]
    new_path: tuple[str, ...]

    def parameters(self) -> dict[str, str]:
        """``oldColumnPath`` and ``newColumnPath``, dotted."""
        return {"oldColumnPath": ".".join(self.old_path),
                "newColumnPath": ".".join(self.new_path)}


@dataclasses.dataclass(frozen=True)
class DropColumns(Operation):
    """``DROP COLUMNS``: the dotted paths of the dropped columns or fields."""

    name: ClassVar[str] = "DROP COLUMNS"
    columns: tuple[str, ...]

    def parameters(self) -> dict[str, str]:
        """``columns``: a JSON list of the dotted paths."""
        return {"columns": json.dumps(list(self.columns))}


@dataclasses.dataclass(frozen=True)
class SetTableProperties(Operation):
    """``SET TBLPROPERTIES``: the properties as the caller gave them."""

    name: ClassVar[str] = "SET TBLPROPERTIES"
    properties: dict

    def parameters(self) -> dict[str, str]:
        """``properties``: a JSON map."""
        return {"properties": json.dumps(self.properties)}


@dataclasses.dataclass(frozen=True)
class UnsetTableProperties(Operation):
    """``UNSET TBLPROPERTIES [IF EXISTS]``: the keys removed."""

    name: ClassVar[str] = "UNSET TBLPROPERTIES"
    keys: tuple[str, ...]
    if_exists: bool = False

    def parameters(self) -> dict[str, str]:
        """``properties`` (a JSON list of the keys) and ``ifExists``."""
        return {"properties": json.dumps(list(self.keys)), "ifExists": _flag(self.if_exists)}


@dataclasses.dataclass(frozen=True)
class AddConstraint(Operation):
    """``ADD CONSTRAINT``: a CHECK constraint's name and expression."""

    name: ClassVar[str] = "ADD CONSTRAINT"
    constraint: str
    expr: str

    def parameters(self) -> dict[str, str]:
        """``name`` and ``expr``."""
        return {"name": self.constraint, "expr": self.expr}


@dataclasses.dataclass(frozen=True)
class DropConstraint(Operation):
    """``DROP CONSTRAINT``: the name, and the expression when the table had the constraint."""

    name: ClassVar[str] = "DROP CONSTRAINT"
    constraint: str
    expr: str | None = None

    def parameters(self) -> dict[str, str]:
        """``name`` and, when the constraint existed, ``expr``."""
        return _strings({"name": self.constraint, "expr": self.expr})


# --- maintenance ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Optimize(Operation):
    """``OPTIMIZE [WHERE ...] [ZORDER BY ...]``: the WHERE condition's SQL (None without one)
    and the Z-order columns."""

    name: ClassVar[str] = "OPTIMIZE"
    predicate: str | None = None
    zorder_by: tuple[str, ...] = ()

    def parameters(self) -> dict[str, str]:
        """``predicate``, ``zOrderBy`` (compact JSON lists), ``clusterBy`` and ``auto``."""
        return {"predicate": _predicate_list(self.predicate, **_COMPACT),
                "zOrderBy": json.dumps(list(self.zorder_by), **_COMPACT),
                "clusterBy": "[]", "auto": "false"}


@dataclasses.dataclass(frozen=True)
class Reorg(Operation):
    """``REORG`` (``REORG TABLE ... APPLY (PURGE)``): the WHERE condition's SQL, None without
    one."""

    name: ClassVar[str] = "REORG"
    predicate: str | None = None

    def parameters(self) -> dict[str, str]:
        """``predicate`` (a compact JSON list) and ``applyPurge``."""
        return {"predicate": _predicate_list(self.predicate, **_COMPACT), "applyPurge": "true"}


@dataclasses.dataclass(frozen=True)
class Restore(Operation):
    """``RESTORE``: to ``version``, or to ``timestamp`` (the text the user gave)."""

    name: ClassVar[str] = "RESTORE"
    version: int | None = None
    timestamp: str | None = None

    def parameters(self) -> dict[str, str]:
        """``version`` or ``timestamp``, whichever the restore was asked for."""
        return _strings({"version": None if self.version is None else str(self.version),
                         "timestamp": self.timestamp})


@dataclasses.dataclass(frozen=True)
class VacuumStart(Operation):
    """``VACUUM START``: whether the retention check ran, the table's retention and the one
    the user gave (None when none was)."""

    name: ClassVar[str] = "VACUUM START"
    retention_check_enabled: bool
    default_retention_millis: int
    specified_retention_millis: int | None = None

    def parameters(self) -> dict[str, str]:
        """``retentionCheckEnabled``, ``defaultRetentionMillis`` and, when given,
        ``specifiedRetentionMillis``."""
        specified = self.specified_retention_millis
        return _strings({"retentionCheckEnabled": _flag(self.retention_check_enabled),
                         "defaultRetentionMillis": str(self.default_retention_millis),
                         "specifiedRetentionMillis": None if specified is None
                         else str(specified)})


@dataclasses.dataclass(frozen=True)
class VacuumEnd(Operation):
    """``VACUUM END``: ``status`` is :attr:`COMPLETED` or :attr:`FAILED`."""

    name: ClassVar[str] = "VACUUM END"
    COMPLETED: ClassVar[str] = "COMPLETED"
    FAILED: ClassVar[str] = "FAILED"
    status: str

    def parameters(self) -> dict[str, str]:
        """``status``."""
        return {"status": self.status}


@dataclasses.dataclass(frozen=True)
class Convert(Operation):
    """``CONVERT`` (``CONVERT TO DELTA``): how many files, the partition columns, whether
    statistics were collected."""

    name: ClassVar[str] = "CONVERT"
    num_files: int
    partitioned_by: tuple[str, ...] = ()
    collect_stats: bool = True

    def parameters(self) -> dict[str, str]:
        """``numFiles``, ``partitionedBy`` (a JSON list) and ``collectStats``."""
        return {"numFiles": str(self.num_files),
                "partitionedBy": json.dumps(list(self.partitioned_by)),
                "collectStats": _flag(self.collect_stats)}


@dataclasses.dataclass(frozen=True)
class Clone(Operation):
    """``CLONE``: the source table as the user named it and the version cloned."""

    name: ClassVar[str] = "CLONE"
    source: str
    source_version: int
    is_shallow: bool = True

    def parameters(self) -> dict[str, str]:
        """``source``, ``sourceVersion`` and ``isShallow``."""
        return {"source": self.source, "sourceVersion": str(self.source_version),
                "isShallow": _flag(self.is_shallow)}


#: every operation class, for code that lists or looks them up
OPERATIONS: tuple[type[Operation], ...] = (
    Write, StreamingUpdate, WriteAs, Delete, Update, Merge, CreateTable, AddColumns, ChangeColumn,
    RenameColumn, DropColumns, SetTableProperties, UnsetTableProperties, AddConstraint,
    DropConstraint, Optimize, Reorg, Restore, VacuumStart, VacuumEnd, Convert, Clone)
