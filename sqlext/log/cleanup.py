"""Log cleanup: after a checkpoint, delete commit and checkpoint files that no version within
``delta.logRetentionDuration`` (default 30 days) needs.

delta-spark deletes every commit and checkpoint older than the cut-off that has a newer
checkpoint after it, with the cut-off truncated to midnight UTC so that a table is cleaned once
a day, not at every checkpoint. sqlext keeps that truncation but is stricter about what stays
readable: a version is *within retention* when its commit timestamp is after the cut-off, and the
oldest such version must still be reconstructable. So the newest complete checkpoint at or before
that version is the *anchor*: the anchor and everything after it stay; commit, checkpoint and
checksum files of older versions go (delta-spark can delete the checkpoint that the first retained
versions need when the next checkpoint lies after the cut-off; sqlext never does).

Files are deleted oldest version first, so a cleanup killed half-way leaves a log that starts
later, never one with a hole. Leftover temporary files of interrupted writes (``.<name>.<uuid>.tmp``)
older than an hour are deleted too (a writer renames or links its temp file within moments, so an
hour-old one belongs to a killed process). Nothing outside ``_delta_log`` is touched.

A writer that read a version whose successors this cleanup deletes notices before its commit
(see :mod:`sqlext.log.transaction`): it raises ``ConcurrentLogCleanupException`` instead of
committing below the new checkpoint.
"""

from __future__ import annotations

import datetime as _dt
import logging
import re
import time
from dataclasses import dataclass, field

from sqlext.log.retention import log_retention_ms
from sqlext.log.segment import LogListing, parse_listing
from sqlext.log.snapshot import Snapshot

log = logging.getLogger("sqlext")

# every versioned file of _delta_log: commits, classic/multi-part/v2 checkpoints, checksums,
# log compactions (named by their end version)
_VERSIONED = re.compile(r"^(\d{20})\.(?:json|crc|checkpoint\..*parquet|checkpoint\..*json|"
                        r"\d{20}\.compacted\.json)$")
_COMPACTED = re.compile(r"^\d{20}\.(\d{20})\.compacted\.json$")
_TMP = re.compile(r"^\..+\.[0-9a-f]{32}\.tmp$")
STALE_TMP_MS = 3_600_000       # temp files of interrupted writes older than this are removed


@dataclass
class CleanupResult:
    """What a log cleanup did."""

    cutoff_ms: int                          # versions committed at or before this are expired
    anchor_version: int | None              # oldest version kept (None: nothing to delete)
    deleted: list[str] = field(default_factory=list)   # file names under _delta_log


def expired_log_cutoff(snapshot: Snapshot, now_ms: int | None = None,
                       truncate_to_day: bool = True) -> int:
    """The cut-off time in ms: now minus ``delta.logRetentionDuration``, truncated to midnight
    UTC as delta-spark does (``truncate_to_day=False`` keeps the exact time)."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    cutoff = now_ms - log_retention_ms(snapshot)
    if truncate_to_day:
        day = _dt.datetime.fromtimestamp(cutoff / 1000, _dt.timezone.utc).date()
        cutoff = int(_dt.datetime(day.year, day.month, day.day,
                                  tzinfo=_dt.timezone.utc).timestamp() * 1000)
    return cutoff


def cleanup_enabled(snapshot: Snapshot) -> bool:
    """``delta.enableExpiredLogCleanup`` (default true)."""
    return snapshot.properties.expired_log_cleanup


def anchor_version(listing: LogListing, times: dict[int, int], cutoff_ms: int) -> int | None:
    """The newest complete checkpoint that rebuilds the oldest version within retention (all
    commits after it present), or None when no file can go."""
    latest = listing.latest_version
    if latest is None:
        return None
    within = [v for v, t in times.items() if t > cutoff_ms]
    oldest_needed = min(within) if within else latest
    for cp in reversed(listing.checkpoints):
        if cp.v2 or cp.version > oldest_needed:
            continue
        if all(v in listing.commits for v in range(cp.version + 1, latest + 1)):
            return cp.version
        return None      # a hole after the checkpoint: leave the log as it is
    return None


def _file_version(name: str) -> int | None:
    m = _COMPACTED.match(name)
    if m:
        return int(m.group(1))
    m = _VERSIONED.match(name)
    return int(m.group(1)) if m else None


def cleanup_expired_logs(delta_log, snapshot: Snapshot, now_ms: int | None = None,
                         truncate_to_day: bool = True) -> CleanupResult:
    """Delete the log files no version within the log retention needs (see the module doc).

    ``delta_log`` is a :class:`sqlext.log.table.DeltaLog`; ``snapshot`` its latest snapshot
    (for the table properties).
    """
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    cutoff = expired_log_cutoff(snapshot, now_ms, truncate_to_day)
    if not cleanup_enabled(snapshot):
        return CleanupResult(cutoff, None)
    store = delta_log.store
    entries = store.list_dir(delta_log.log_dir)
    listing = parse_listing(entries)
    times = delta_log.commit_timestamps(listing)
    anchor = anchor_version(listing, times, cutoff)
    result = CleanupResult(cutoff, anchor)
    doomed: list[tuple[int, int, str]] = []
    for e in entries:
        if e.is_dir:
            continue
        version = _file_version(e.name)
        if anchor is not None and version is not None and version < anchor:
            # commits before checkpoints of the same version, oldest first
            doomed.append((version, 0 if e.name.endswith(".json") else 1, e.name))
        elif _TMP.match(e.name) and e.modification_time <= now_ms - STALE_TMP_MS:
            doomed.append((-1, 0, e.name))
    for _, _, name in sorted(doomed):
        store.delete(store.join(delta_log.log_dir, name))
        result.deleted.append(name)
    if result.deleted:
        log.info("table %s: log cleanup deleted %d file(s) before version %s (cut-off %s)",
                 delta_log.name, len(result.deleted), anchor, cutoff)
    return result
