"""``DeltaLog``: one table's transaction log — snapshots at any version or timestamp, history,
checkpoints, and the start of transactions.
"""

from __future__ import annotations

import contextlib
import gc
from dataclasses import dataclass

from sqlext.errors import (CorruptLogError, TableNotFoundError, TimestampOutOfRangeError,
                           VersionNotFoundException)
from sqlext.log import table_properties as props
from sqlext.log.actions import (Action, AddFile, CommitInfo, RemoveFile, decode_path,
                                parse_commit)
from sqlext.log.cache import LOG_CACHE
from sqlext.log.checkpoint import (checkpoint_bytes, checkpoint_metadata_version,
                                   last_checkpoint_bytes, read_checkpoint_file, sidecar_paths)
from sqlext.log.protocol import check_readable
from sqlext.log.segment import (Checkpoint, LogListing, checkpoint_name, commit_name,
                                parse_listing, segment_for)
from sqlext.log.snapshot import Replayer, Snapshot
from sqlext.log.storage import FileStatus, LogStore, is_local, normalize_location, store_for




@dataclass(frozen=True)
class CommitRecord:
    """One entry of a table's history."""

    version: int
    timestamp: int          # milliseconds since the epoch
    commit_info: CommitInfo


class DeltaLog:
    """The transaction log of the table at ``location``."""

    def __init__(self, location: str, store: LogStore | None = None, name: str | None = None):
        self.location = normalize_location(location)
        self.store = store or store_for(self.location)
        self.log_dir = self.store.join(self.location, "_delta_log")
        self.name = name or self.location   # what error messages call the table

    # --- files ------------------------------------------------------------------------------

    def listing(self) -> LogListing:
        """A fresh listing of ``_delta_log`` (empty when it does not exist)."""
        try:
            listing = parse_listing(self.store.list_dir(self.log_dir))
        except FileNotFoundError:
            listing = LogListing()
        self._check_identity(listing)
        return listing

    def version_listing(self) -> LogListing:
        """Which commits and checkpoints ``_delta_log`` holds, from names alone (no sizes or
        times; cheaper than :meth:`listing`), for checks that need only the versions."""
        try:
            names = self.store.list_names(self.log_dir)
        except FileNotFoundError:
            return LogListing()
        return parse_listing([FileStatus(n, 0, 0) for n in names])

    def _check_identity(self, listing: LogListing) -> None:
        first = listing.earliest_commit
        status = listing.commits[first] if first is not None else None
        identity = None if status is None else (first, status.size, status.modification_time)
        LOG_CACHE.check_identity(self.location, identity)

    def exists(self) -> bool:
        """Whether the location holds a Delta table (a commit or checkpoint in ``_delta_log``)."""
        return self.listing().latest_version is not None

    def read_commit(self, version: int) -> list[Action]:
        """The actions of commit ``version``."""
        cached = LOG_CACHE.commit(self.location, version)
        if cached is not None:
            return cached
        path = self.store.join(self.log_dir, commit_name(version))
        try:
            data = self.store.read(path)
        except FileNotFoundError as exc:
            raise VersionNotFoundException(
                f"table {self.name}: commit file for version {version} does not exist",
                table=self.name, version=version) from exc
        if not data.strip():
            # never valid: a commit holds at least commitInfo or one action; an empty file is a
            # write cut short, and reading it as "no change" would hide the loss
            raise CorruptLogError(
                f"table {self.name}: commit file {commit_name(version)} (version {version}) is "
                f"empty ({len(data)} bytes) and cannot be replayed; restore it from a backup — "
                "sqlext will not guess the table state", table=self.name, version=version)
        try:
            actions = parse_commit(data)
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptLogError(
                f"table {self.name}: commit file {commit_name(version)} (version {version}) is "
                f"corrupt and cannot be parsed ({exc}); restore it from a backup — sqlext will not "
                "guess the table state", table=self.name, version=version) from exc
        LOG_CACHE.put_commit(self.location, version, actions)
        return actions

    def data_path(self, action_path: str) -> str:
        """The full path of a file named in an action (relative paths resolve under the table)."""
        if "://" in action_path or action_path.startswith("file:"):
            return normalize_location(action_path) if is_local(action_path) else decode_path(action_path)
        path = decode_path(action_path)
        return path if path.startswith("/") else self.store.join(self.location, path)

    # --- snapshots --------------------------------------------------------------------------

    def require_table(self, listing: LogListing) -> None:
        """Raise :class:`~sqlext.errors.TableNotFoundError` when ``listing`` has no commits."""
        if listing.latest_version is None:
            raise TableNotFoundError(
                f"{self.name} is not a Delta table: no _delta_log with commits at {self.location}; "
                "write to it with sqlext.write(...) to create one", table=self.name,
                message_parameters={"tableName": self.name})

    def snapshot(self, version: int | None = None, listing: LogListing | None = None,
                 check_protocol: bool = True) -> Snapshot:
        """The table at ``version`` (the latest when None)."""
        listing = listing or self.listing()
        self.require_table(listing)
        try:
            snap = self._load(listing, version)
        except (VersionNotFoundException, CorruptLogError):
            # Log cleanup may have deleted files between the listing and the read (commits and
            # checkpoints that a newer checkpoint replaced): when the log changed meanwhile,
            # list again and rebuild once from what is there now, the newest checkpoint.
            fresh = self.listing()
            if _same_files(fresh, listing):
                raise
            self.require_table(fresh)
            snap = self._load(fresh, version)
        if check_protocol:
            check_readable(self.name, snap.version, snap.protocol, snap.metadata)
            snap.schema  # noqa: B018 - a schema that cannot be parsed is refused here, by name
        return snap

    def _load(self, listing: LogListing, version: int | None) -> Snapshot:
        target = listing.latest_version if version is None else version
        cached = LOG_CACHE.latest(self.location)
        if (cached is not None and target is not None and cached.version <= target
                and all(v in listing.commits for v in range(cached.version + 1, target + 1))
                and (cached.version == target or self._same_table(cached, listing))):
            if cached.version == target:
                return cached
            replay = Replayer(cached)
            for v in range(cached.version + 1, target + 1):
                replay.apply(self.read_commit(v))
            snap = replay.snapshot(self.location, target, cached.checkpoint_version)
        else:
            snap = self._replay(listing, version)
        if version is None or snap.version == listing.latest_version:
            LOG_CACHE.put_latest(self.location, snap)
        return snap

    def _same_table(self, cached: Snapshot, listing: LogListing) -> bool:
        # a table dropped and recreated at the same path starts again at version 0
        return cached.version in listing.commits or any(
            c.version == cached.version for c in listing.checkpoints)

    def _replay(self, listing: LogListing, version: int | None) -> Snapshot:
        # Replay allocates hundreds of thousands of small objects that hold no reference cycles;
        # the cyclic collector would rescan the growing heap many times over (about half the
        # time of a large checkpoint load), so it is paused for the duration.
        with _gc_paused():
            return self._replay_segments(listing, version)

    def _replay_segments(self, listing: LogListing, version: int | None) -> Snapshot:
        skip: dict[int, str] = {}      # unreadable checkpoint version -> why
        while True:
            try:
                segment = segment_for(listing, self.name, version, frozenset(skip))
            except (CorruptLogError, VersionNotFoundException) as exc:
                if not skip:
                    raise
                why = "; ".join(f"version {v}: {reason}" for v, reason in sorted(skip.items()))
                raise CorruptLogError(
                    f"table {self.name}: version {version if version is not None else 'latest'} "
                    f"cannot be rebuilt: its checkpoint cannot be read ({why}) and the log holds "
                    f"no other route to it ({exc}). Restore the checkpoint or the commit files "
                    "from a backup.", table=self.name, version=version) from exc
            replay = Replayer()
            if segment.checkpoint is not None:
                try:
                    replay.apply(self.read_checkpoint_actions(segment.checkpoint))
                    if replay.protocol is None or replay.metadata is None:
                        raise CorruptLogError("it holds no protocol or metaData action")
                except Exception as exc:  # noqa: BLE001 - an unreadable checkpoint: try an older route
                    skip[segment.checkpoint.version] = f"{type(exc).__name__}: {exc}"[:300]
                    continue
            for v in segment.commits:
                replay.apply(self.read_commit(v))
            cp = segment.checkpoint.version if segment.checkpoint else None
            return replay.snapshot(self.location, segment.version, cp)

    def read_checkpoint_actions(self, checkpoint: Checkpoint) -> list[Action]:
        """Every action of ``checkpoint``: its parts, and for a V2 checkpoint (UUID-named, or
        classic-named with a ``checkpointMetadata`` action) its top-level file followed by the
        ``add``/``remove`` actions of the sidecar files it names (``_delta_log/_sidecars/``).

        Raises ``CorruptLogError`` (or the store's error) when a file is missing or does not
        match the checkpoint's version."""
        actions: list[Action] = []
        for name in checkpoint.parts:
            actions.extend(read_checkpoint_file(
                name, self.store.read(self.store.join(self.log_dir, name))))
        try:
            stated = checkpoint_metadata_version(actions)
            sidecars = sidecar_paths(actions)
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptLogError(f"checkpoint {checkpoint.parts[0]}: {exc}") from exc
        if checkpoint.v2 and stated is None:
            raise CorruptLogError(f"V2 checkpoint {checkpoint.parts[0]} has no checkpointMetadata "
                                  "action")
        if stated is not None and stated != checkpoint.version:
            raise CorruptLogError(f"checkpoint {checkpoint.parts[0]} says it is of version "
                                  f"{stated} (checkpointMetadata)")
        sidecar_dir = self.store.join(self.log_dir, "_sidecars")
        for path in sidecars:
            if "://" in path or path.startswith(("file:", "/")):
                full = self.data_path(path)
            else:
                full = self.store.join(sidecar_dir, decode_path(path))
            try:
                data = self.store.read(full)
            except FileNotFoundError as exc:
                raise CorruptLogError(f"checkpoint {checkpoint.parts[0]}: its sidecar file "
                                      f"{path} is missing") from exc
            actions.extend(a for a in read_checkpoint_file(path, data)
                           if isinstance(a, (AddFile, RemoveFile)))
        return actions

    def latest_version(self) -> int | None:
        return self.listing().latest_version

    # --- time -------------------------------------------------------------------------------

    def commit_timestamps(self, listing: LogListing | None = None) -> dict[int, int]:
        """Each listed commit's timestamp in ms: in-commit timestamps where the table has them,
        otherwise file modification times made strictly increasing."""
        listing = listing or self.listing()
        out: dict[int, int] = {}
        previous = None
        for v, status in listing.commits.items():
            ts = status.modification_time
            if previous is not None and ts <= previous:
                ts = previous + 1
            out[v] = previous = ts
        ict_from = self._ict_enabled_from(listing)
        if ict_from is not None:
            for v in listing.commits:
                if v >= ict_from:
                    info = self.commit_info(v)
                    if info is not None and info.in_commit_timestamp is not None:
                        out[v] = int(info.in_commit_timestamp)
        return out

    def _ict_enabled_from(self, listing: LogListing) -> int | None:
        if listing.latest_version is None:
            return None
        try:
            conf = self._load(listing, None).metadata.configuration
        except Exception:  # noqa: BLE001 - timestamps of a broken log fall back to mtimes
            return None
        if str(conf.get("delta.enableInCommitTimestamps", "false")).lower() != "true":
            return None
        return int(conf.get("delta.inCommitTimestampEnablementVersion", "0"))

    def commit_info(self, version: int) -> CommitInfo | None:
        """The ``commitInfo`` of one commit, if it has one."""
        for a in self.read_commit(version):
            if isinstance(a, CommitInfo):
                return a
        return None

    def version_at_timestamp(self, timestamp_ms: int, listing: LogListing | None = None) -> int:
        """The latest version committed at or before ``timestamp_ms``.

        Raises :class:`TimestampOutOfRangeError` for a time before the earliest available commit
        or after the latest one.
        """
        listing = listing or self.listing()
        self.require_table(listing)
        times = self.commit_timestamps(listing)
        if not times:
            raise TimestampOutOfRangeError(f"table {self.name}: no commit files to resolve a "
                                           "timestamp", table=self.name)
        first_v, last_v = min(times), max(times)
        if timestamp_ms < times[first_v]:
            raise TimestampOutOfRangeError(
                f"table {self.name}: timestamp {_fmt(timestamp_ms)} is before the earliest available "
                f"commit (version {first_v} at {_fmt(times[first_v])}); use a timestamp at or "
                "after it", error_class="DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION",
                table=self.name, version=first_v)
        if timestamp_ms > times[last_v]:
            raise TimestampOutOfRangeError(
                f"table {self.name}: timestamp {_fmt(timestamp_ms)} is after the latest commit "
                f"(version {last_v} at {_fmt(times[last_v])}); use a timestamp at or before it, "
                "or read the latest version", error_class="DELTA_TIMESTAMP_GREATER_THAN_COMMIT",
                table=self.name, version=last_v)
        return max(v for v, t in times.items() if t <= timestamp_ms)

    def first_version_at_or_after(self, timestamp_ms: int, listing: LogListing | None = None) -> int | None:
        """The earliest version committed at or after ``timestamp_ms`` (None when there is none)."""
        times = self.commit_timestamps(listing)
        after = [v for v, t in times.items() if t >= timestamp_ms]
        return min(after) if after else None

    def history(self, limit: int | None = None) -> list[CommitRecord]:
        """Commits newest first, with their timestamps and ``commitInfo``."""
        listing = self.listing()
        self.require_table(listing)
        times = self.commit_timestamps(listing)
        out = []
        for v in sorted(listing.commits, reverse=True):
            if limit is not None and len(out) >= limit:
                break
            out.append(CommitRecord(v, times[v], self.commit_info(v) or CommitInfo({})))
        return out

    # --- checkpoints ------------------------------------------------------------------------

    def checkpoint_interval(self, snapshot: Snapshot) -> int:
        return props.CHECKPOINT_INTERVAL.of(snapshot.metadata.configuration)

    def write_checkpoint(self, snapshot: Snapshot) -> None:
        """Write a classic checkpoint of ``snapshot`` and point ``_last_checkpoint`` at it.

        On a table with the ``v2Checkpoint`` feature the classic-named file follows the V2 spec
        (a ``checkpointMetadata`` action; the file actions inline, no sidecars)."""
        from sqlext.log.retention import live_tombstones
        v2 = "v2Checkpoint" in (snapshot.protocol.writer_features or [])
        data, size, n_adds = checkpoint_bytes(
            snapshot.protocol, snapshot.metadata, snapshot.files_by_path.values(),
            live_tombstones(snapshot), snapshot.txns.values(), snapshot.domains.values(),
            v2_version=snapshot.version if v2 else None)
        self.store.write(self.store.join(self.log_dir, checkpoint_name(snapshot.version)), data)
        self.store.write(self.store.join(self.log_dir, "_last_checkpoint"),
                         last_checkpoint_bytes(snapshot.version, size, n_adds, len(data)))

    def start_transaction(self, snapshot: Snapshot | None = None, isolation_level: str | None = None):
        """A transaction reading ``snapshot`` (the latest; None for a table not created yet)."""
        from sqlext.log.transaction import Transaction
        if snapshot is None:
            listing = self.listing()
            snapshot = self.snapshot(listing=listing) if listing.latest_version is not None else None
        return Transaction(self, snapshot, isolation_level)


def _same_files(a: LogListing, b: LogListing) -> bool:
    return (a.commits.keys() == b.commits.keys()
            and [c.parts for c in a.checkpoints] == [c.parts for c in b.checkpoints])


@contextlib.contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector (if it is on) for a block that builds many objects."""
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _fmt(ms: int) -> str:
    import datetime as dt
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds")
