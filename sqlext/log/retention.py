"""Retention settings: how long removed files and old log entries are kept."""

from __future__ import annotations

import time

from sqlext.log.actions import RemoveFile
from sqlext.log.snapshot import Snapshot


def deleted_file_retention_ms(snapshot: Snapshot) -> int:
    """``delta.deletedFileRetentionDuration`` in ms (default 7 days)."""
    return snapshot.properties.deleted_file_retention_ms


def log_retention_ms(snapshot: Snapshot) -> int:
    """``delta.logRetentionDuration`` in ms (default 30 days)."""
    return snapshot.properties.log_retention_ms


def live_tombstones(snapshot: Snapshot, now_ms: int | None = None) -> list[RemoveFile]:
    """Removes still within the deleted-file retention: a checkpoint keeps them for VACUUM."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    horizon = now_ms - deleted_file_retention_ms(snapshot)
    return [r for r in snapshot.tombstones.values()
            if r.deletion_timestamp is None or r.deletion_timestamp > horizon]
