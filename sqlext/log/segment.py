"""The files of ``_delta_log``: which commits and checkpoints exist, and which of them rebuild a
given version (the newest complete checkpoint at or before it, plus the commits after it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlext.errors import CorruptLogError, VersionNotFoundException
from sqlext.log.storage import FileStatus

_COMMIT = re.compile(r"^(\d{20})\.json$")
_CLASSIC_CP = re.compile(r"^(\d{20})\.checkpoint\.parquet$")
_MULTI_CP = re.compile(r"^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$")
_V2_CP = re.compile(r"^(\d{20})\.checkpoint\.[0-9a-fA-F-]{36}\.(json|parquet)$")


def commit_name(version: int) -> str:
    return f"{version:020d}.json"


def checkpoint_name(version: int) -> str:
    return f"{version:020d}.checkpoint.parquet"


@dataclass
class Checkpoint:
    version: int
    parts: list[str]        # file names, in part order
    v2: bool = False


@dataclass
class LogListing:
    """Everything found in ``_delta_log`` that matters for replay."""

    commits: dict[int, FileStatus] = field(default_factory=dict)
    checkpoints: list[Checkpoint] = field(default_factory=list)   # complete ones, oldest first

    @property
    def latest_version(self) -> int | None:
        versions = list(self.commits) + [c.version for c in self.checkpoints]
        return max(versions) if versions else None

    @property
    def earliest_commit(self) -> int | None:
        return min(self.commits) if self.commits else None


def parse_listing(entries: list[FileStatus]) -> LogListing:
    """Classify the entries of ``_delta_log``; incomplete multi-part checkpoints are left out."""
    listing = LogListing()
    multi: dict[tuple[int, int], dict[int, str]] = {}
    for e in entries:
        if e.is_dir:
            continue
        if m := _COMMIT.match(e.name):
            listing.commits[int(m.group(1))] = e
        elif m := _CLASSIC_CP.match(e.name):
            listing.checkpoints.append(Checkpoint(int(m.group(1)), [e.name]))
        elif m := _MULTI_CP.match(e.name):
            multi.setdefault((int(m.group(1)), int(m.group(3))), {})[int(m.group(2))] = e.name
        elif m := _V2_CP.match(e.name):
            listing.checkpoints.append(Checkpoint(int(m.group(1)), [e.name], v2=True))
    for (version, n_parts), parts in multi.items():
        if len(parts) == n_parts and set(parts) == set(range(1, n_parts + 1)):
            listing.checkpoints.append(Checkpoint(version, [parts[i] for i in sorted(parts)]))
    listing.checkpoints.sort(key=lambda c: (c.version, len(c.parts)))
    listing.commits = dict(sorted(listing.commits.items()))
    return listing


@dataclass
class LogSegment:
    """What to read to rebuild ``version``: a checkpoint (or none) and the commits after it."""

    version: int
    checkpoint: Checkpoint | None
    commits: list[int]


def segment_for(listing: LogListing, table: str, version: int | None,
                skip_checkpoints: frozenset[int] = frozenset()) -> LogSegment:
    """Choose the files that rebuild ``version`` (the latest when None).

    ``skip_checkpoints`` names checkpoint versions found unreadable, so that replay falls back to
    an older checkpoint or to the commits.
    """
    latest = listing.latest_version
    if latest is None:
        raise CorruptLogError(f"table {table}: _delta_log holds no commit or checkpoint",
                              table=table)
    if version is None:
        version = latest
    if version < 0 or version > latest:
        raise VersionNotFoundException(
            f"table {table}: version {version} does not exist; available versions are "
            f"{_available(listing)} (latest {latest})", table=table, version=version,
            message_parameters={"userVersion": version, "latest": latest,
                                "earliest": _available(listing).split("..")[0]})
    candidates = [c for c in listing.checkpoints
                  if c.version <= version and c.version not in skip_checkpoints]
    for cp in reversed(candidates):
        if all(v in listing.commits for v in range(cp.version + 1, version + 1)):
            return LogSegment(version, cp, list(range(cp.version + 1, version + 1)))
    # no usable checkpoint: replay from version 0
    if 0 in listing.commits and all(v in listing.commits for v in range(0, version + 1)):
        return LogSegment(version, None, list(range(0, version + 1)))
    missing = [v for v in range(listing.earliest_commit or 0, version + 1) if v not in listing.commits]
    first_checkpoint = min((c.version for c in listing.checkpoints), default=None)
    if 0 not in listing.commits and (first_checkpoint is None or version < first_checkpoint):
        starts = min(v for v in (listing.earliest_commit, first_checkpoint) if v is not None)
        raise VersionNotFoundException(
            f"table {table}: version {version} can no longer be reconstructed: the log starts at "
            f"version {starts} with no checkpoint at or before {version} "
            f"(removed by log cleanup); available versions are {_available(listing)}",
            table=table, version=version)
    raise CorruptLogError(
        f"table {table}: the log is not contiguous; commit files missing for versions "
        f"{missing[:10]}{'...' if len(missing) > 10 else ''}, so version {version} cannot be "
        "rebuilt. Restore the missing files from a backup or recreate the table.",
        table=table, version=version)


def _available(listing: LogListing) -> str:
    first_cp = min((c.version for c in listing.checkpoints), default=None)
    starts = [v for v in (listing.earliest_commit, first_cp) if v is not None]
    if listing.earliest_commit == 0:
        return f"0..{listing.latest_version}"
    return f"{min(starts)}..{listing.latest_version}" if starts else "none"
