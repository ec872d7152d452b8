"""Retention settings: how long removed files and old log entries are kept."""

from __future__ import annotations

import re
import time

from sqlext.log.actions import RemoveFile
from sqlext.log.snapshot import Snapshot

_UNITS_MS = {"millisecond": 1, "second": 1000, "minute": 60_000, "hour": 3_600_000,
             "day": 86_400_000, "week": 604_800_000}
DEFAULT_DELETED_FILE_RETENTION = "interval 1 week"
DEFAULT_LOG_RETENTION = "interval 30 days"


def parse_interval_ms(text: str) -> int:
    """Milliseconds in a Delta interval property such as ``interval 7 days`` or ``168 hours``."""
    m = re.fullmatch(r"\s*(?:interval\s+)?(\d+)\s*([a-z]+?)s?\s*", str(text).lower())
    if not m or m.group(2) not in _UNITS_MS:
        raise ValueError(f"not an interval: {text!r} (expected e.g. 'interval 7 days')")
    return int(m.group(1)) * _UNITS_MS[m.group(2)]


def deleted_file_retention_ms(snapshot: Snapshot) -> int:
    """``delta.deletedFileRetentionDuration`` in ms (default 7 days)."""
    return parse_interval_ms(snapshot.metadata.configuration.get(
        "delta.deletedFileRetentionDuration", DEFAULT_DELETED_FILE_RETENTION))


def log_retention_ms(snapshot: Snapshot) -> int:
    """``delta.logRetentionDuration`` in ms (default 30 days)."""
    return parse_interval_ms(snapshot.metadata.configuration.get(
        "delta.logRetentionDuration", DEFAULT_LOG_RETENTION))


def live_tombstones(snapshot: Snapshot, now_ms: int | None = None) -> list[RemoveFile]:
    """Removes still within the deleted-file retention: a checkpoint keeps them for VACUUM."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    horizon = now_ms - deleted_file_retention_ms(snapshot)
    return [r for r in snapshot.tombstones.values()
            if r.deletion_timestamp is None or r.deletion_timestamp > horizon]
