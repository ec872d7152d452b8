"""Row tracking (PROTOCOL.md "Row Tracking"): fresh row ids and row commit versions for every
file a commit adds.

When the ``rowTracking`` writer feature is in the protocol (and ``delta.rowTrackingSuspended`` is
not true), each new ``add`` gets ``baseRowId`` above the table's high-water mark (its rows' fresh
ids are ``baseRowId`` + row position) and ``defaultRowCommitVersion`` = the commit's version, and
the commit raises the high-water mark in a ``delta.rowTracking`` ``domainMetadata`` action. A
file added again (a deletion vector update, a checkpoint) and a ``remove`` keep the values of the
file's last ``add``. Both are assigned when the commit's version is known, so a commit retried
after a concurrent writer took ids gets new ones above that writer's mark.

Turning ``delta.enableRowTracking`` on for a table whose files have no ``baseRowId`` re-adds
those files with one (``dataChange = false``) in the same commit, as the protocol allows.

Stable row ids: when row tracking is enabled, DELETE, UPDATE, MERGE, replaceWhere and OPTIMIZE
write the rows they copy or update with their stable row id, and the copied rows with their row
commit version, in the materialized columns the configuration names
(``sqlext.engine.io.scan.stable_row_id_columns``; an updated row's commit version is cleared so
that it takes the commit's; on column-mapped tables the materialized columns keep their own
names). The writer says so on the transaction (``row_ids_preserved``). Every commit carries the
``commitInfo`` tag ``delta.rowTracking.preserved``: false when it copied rows without their
ids.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Iterable

from sqlext.errors import SqlextError
from sqlext.log import table_properties as props
from sqlext.log.actions import (ROW_ID_FIELDS, Action, AddFile, Metadata, Protocol, RemoveFile,
                                UnknownAction, decode_path)

FEATURE = "rowTracking"
DOMAIN = "delta.rowTracking"
ENABLE_KEY = "delta.enableRowTracking"
SUSPENDED_KEY = "delta.rowTrackingSuspended"
ROW_ID_COLUMN_KEY = "delta.rowTracking.materializedRowIdColumnName"
COMMIT_VERSION_COLUMN_KEY = "delta.rowTracking.materializedRowCommitVersionColumnName"
PRESERVED_TAG = "delta.rowTracking.preserved"
BASE_ROW_ID, DEFAULT_COMMIT_VERSION = ROW_ID_FIELDS


def enabled(configuration: dict[str, str]) -> bool:
    """Whether the configuration turns row tracking on (``delta.enableRowTracking``)."""
    return props.ROW_TRACKING.of(configuration)


def assigns_row_ids(protocol: Protocol | None, metadata: Metadata | None) -> bool:
    """Whether writers must assign row ids: ``rowTracking`` supported and not suspended."""
    if protocol is None or metadata is None:
        return False
    return (FEATURE in (protocol.writer_features or [])
            and not props.ROW_TRACKING_SUSPENDED.of(metadata.configuration))


def materialized_column_names(configuration: dict[str, str]) -> dict[str, str]:
    """The two materialized column names a table with row tracking must have in its
    configuration, for those it lacks (fresh names, as delta-spark makes them)."""
    out = {}
    if ROW_ID_COLUMN_KEY not in configuration:
        out[ROW_ID_COLUMN_KEY] = f"_row-id-col-{uuid.uuid4()}"
    if COMMIT_VERSION_COLUMN_KEY not in configuration:
        out[COMMIT_VERSION_COLUMN_KEY] = f"_row-commit-version-col-{uuid.uuid4()}"
    return out


def high_water_mark(domains: dict[str, dict]) -> int:
    """The highest fresh row id a table has assigned (-1 when none)."""
    domain = domains.get(DOMAIN)
    return -1 if domain is None else _mark_of(domain)


def _mark_of(domain: dict) -> int:
    try:
        return int(json.loads(domain.get("configuration") or "{}")["rowIdHighWaterMark"])
    except (KeyError, ValueError, TypeError):
        return -1


def mark_in(actions: Iterable[Action]) -> int:
    """The high-water mark a commit's actions set (-1 when they set none)."""
    marks = [_mark_of(a.value) for a in actions
             if isinstance(a, UnknownAction) and a.key == "domainMetadata"
             and isinstance(a.value, dict) and a.value.get("domain") == DOMAIN]
    return max(marks, default=-1)


def backfill(files: Iterable[AddFile], committed: Iterable[Action]) -> list[AddFile]:
    """The live ``files`` without a ``baseRowId`` that ``committed`` neither removes nor adds
    again, re-added with ``dataChange = false`` so that :func:`assign` gives them ids."""
    touched = {decode_path(a.path) for a in committed if isinstance(a, (AddFile, RemoveFile))}
    return [dataclasses.replace(f, data_change=False, extra=dict(f.extra))
            for f in files if BASE_ROW_ID not in f.extra and decode_path(f.path) not in touched]


def assign(table: str, actions: list[Action], version: int, mark: int,
           previous: dict[str, AddFile]) -> tuple[list[Action], int]:
    """``actions`` with row ids assigned for commit ``version`` above high-water ``mark``, and
    the new mark. ``previous``: the read snapshot's live files by decoded path."""
    out: list[Action] = []
    for a in actions:
        if isinstance(a, (AddFile, RemoveFile)):
            before = previous.get(decode_path(a.path))
            kept = {k: before.extra[k] for k in ROW_ID_FIELDS
                    if before is not None and k in before.extra}
            if isinstance(a, AddFile) and BASE_ROW_ID not in kept and BASE_ROW_ID not in a.extra:
                rows = _physical_rows(table, version, a)
                kept = {BASE_ROW_ID: mark + 1, DEFAULT_COMMIT_VERSION: version}
                mark += rows
            if kept:
                a = dataclasses.replace(a, extra={**a.extra, **kept})
        out.append(a)
    return out, mark


def _physical_rows(table: str, version: int, add: AddFile) -> int:
    stats = add.parsed_stats() or {}
    rows = stats.get("numRecords")
    if rows is None:
        raise SqlextError(
            f"table {table} (version {version}): the file {add.path} has no numRecords "
            "statistic, so it cannot be given row ids (the table has the rowTracking feature); "
            "nothing was committed and the table is unchanged")
    return int(rows)


def mark_action(mark: int) -> UnknownAction:
    """The ``domainMetadata`` action recording high-water ``mark``."""
    return UnknownAction("domainMetadata", {
        "domain": DOMAIN, "configuration": json.dumps({"rowIdHighWaterMark": mark},
                                                      separators=(",", ":")),
        "removed": False})


def rows_copied(actions: Iterable[Action]) -> bool:
    """Whether a commit may copy or update existing rows into new files (DML rewriting a file,
    OPTIMIZE, an overwrite): it removes a file it does not add again and adds new ones. Their
    stable ids are not preserved here (conservative: an overwrite's new rows count too)."""
    adds = {decode_path(a.path) for a in actions if isinstance(a, AddFile)}
    removes = {decode_path(a.path) for a in actions if isinstance(a, RemoveFile)}
    return bool(removes - adds) and bool(adds - removes)
