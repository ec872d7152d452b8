"""VACUUM: delete the files under a table that no version within the retention refers to. No
Spark needed (the Spark-side entry point is :mod:`sqlext.engine.maintenance.vacuum`).

As delta-spark's VacuumCommand: a file is kept when the latest snapshot adds it, when a tombstone
removed it less than the retention ago (``delta.deletedFileRetentionDuration``, 7 days by
default, or ``RETAIN n HOURS``), or when it was modified less than the retention ago (files of
writes still in flight, change data files of recent versions). Directories left empty are
removed too.

Unlike delta-spark, an unreferenced file older than the retention is deleted only when VACUUM
knows a table wrote it: the log (the snapshot's tombstones, or an action in a commit still in
``_delta_log``) names it, or its name is one a Delta writer gives its files — data files
``part-NNNNN-<uuid>...parquet`` (sqlext, delta-spark, delta-rs), change files
``_change_data/cdc-...parquet``, deletion vectors ``deletion_vector_<uuid>.bin`` — or it lies
in sqlext's staging directory ``_sqlext_staging`` (:func:`sqlext.log.layout.written_by_delta_writer`).
Those are files of old versions and orphans of failed writes. Any other file (a user's
``data.parquet``, a CSV another tool put there) stays, whatever its age; VACUUM logs a warning
naming them (adopt parquet files with CONVERT TO DELTA, or move them away) and does not list them
in its result, dry run or not.

Never touched: ``_delta_log``; hidden entries (names starting with ``.`` or ``_``) other than
``_change_data``, ``_sqlext_staging`` and ``<partition column>=...`` directories; anything
outside the table directory (absolute paths in the log are ignored); symbolic links, which are
neither followed nor deleted.

A retention shorter than the table's is refused unless ``check_retention=False`` (Spark:
``spark.databricks.delta.retentionDurationCheck.enabled=false``). Like delta-spark, a VACUUM that
deletes (not a dry run) records two empty commits, ``VACUUM START`` (files and bytes to delete)
and ``VACUUM END`` (status, files deleted), unless ``log_commits=False``. They carry no actions,
so they never conflict with other writers.

``LITE`` mode (Delta 3.3) skips the directory listing: it deletes only the files named by
``remove`` actions (and the ``cdc`` files of commits) older than the retention, found in the
commits since the last completed VACUUM; orphans of failed writes stay until a full VACUUM.
"""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from sqlext.errors import (UnsupportedOperationError, VacuumRetentionError,
                           VersionNotFoundException)
from sqlext.log import operations as ops
from sqlext.log.actions import AddCDCFile, AddFile, RemoveFile, decode_path
from sqlext.log.deletion_vectors import DeletionVectorDescriptor
from sqlext.log.layout import CHANGE_DATA_DIR, LOG_DIR, STAGING_DIR, written_by_delta_writer
from sqlext.log.protocol import check_readable, check_writable
from sqlext.log.retention import deleted_file_retention_ms
from sqlext.log.snapshot import Snapshot
from sqlext.log.storage import is_local
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import ENGINE_INFO

log = logging.getLogger("sqlext")

RETENTION_CHECK_CONF = "spark.databricks.delta.retentionDurationCheck.enabled"
_REPORTED_NAMES = 10       # foreign files named in the warning; the rest are counted


@dataclass
class VacuumResult:
    """What a VACUUM deleted (or, in a dry run, would delete)."""

    location: str
    dry_run: bool
    retention_ms: int
    cutoff_ms: int                  # files older than this (ms since the epoch) could go
    files: list[str] = field(default_factory=list)        # full paths of files
    directories: list[str] = field(default_factory=list)  # full paths of emptied directories
    bytes: int = 0
    directories_listed: int = 0
    skipped_symlinks: int = 0
    foreign: list[str] = field(default_factory=list)    # full paths of files kept: no table wrote them
    start_version: int | None = None     # the VACUUM START / END commits, when logged
    end_version: int | None = None

    @property
    def paths(self) -> list[str]:
        """Files, then directories: what the ``path`` column of VACUUM's result lists."""
        return self.files + self.directories


# --- what stays ---------------------------------------------------------------------------------


def _relative(log_: DeltaLog, action_path: str, root: str) -> str | None:
    """The path of an action's file relative to the table root (``/``-separated), or None when
    it lies outside the table."""
    if "://" not in action_path and not action_path.startswith(("/", "file:")):
        rel = decode_path(action_path)             # the usual case: already relative
    else:
        full = log_.data_path(action_path)
        sep = os.sep if is_local(root) else "/"
        prefix = root.rstrip(sep) + sep
        if not full.startswith(prefix):
            return None
        rel = full[len(prefix):].replace(os.sep, "/") if sep == os.sep else full[len(prefix):]
    parts = rel.split("/")
    if ".." in parts or "" in parts or "." in parts:
        return None                                # not a plain path below the table
    return rel


def referenced_files(log_: DeltaLog, snapshot: Snapshot, cutoff_ms: int) -> set[str]:
    """Relative paths that must stay: the snapshot's live files, and the files of tombstones
    newer than ``cutoff_ms`` (or without a deletion timestamp)."""
    keep: set[str] = set()
    root = log_.location
    for f in snapshot.files_by_path.values():
        keep.update(_action_files(log_, f.path, f.deletion_vector, root))
    for r in snapshot.tombstones.values():
        if r.deletion_timestamp is None or r.deletion_timestamp >= cutoff_ms:
            keep.update(_action_files(log_, r.path, r.deletion_vector, root))
    return keep


def _action_files(log_: DeltaLog, path: str, deletion_vector: dict | None, root: str) -> list[str]:
    """The files an action needs, relative to the table: its data file and the file of its
    deletion vector (``u`` descriptors: a file under the table)."""
    out = [_relative(log_, path, root)]
    if deletion_vector and deletion_vector.get("storageType") == "u":
        out.append(DeletionVectorDescriptor.from_dict(deletion_vector).relative_path())
    return [rel for rel in out if rel is not None]


# --- listing ------------------------------------------------------------------------------------


def _hidden(name: str, partition_columns: list[str]) -> bool:
    """delta-spark's ``isHiddenDirectory``, plus sqlext's staging directory as collectable."""
    if name in (CHANGE_DATA_DIR, STAGING_DIR) or name.startswith(CHANGE_DATA_DIR):
        return False
    if not name.startswith((".", "_")):
        return False
    return not any(name.startswith(f"{c}=") for c in partition_columns)


def _named_in_log(log_: DeltaLog, snapshot: Snapshot, rels: set[str]) -> set[str]:
    """Which of ``rels`` the log names: a tombstone of ``snapshot``, or an ``add``, ``remove`` or
    ``cdc`` action of a commit still in ``_delta_log`` (tombstones expire from checkpoints before
    log cleanup removes the commits that wrote them)."""
    root = log_.location
    named = {_relative(log_, r.path, root) for r in snapshot.tombstones.values()} & rels
    for v in log_.listing().commits:
        if named == rels:
            break
        try:
            actions = log_.read_commit(v)
        except VersionNotFoundException:
            continue                          # cleaned up meanwhile
        named |= {_relative(log_, a.path, root) for a in actions
                  if isinstance(a, (AddFile, RemoveFile, AddCDCFile))} & rels
    return named


def _without_foreign(log_: DeltaLog, snapshot: Snapshot,
                     candidates: list[tuple[str, int, int]]) -> tuple[list, list[str]]:
    """Split unreferenced files into those a table wrote (to delete) and the others (kept,
    returned as relative paths)."""
    unknown = {rel for rel, _, _ in candidates if not written_by_delta_writer(rel)}
    if not unknown:
        return candidates, []
    foreign = unknown - _named_in_log(log_, snapshot, unknown)
    return [c for c in candidates if c[0] not in foreign], sorted(foreign)


def _warn_foreign(log_: DeltaLog, foreign: list[str]) -> None:
    shown = ", ".join(foreign[:_REPORTED_NAMES])
    more = f" and {len(foreign) - _REPORTED_NAMES} more" if len(foreign) > _REPORTED_NAMES else ""
    log.warning(
        "table %s: VACUUM kept %d file(s) no table wrote and the log never referenced: %s%s. "
        "They are not part of the table. To add parquet files to it, CONVERT TO DELTA a directory "
        "holding them (CONVERT TO DELTA parquet.`/dir`); otherwise move them out of the table's "
        "directory.", log_.name, len(foreign), shown, more)


@dataclass
class _Dir:
    rel: str
    mtime: int
    entries: int = 0            # everything listed in it, kept or not


@dataclass
class _Listing:
    files: list[tuple[str, int, int]] = field(default_factory=list)   # rel, size, mtime
    dirs: dict[str, _Dir] = field(default_factory=dict)
    symlinks: int = 0


def _local_entries(root: str):
    """``entries(rel_dir)`` for a local table: (name, is_dir, is_symlink, size, mtime ms)."""
    def entries(rel_dir: str):
        full_dir = os.path.join(root, *rel_dir.split("/")) if rel_dir else root
        with os.scandir(full_dir) as it:
            for e in it:
                if e.is_symlink():
                    yield e.name, False, True, 0, 0
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                yield (e.name, e.is_dir(follow_symlinks=False), False, st.st_size,
                       st.st_mtime_ns // 1_000_000)
    return entries


def _store_entries(log_: DeltaLog):
    """``entries(rel_dir)`` through the table's log store (no symbolic links there)."""
    store, root = log_.store, log_.location

    def entries(rel_dir: str):
        for e in store.list_dir(store.join(root, *rel_dir.split("/")) if rel_dir else root):
            yield e.name, e.is_dir, False, e.size, e.modification_time
    return entries


def _list(entries, partition_columns: list[str]) -> _Listing:
    """Walk the table directory: the files VACUUM may judge, the directories, the symlinks."""
    out = _Listing()
    stack = [("", False)]
    while stack:
        rel_dir, in_staging = stack.pop()
        try:
            listed = list(entries(rel_dir))
        except FileNotFoundError:
            continue
        for name, is_dir, is_link, size, mtime in listed:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if rel_dir in out.dirs:
                out.dirs[rel_dir].entries += 1
            if is_link:
                out.symlinks += 1          # never followed, never deleted
                continue
            if rel == LOG_DIR or (not in_staging and _hidden(name, partition_columns)):
                continue
            if is_dir:
                out.dirs[rel] = _Dir(rel, mtime)
                stack.append((rel, in_staging or rel == STAGING_DIR))
            else:
                out.files.append((rel, size, mtime))
    return out


def _emptied_dirs(listing: _Listing, deleted: set[str], cutoff_ms: int) -> list[str]:
    """Directories that hold nothing once ``deleted`` files are gone, deepest first, and that
    nothing was created in or removed from within the retention (their mtime is older)."""
    removed_here: dict[str, int] = {}
    for rel in deleted:
        parent = rel.rpartition("/")[0]
        removed_here[parent] = removed_here.get(parent, 0) + 1
    out: list[str] = []
    for rel in sorted(listing.dirs, key=lambda r: r.count("/"), reverse=True):
        d = listing.dirs[rel]
        gone = removed_here.get(rel, 0)
        if d.entries - gone == 0 and d.mtime < cutoff_ms:
            out.append(rel)
            parent = rel.rpartition("/")[0]
            removed_here[parent] = removed_here.get(parent, 0) + 1
    return out


# --- LITE ---------------------------------------------------------------------------------------


def _lite_candidates(log_: DeltaLog, snapshot: Snapshot, cutoff_ms: int,
                     keep: set[str]) -> list[tuple[str, int, int]]:
    listing = log_.listing()
    times = log_.commit_timestamps(listing)
    start = None
    for v in sorted(listing.commits, reverse=True):
        info = log_.commit_info(v)
        if info is not None and info.operation == ops.VacuumEnd.name and \
                (info.values.get("operationParameters") or {}).get("status") == \
                ops.VacuumEnd.COMPLETED:
            start = v
            break
    if start is None:
        if listing.earliest_commit != 0:
            raise VersionNotFoundException(
                f"table {log_.name}: VACUUM LITE needs the commits since the last completed "
                f"VACUUM, but the log starts at version {listing.earliest_commit} and records no "
                "completed VACUUM. Run a full VACUUM (VACUUM t FULL) once.", table=log_.name,
                version=listing.earliest_commit)
        start = 0
    out: dict[str, tuple[str, int, int]] = {}
    root = log_.location
    for v in range(start, snapshot.version + 1):
        if v not in listing.commits:
            continue
        for a in log_.read_commit(v):
            if isinstance(a, RemoveFile) and (a.deletion_timestamp or 0) < cutoff_ms:
                size = a.size or 0
            elif isinstance(a, AddCDCFile) and times.get(v, cutoff_ms) < cutoff_ms:
                size = a.size
            else:
                continue
            rel = _relative(log_, a.path, root)
            if rel is not None and rel not in keep and not rel.startswith(LOG_DIR + "/"):
                out[rel] = (rel, size, 0)
    return list(out.values())


# --- the command --------------------------------------------------------------------------------


def collect_garbage(log_: DeltaLog, retention_hours: float | None = None, dry_run: bool = False,
                    *, check_retention: bool = True, log_commits: bool = True,
                    mode: str | None = None, now_ms: int | None = None,
                    engine_info: str = ENGINE_INFO,
                    user_metadata: str | None = None) -> VacuumResult:
    """VACUUM the table of ``log_`` (see the module doc); no Spark needed.

    ``retention_hours`` overrides the table's retention; ``check_retention=False`` allows one
    shorter than it; ``log_commits`` records the VACUUM START / END commits, whose commitInfo
    carries ``engine_info`` and ``user_metadata`` (:func:`sqlext.engine.commit.commit_fields`);
    ``mode`` is None, ``"FULL"`` or ``"LITE"``.
    """
    mode = (mode or "FULL").upper()
    if mode not in ("FULL", "LITE"):
        raise UnsupportedOperationError(f"table {log_.name}: unknown VACUUM mode {mode!r}; use "
                                        "LITE or FULL", table=log_.name)
    snapshot = log_.snapshot()
    check_readable(log_.name, snapshot.version, snapshot.protocol, snapshot.metadata)
    check_writable(log_.name, snapshot.version, snapshot.protocol, snapshot.metadata)
    default_ms = deleted_file_retention_ms(snapshot)
    retention_ms = default_ms
    if retention_hours is not None:
        if retention_hours < 0:
            raise VacuumRetentionError(
                f"table {log_.name}: VACUUM retention cannot be negative ({retention_hours} hours)",
                error_class="DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE", table=log_.name)
        retention_ms = int(round(float(retention_hours) * 3_600_000))
        if check_retention and retention_ms < default_ms:
            hours = -(-default_ms // 3_600_000)
            raise VacuumRetentionError(
                f"table {log_.name}: VACUUM with a retention of {retention_hours} hours is shorter "
                f"than the table's delta.deletedFileRetentionDuration ({hours} hours). Files that "
                "concurrent writers are still committing, and files of versions readers may time "
                "travel to, could be deleted and the table corrupted. Use at least "
                f"{hours} hours, or, if nothing else reads or writes the table, set "
                f"{RETENTION_CHECK_CONF}=false. Nothing was deleted.", table=log_.name,
                message_parameters={"configuredRetentionHours": hours})
    now = int(time.time() * 1000) if now_ms is None else now_ms
    cutoff = now - retention_ms
    result = VacuumResult(log_.location, dry_run, retention_ms, cutoff)
    keep = referenced_files(log_, snapshot, cutoff)
    local = is_local(log_.location)
    if mode == "LITE":
        listing, candidates = _Listing(), _lite_candidates(log_, snapshot, cutoff, keep)
        foreign = []                   # LITE deletes only files the log names
    else:
        entries = _local_entries(log_.location) if local else _store_entries(log_)
        listing = _list(entries, snapshot.partition_columns)
        candidates, foreign = _without_foreign(
            log_, snapshot, [(rel, size, mtime) for rel, size, mtime in listing.files
                             if mtime < cutoff and rel not in keep])
    # files committed while we listed (their mtime is recent, but a retention of 0 would not
    # protect them): re-read the latest version and keep its files too
    latest = log_.snapshot()
    if latest.version != snapshot.version:
        keep |= referenced_files(log_, latest, cutoff)
        candidates = [c for c in candidates if c[0] not in keep]
        foreign = [rel for rel in foreign if rel not in keep]
    doomed = {rel for rel, _, _ in candidates}
    dirs = _emptied_dirs(listing, doomed, cutoff) if mode == "FULL" else []
    result.directories_listed = len(listing.dirs) + 1
    result.skipped_symlinks = listing.symlinks
    result.bytes = sum(size for _, size, _ in candidates)
    full = (lambda rel: os.path.join(log_.location, *rel.split("/"))) if local else \
        (lambda rel: log_.store.join(log_.location, rel))
    result.files = [full(rel) for rel, _, _ in sorted(candidates)]
    result.directories = [full(rel) for rel in dirs]
    result.foreign = [full(rel) for rel in foreign]
    if foreign:
        _warn_foreign(log_, foreign)
    if dry_run:
        return result
    if log_commits:
        start = ops.VacuumStart(bool(check_retention), default_ms,
                                retention_ms if retention_hours is not None else None)
        result.start_version = log_.start_transaction().commit(
            [], start, None,
            {"numFilesToDelete": len(result.files) + len(result.directories),
             "sizeOfDataToDelete": result.bytes}, user_metadata, engine_info)
    try:
        deleted = _delete(log_, result, local)
    except BaseException:
        if log_commits:
            end = ops.VacuumEnd(ops.VacuumEnd.FAILED)
            result.end_version = log_.start_transaction().commit(
                [], end, None, None, user_metadata, engine_info)
        raise
    if log_commits:
        end = ops.VacuumEnd(ops.VacuumEnd.COMPLETED)
        result.end_version = log_.start_transaction().commit(
            [], end, None,
            {"numDeletedFiles": deleted, "numVacuumedDirectories": result.directories_listed},
            user_metadata, engine_info)
    log.info("table %s: VACUUM deleted %d files and directories in a total of %d directories",
             log_.name, deleted, result.directories_listed)
    return result


def _inside(root_real: str, path: str, cache: dict[str, bool]) -> bool:
    """Whether ``path``'s directory still resolves inside the table (no symlink swapped in)."""
    parent = os.path.dirname(path)
    if parent not in cache:
        real = os.path.realpath(parent)
        cache[parent] = real == root_real or real.startswith(root_real + os.sep)
    return cache[parent]


def _delete(log_: DeltaLog, result: VacuumResult, local: bool) -> int:
    """Delete the files, then the emptied directories, deepest first; a directory something
    appeared in meanwhile stays. Local paths are checked to resolve inside the table."""
    if local:
        root_real = os.path.realpath(log_.location)
        cache: dict[str, bool] = {}
        count = sum(_unlink_file(p) for p in result.files if _inside(root_real, p, cache))
        for path in result.directories:
            if _inside(root_real, path, cache) and not os.path.islink(path):
                try:
                    os.rmdir(path)
                    count += 1
                except OSError:
                    pass
        return count
    store = log_.store
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(store.delete, result.files))
    for path in result.directories:
        try:
            store.delete(path)
        except Exception:  # noqa: BLE001 - a directory that is no longer empty stays
            pass
    return len(result.files) + len(result.directories)


def _unlink_file(path: str) -> int:
    """Delete one regular file (never a symbolic link); 1 when it was deleted."""
    try:
        if os.path.islink(path):
            return 0
        os.unlink(path)
        return 1
    except OSError:
        return 0
