"""Table properties: every ``delta.*`` key of a table's configuration that sqlext reads, with its
type, its default and how its text is parsed, in one place (delta-spark's ``DeltaConfigs``,
delta-kernel-rs's ``table_properties``).

Readers ask a property of a configuration, never the configuration's text::

    CHANGE_DATA_FEED.of(snapshot.metadata.configuration)        # -> bool
    TableProperties(metadata.configuration).checkpoint_interval  # -> int

Parsing follows delta-spark: booleans are ``true`` in any case and with spaces around (anything
else is false), intervals are ``interval 7 days`` or ``168 hours``, names compare lowercased.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

_UNITS_MS = {"millisecond": 1, "second": 1000, "minute": 60_000, "hour": 3_600_000,
             "day": 86_400_000, "week": 604_800_000}


def parse_bool(text: str) -> bool:
    """``true`` (any case, spaces around) is true; anything else false."""
    return text.strip().lower() == "true"


def parse_interval_ms(text: str) -> int:
    """Milliseconds in a Delta interval property such as ``interval 7 days`` or ``168 hours``."""
    m = re.fullmatch(r"\s*(?:interval\s+)?(\d+)\s*([a-z]+?)s?\s*", str(text).lower())
    if not m or m.group(2) not in _UNITS_MS:
        raise ValueError(f"not an interval: {text!r} (expected e.g. 'interval 7 days')")
    return int(m.group(1)) * _UNITS_MS[m.group(2)]


def parse_at_least_one(text: str) -> int:
    """A whole number, 1 when smaller (``ValueError`` when not a number)."""
    return max(1, int(text.strip()))


def parse_int(text: str) -> int:
    """A whole number; empty text is 0."""
    return int(text.strip() or 0)


def parse_mode(text: str) -> str:
    """A mode compared without case: stripped and lowercased; empty text is ``none``."""
    return text.strip().lower() or "none"


def parse_text(text: str) -> str:
    """The text as written, spaces around removed."""
    return text.strip()


@dataclass(frozen=True)
class TableProperty:
    """One ``delta.*`` key: its ``default`` (already parsed: what an unset key means) and
    ``parse`` (text -> value). A ``lenient`` property whose text does not parse has its
    default (as delta-spark treats ``delta.checkpointInterval``); others raise ``ValueError``."""

    key: str
    default: Any
    parse: Callable[[str], Any]
    doc: str
    lenient: bool = False

    def of(self, configuration: Mapping[str, str] | None) -> Any:
        """This property's value in ``configuration`` (a table's ``metaData.configuration``)."""
        raw = (configuration or {}).get(self.key)
        if raw is None:
            return self.default
        try:
            return self.parse(str(raw))
        except ValueError:
            if self.lenient:
                return self.default
            raise


CHANGE_DATA_FEED = TableProperty(
    "delta.enableChangeDataFeed", False, parse_bool, "write the change data feed")
DELETION_VECTORS = TableProperty(
    "delta.enableDeletionVectors", False, parse_bool,
    "DELETE, UPDATE and MERGE mark rows deleted instead of rewriting files")
COLUMN_MAPPING_MODE = TableProperty(
    "delta.columnMapping.mode", "none", parse_mode, "none, name or id")
COLUMN_MAPPING_MAX_ID = TableProperty(
    "delta.columnMapping.maxColumnId", 0, parse_int, "the highest column id given out")
APPEND_ONLY = TableProperty(
    "delta.appendOnly", False, parse_bool, "refuse every commit that removes data")
CHECKPOINT_INTERVAL = TableProperty(
    "delta.checkpointInterval", 10, parse_at_least_one, "commits between checkpoints",
    lenient=True)
ISOLATION_LEVEL = TableProperty(
    "delta.isolationLevel", None, parse_text,
    "Serializable (sqlext's default) or WriteSerializable")
IN_COMMIT_TIMESTAMPS = TableProperty(
    "delta.enableInCommitTimestamps", False, parse_bool,
    "commits carry their own monotonic timestamp (inCommitTimestamp)")
DELETED_FILE_RETENTION_MS = TableProperty(
    "delta.deletedFileRetentionDuration", parse_interval_ms("interval 1 week"),
    parse_interval_ms, "how long VACUUM keeps removed files")
LOG_RETENTION_MS = TableProperty(
    "delta.logRetentionDuration", parse_interval_ms("interval 30 days"), parse_interval_ms,
    "how long log cleanup keeps commits")
EXPIRED_LOG_CLEANUP = TableProperty(
    "delta.enableExpiredLogCleanup", True, parse_bool,
    "delete commits older than the log retention after a checkpoint")
ROW_TRACKING = TableProperty(
    "delta.enableRowTracking", False, parse_bool, "give rows stable ids and commit versions")
ROW_TRACKING_SUSPENDED = TableProperty(
    "delta.rowTrackingSuspended", False, parse_bool, "stop assigning row ids for now")
TARGET_FILE_SIZE = TableProperty(
    "delta.targetFileSize", None, parse_text, "OPTIMIZE's target file size (e.g. 128mb)")
SYMLINK_MANIFEST = TableProperty(
    "delta.compatibility.symlinkFormatManifest.enabled", False, parse_bool,
    "regenerate the symlink manifest after every commit")

#: every property above, by key
PROPERTIES: dict[str, TableProperty] = {p.key: p for p in (
    CHANGE_DATA_FEED, DELETION_VECTORS, COLUMN_MAPPING_MODE, COLUMN_MAPPING_MAX_ID, APPEND_ONLY,
    CHECKPOINT_INTERVAL, ISOLATION_LEVEL, IN_COMMIT_TIMESTAMPS, DELETED_FILE_RETENTION_MS,
    LOG_RETENTION_MS, EXPIRED_LOG_CLEANUP, ROW_TRACKING, ROW_TRACKING_SUSPENDED,
    TARGET_FILE_SIZE, SYMLINK_MANIFEST)}


class TableProperties:
    """A configuration's properties, typed: an attribute per property of :data:`PROPERTIES`,
    named after it in snake case (``change_data_feed``, ``checkpoint_interval``, ...)."""

    def __init__(self, configuration: Mapping[str, str] | None):
        self.configuration = dict(configuration or {})

    def __getattr__(self, name: str) -> Any:
        prop = _BY_ATTRIBUTE.get(name)
        if prop is None:
            raise AttributeError(f"no table property {name!r}")
        return prop.of(self.configuration)


_BY_ATTRIBUTE = {name.lower(): value for name, value in dict(globals()).items()
                 if isinstance(value, TableProperty)}
