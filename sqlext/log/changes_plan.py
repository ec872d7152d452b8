"""Planning a change feed read from the log alone (no Spark): the versions a request names, the
checks delta-spark makes on them, and the files whose rows are the changes.

Per version, as PROTOCOL.md says: when the commit has ``cdc`` actions its changes are the rows of
those files (each row carries its ``_change_type``); otherwise the files ``add``-ed with
``dataChange=true`` hold inserted rows and the files ``remove``-d with ``dataChange=true`` hold
deleted rows (less the rows their deletion vectors delete; a file whose deletion vector a commit
replaced changed only by the rows the two vectors differ in). Like delta-spark, a MERGE whose metrics say it inserted, updated and deleted nothing
yields no changes, and the change feed must be enabled at the first version of the range and not
disabled by any later one.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass, field

from sqlext.errors import (ChangeDataFeedError, ChangeDataFilesMissingError,
                           ChangeDataRangeError, VersionNotFoundException)
from sqlext.log import operations as ops
from sqlext.log import table_properties as props
from sqlext.log.actions import (Action, AddCDCFile, AddFile, CommitInfo, Metadata, Protocol,
                                RemoveFile, decode_path)
from sqlext.log.column_mapping import PHYSICAL_NAME_KEY
from sqlext.log.protocol import check_readable
from sqlext.log.segment import LogListing
from sqlext.log.snapshot import Snapshot
from sqlext.log.storage import is_local
from sqlext.log.table import DeltaLog

INSERT, DELETE = "insert", "delete"
PREIMAGE, POSTIMAGE = "update_preimage", "update_postimage"
CHANGE_TYPE, COMMIT_VERSION, COMMIT_TIMESTAMP = "_change_type", "_commit_version", "_commit_timestamp"
_CDF_KEY = "delta.enableChangeDataFeed"


@dataclass(frozen=True)
class ChangeFile:
    """A file whose rows are changes of one version."""

    path: str                                   # as in the log
    partition_values: dict[str, str | None]
    version: int
    timestamp: int                              # commit time, ms since the epoch
    change_type: str | None                     # insert/delete; None: a cdc file, typed per row
    stats: str | None = None
    deletion_vector: dict | None = None         # rows of the file that are not changes
    # (A, B): only the rows deletion vector A deletes and B does not are changes
    selection: tuple[dict, dict | None] | None = None
    size: int | None = None                     # bytes, when the action gives it


@dataclass
class ChangePlan:
    """What a change feed read of versions ``start..end`` (inclusive) reads."""

    start: int
    end: int
    metadata: Metadata                          # of the end version: the result's schema
    files: list[ChangeFile] = field(default_factory=list)
    inferred_rewrites: list[int] = field(default_factory=list)   # versions that may hold carry-overs


@dataclass(frozen=True)
class RangeRequest:
    """The bounds a caller gave; timestamps already in ms since the epoch."""

    starting_version: int | None = None
    ending_version: int | None = None
    starting_timestamp: int | None = None
    ending_timestamp: int | None = None


def resolve_range(log: DeltaLog, listing: LogListing, times: dict[int, int],
                  request: RangeRequest) -> tuple[int, int] | None:
    """The inclusive version range a request names, or None when it names no commit at all
    (two timestamps that fall between the same two commits, as delta-spark answers it).

    A start timestamp resolves to the first commit at or after it, an end timestamp to the last
    commit at or before it; an end past the latest version is capped at the latest.
    """
    name, r = log.name, request
    if r.starting_version is not None and r.starting_timestamp is not None:
        raise ChangeDataFeedError(f"table {name}: give startingVersion or startingTimestamp for "
                                  "a change feed read, not both", table=name,
                                  error_class="DELTA_MULTIPLE_CDC_BOUNDARY",
                                  message_parameters={"startingOrEnding": "starting"})
    if r.ending_version is not None and r.ending_timestamp is not None:
        raise ChangeDataFeedError(f"table {name}: give endingVersion or endingTimestamp for a "
                                  "change feed read, not both", table=name,
                                  error_class="DELTA_MULTIPLE_CDC_BOUNDARY",
                                  message_parameters={"startingOrEnding": "ending"})
    if r.starting_version is None and r.starting_timestamp is None:
        raise ChangeDataFeedError(
            f"table {name}: a change feed read needs a start: give startingVersion (e.g. 0) or "
            "startingTimestamp (SQL: CHANGES FROM VERSION n)", table=name,
            error_class="DELTA_NO_START_FOR_CDC_READ")
    latest = listing.latest_version
    earliest = listing.earliest_commit
    if earliest is None:
        raise ChangeDataFeedError(f"table {name}: the log holds no commit files (only a "
                                  "checkpoint), so no version's changes can be read")
    if r.starting_version is not None:
        start = _version(r.starting_version, "startingVersion", name)
        if start > latest:
            raise ChangeDataRangeError(
                f"table {name}: startingVersion {start} is after the latest version {latest}; "
                f"start at version {latest} or earlier", table=name, version=start,
                error_class="DELTA_CDC_START_VERSION_AFTER_LATEST",
                message_parameters={"start": start, "latest": latest})
    else:
        after = [v for v, t in times.items() if t >= r.starting_timestamp]
        if not after:
            raise ChangeDataFeedError(
                f"table {name}: startingTimestamp {_fmt(r.starting_timestamp)} is after the "
                f"latest commit (version {latest} at {_fmt(times[max(times)])}); no changes were "
                "committed since. Use an earlier timestamp", table=name,
                error_class="DELTA_TIMESTAMP_GREATER_THAN_COMMIT")
        start = min(after)
    if r.ending_version is not None:
        end = min(_version(r.ending_version, "endingVersion", name), latest)
    elif r.ending_timestamp is not None:
        before = [v for v, t in times.items() if t <= r.ending_timestamp]
        if not before:
            raise ChangeDataFeedError(
                f"table {name}: endingTimestamp {_fmt(r.ending_timestamp)} is before the earliest "
                f"available commit (version {earliest} at {_fmt(times[earliest])}); use a later "
                "timestamp")
        end = max(before)
    else:
        end = latest
    if r.starting_timestamp is not None and r.ending_timestamp is not None:
        if r.starting_timestamp > r.ending_timestamp:
            raise ChangeDataFeedError(
                f"table {name}: endingTimestamp {_fmt(r.ending_timestamp)} is before "
                f"startingTimestamp {_fmt(r.starting_timestamp)}")
        if end == start - 1:
            return None
    if end < start:
        raise ChangeDataRangeError(
            f"table {name}: the change feed range ends at version {end}, before its start "
            f"version {start}; give an end at or after the start", table=name,
            error_class="DELTA_INVALID_CDC_RANGE", message_parameters={"start": start, "end": end})
    if start < earliest:
        raise ChangeDataFeedError(
            f"table {name}: the commit of version {start} is no longer in the log (log retention "
            f"removed versions before {earliest}); start at version {earliest} or later")
    return start, end


def plan_changes(log: DeltaLog, listing: LogListing, times: dict[int, int], start: int,
                 end: int) -> ChangePlan:
    """The files holding the changes of versions ``start..end``, after delta-spark's checks:
    the feed is enabled for the whole range, no column is dropped or retyped inside it, and
    sqlext can read every version."""
    try:
        snapshot = log.snapshot(start, listing)
    except VersionNotFoundException as exc:
        raise ChangeDataFeedError(f"table {log.name}: version {start} cannot be rebuilt from "
                                  f"the log ({exc}); start at a later version") from exc
    if not snapshot.change_data_feed_enabled:
        raise _not_recorded(log.name, start, start, end)
    metadata, protocol = snapshot.metadata, snapshot.protocol
    plan = ChangePlan(start, end, metadata)
    for v in range(start, end + 1):
        actions = _commit(log, v)
        for a in actions:
            if isinstance(a, Metadata):
                if v > start:
                    _check_schema_change(log.name, metadata, a, v, start, end)
                if not props.CHANGE_DATA_FEED.of(a.configuration):
                    raise _not_recorded(log.name, v, start, end)
                metadata = a
            elif isinstance(a, Protocol):
                protocol = a
        check_readable(log.name, v, protocol, metadata)
        _add_version(log, listing, plan, v, times[v], actions, metadata)
    plan.metadata = metadata
    return plan


def check_files_present(log: DeltaLog, plan: ChangePlan) -> None:
    """Raise :class:`ChangeDataFilesMissingError` when a file of the plan is gone (local tables;
    elsewhere Spark reports it when reading). Fewer rows than were committed are never returned."""
    if not is_local(log.location):
        return
    missing = [f for f in plan.files if not os.path.exists(log.data_path(f.path))]
    if not missing:
        return
    last = max(f.version for f in missing)
    first = missing[0]
    kind = "change data file" if first.change_type is None else (
        "removed data file" if first.change_type == DELETE else "data file")
    versions = sorted({f.version for f in missing})
    raise ChangeDataFilesMissingError(
        f"table {log.name}: the changes of version(s) {_list(versions)} cannot be read: "
        f"{len(missing)} file(s) are missing, e.g. {kind} {decode_path(first.path)} of version "
        f"{first.version} (removed by VACUUM, or lost). Read a range starting after version "
        f"{last}; changes older than the VACUUM retention period are gone")


def _add_version(log: DeltaLog, listing: LogListing, plan: ChangePlan, v: int, ts: int,
                 actions: list[Action], metadata: Metadata) -> None:
    cdc = [a for a in actions if isinstance(a, AddCDCFile)]
    if cdc:
        plan.files += [ChangeFile(a.path, dict(a.partition_values), v, ts, None, size=a.size)
                       for a in cdc]
        return
    if _no_op_merge(actions):
        return
    adds = [a for a in actions if isinstance(a, AddFile) and a.data_change]
    removes = [a for a in actions if isinstance(a, RemoveFile) and a.data_change]
    # a file removed and added again in one commit with another deletion vector: its changes
    # are the rows the new vector deletes and the old did not (deleted), and the reverse
    # (inserted back), as delta-spark's change feed computes them
    added = {decode_path(a.path): a for a in adds}
    paired = {decode_path(r.path) for r in removes
              if decode_path(r.path) in added
              and (r.deletion_vector or added[decode_path(r.path)].deletion_vector)}
    for r in removes:
        key = decode_path(r.path)
        if key not in paired:
            continue
        new_dv, old_dv = added[key].deletion_vector, r.deletion_vector
        values = dict(added[key].partition_values)
        if new_dv:
            plan.files.append(ChangeFile(r.path, values, v, ts, DELETE, added[key].stats,
                                         selection=(new_dv, old_dv), size=r.size))
        if old_dv:
            plan.files.append(ChangeFile(r.path, values, v, ts, INSERT, added[key].stats,
                                         selection=(old_dv, new_dv), size=r.size))
    adds = [a for a in adds if decode_path(a.path) not in paired]
    removes = [r for r in removes if decode_path(r.path) not in paired]
    plan.files += [ChangeFile(a.path, dict(a.partition_values), v, ts, INSERT, a.stats,
                              a.deletion_vector, size=a.size) for a in adds]
    before: Snapshot | None = None
    for r in removes:
        values = r.partition_values
        if metadata.partition_columns and not _has_values(values, metadata.partition_columns):
            # an old writer's remove without partition values: take them from the file's add
            before = before or log.snapshot(v - 1, listing)
            add = before.files_by_path.get(decode_path(r.path))
            values = add.partition_values if add is not None else {}
        plan.files.append(ChangeFile(r.path, dict(values or {}), v, ts, DELETE, r.stats,
                                     r.deletion_vector, size=r.size))
    if adds and removes:
        plan.inferred_rewrites.append(v)


def _has_values(values: dict | None, columns: list[str]) -> bool:
    return values is not None and {c.lower() for c in columns} <= {k.lower() for k in values}


def _no_op_merge(actions: list[Action]) -> bool:
    """delta-spark's guard: a MERGE that rewrote files but changed no row has no changes."""
    info = next((a for a in actions if isinstance(a, CommitInfo)), None)
    if info is None or info.values.get("operation") != ops.Merge.name:
        return False
    metrics = info.values.get("operationMetrics") or {}
    return all(str(metrics.get(k)) == "0" for k in
               ("numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted"))


def _commit(log: DeltaLog, v: int) -> list[Action]:
    try:
        return log.read_commit(v)
    except VersionNotFoundException as exc:
        raise ChangeDataFeedError(
            f"table {log.name}: the commit of version {v} is missing from the log, so its "
            f"changes cannot be read ({exc}); read a range after version {v}") from exc


def _check_schema_change(name: str, old: Metadata, new: Metadata, v: int, start: int,
                         end: int) -> None:
    problem = _incompatibility(json.loads(old.schema_string), json.loads(new.schema_string), "")
    if problem is None:
        return
    raise ChangeDataFeedError(
        f"table {name}: {problem} at version {v}, inside the change feed range {start}..{end}; "
        "rows before and after that change do not fit one schema. Read the range in two parts: "
        f"{start}..{v - 1} and {v}..{end}")


def _incompatibility(old, new, path: str) -> str | None:
    """Why rows of type ``old`` cannot be read as ``new`` (None when only columns were added)."""
    if isinstance(old, dict) and old.get("type") == "struct":
        if not (isinstance(new, dict) and new.get("type") == "struct"):
            return f"column {path.rstrip('.') or '<root>'} changed type"
        fields = {f["name"].lower(): f for f in new.get("fields", [])}
        for f in old.get("fields", []):
            target = fields.get(f["name"].lower())
            if target is None:
                renamed = _same_physical(f, new.get("fields", []))
                if renamed is not None:   # column mapping: the data stayed, the name changed
                    return f"column {path}{f['name']} was renamed to {path}{renamed}"
                return f"column {path}{f['name']} was dropped"
            problem = _incompatibility(f["type"], target["type"], f"{path}{f['name']}.")
            if problem:
                return problem
        return None
    if isinstance(old, dict) and isinstance(new, dict) and old.get("type") == new.get("type"):
        keys = ("elementType",) if old.get("type") == "array" else ("keyType", "valueType")
        for k in keys:
            problem = _incompatibility(old.get(k), new.get(k), path)
            if problem:
                return problem
        return None
    if isinstance(old, str) and isinstance(new, str) and old.lower() == new.lower():
        return None
    return f"column {path.rstrip('.')} changed type from {_type_text(old)} to {_type_text(new)}"


def _same_physical(old_field: dict, new_fields: list[dict]) -> str | None:
    """The name of the field of ``new_fields`` with ``old_field``'s physical name, if any."""
    meta = old_field.get("metadata") or {}
    if PHYSICAL_NAME_KEY not in meta:
        return None
    for f in new_fields:
        if (f.get("metadata") or {}).get(PHYSICAL_NAME_KEY) == meta[PHYSICAL_NAME_KEY]:
            return f["name"]
    return None


def _type_text(t) -> str:
    return t if isinstance(t, str) else str(t.get("type"))


def _not_recorded(name: str, version: int, start: int, end: int) -> ChangeDataFeedError:
    return ChangeDataFeedError(
        f"table {name}: the change data feed was not enabled at version {version}, so the changes "
        f"of versions {start}..{end} were not all recorded. Read a range in which "
        "delta.enableChangeDataFeed is true throughout (DESCRIBE HISTORY shows when it was "
        "enabled), or enable it for future versions with ALTER TABLE ... SET TBLPROPERTIES "
        "(delta.enableChangeDataFeed = true)", error_class="DELTA_MISSING_CHANGE_DATA",
        table=name, version=version,
        message_parameters={"startVersion": start, "endVersion": end, "version": version,
                            "key": _CDF_KEY})


def _version(value, option: str, name: str) -> int:
    try:
        v = int(value)
    except (TypeError, ValueError):
        v = -1
    if isinstance(value, bool) or v < 0 or (isinstance(value, float) and value != v):
        raise ChangeDataFeedError(f"table {name}: {option} must be a version number (an integer "
                                  f">= 0), not {value!r}")
    return v


def _fmt(ms: int) -> str:
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc).isoformat(
        timespec="milliseconds")


def _list(versions: list[int]) -> str:
    shown = ", ".join(str(v) for v in versions[:10])
    return shown + (f" and {len(versions) - 10} more" if len(versions) > 10 else "")
