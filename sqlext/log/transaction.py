"""Optimistic transactions: read a snapshot, record what was read, commit ``N+1.json`` with
put-if-absent, and on losing the race check the winners and retry or raise.

After the commit lands, the transaction runs its post-commit hooks (:class:`PostCommitHook`,
delta-rs ``PostCommit``): the kernel's own, :data:`KERNEL_POST_COMMIT` (a checkpoint every
``delta.checkpointInterval`` versions, then log cleanup), and those the engine appends (the
symlink manifest: :mod:`sqlext.engine.post_commit`). A hook that fails is logged
(:func:`after_commit`); the commit stands.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Callable, Iterable, TypeVar

from sqlext.errors import CommitFailedError
from sqlext.errors import (ConcurrentLogCleanupException, ConcurrentModificationException,
                           ProtocolChangedException, SqlextError, UnsupportedOperationError,
                           VersionNotFoundException)
from sqlext.log import table_properties as props
from sqlext.log.actions import (Action, AddFile, CommitInfo, Metadata, Protocol,
                                RemoveFile, SetTransaction, decode_path, serialize_commit)
from sqlext.log.cleanup import cleanup_expired_logs
from sqlext.log.column_mapping import assign_column_mapping
from sqlext.log.conflicts import (SERIALIZABLE, WRITE_SERIALIZABLE, ReadSet, WinningCommit,
                                  check_conflicts, pruner_factory)
from sqlext.log.operations import Operation
from sqlext.log.protocol import check_writable
from sqlext.log import row_tracking
from sqlext.log.pruning import parse_predicate
from sqlext.log.segment import commit_name, parse_listing
from sqlext.log.snapshot import Snapshot
from sqlext.version import VERSION

log = logging.getLogger("sqlext")

ENGINE_INFO = f"sqlext/{VERSION}"     # without Spark; sqlext.engine.commit adds Spark's version
MAX_RETRIES = 1000
R = TypeVar("R")


def now_ms() -> int:
    return int(time.time() * 1000)


def after_commit(table: str, version: int | None, what: str, step: Callable[[], R],
                 fallback: Callable[[], R] | None = None) -> R | None:
    """Run ``step``, work that follows the commit of ``version``; when it fails, log a warning
    naming the table and the version and return ``fallback()`` (None without one): once
    ``N.json`` exists the change is in the table, whatever happens next."""
    try:
        return step()
    except Exception as exc:  # noqa: BLE001 - the commit stands whatever failed after it
        log.warning("table %s: version %s is committed, but %s failed afterwards: %s: %s",
                    table, version, what, type(exc).__name__, exc)
        return fallback() if fallback is not None else None


@dataclass(frozen=True)
class PostCommitHook:
    """A step a transaction runs after its commit landed (delta-rs ``PostCommit``): ``run``
    gets the transaction and the committed version; ``what`` names it in the warning logged
    when it fails (:func:`after_commit`: the commit stands)."""
    what: str
    run: Callable[["Transaction", int], None]


def _checkpoint_and_clean_up(txn: "Transaction", version: int) -> None:
    """A checkpoint every ``delta.checkpointInterval`` versions, then the cleanup of the log
    files it made expired (a failed cleanup waits for the next checkpoint)."""
    if version == 0:
        return
    snapshot = txn.log.snapshot(version)
    if version % txn.log.checkpoint_interval(snapshot) != 0:
        return
    txn.log.write_checkpoint(snapshot)
    after_commit(txn.log.name, version, f"cleaning up expired log files after checkpoint "
                 f"{version}", lambda: cleanup_expired_logs(txn.log, snapshot))


#: the kernel's post-commit hooks, which every transaction runs (the engine appends its own to a
#: transaction's :attr:`Transaction.post_commit`: :mod:`sqlext.engine.post_commit`)
KERNEL_POST_COMMIT = (PostCommitHook("writing the checkpoint", _checkpoint_and_clean_up),)


class Transaction:
    """One optimistic transaction on a table.

    Typical use: ``txn = log.start_transaction()``; scan ``txn.snapshot``; tell the transaction
    what was read (:meth:`read_predicate`, :meth:`read_files`, :meth:`read_whole_table`); then
    :meth:`commit` the actions. ``commit`` returns the version it created.
    """

    def __init__(self, log_, snapshot: Snapshot | None, isolation_level: str | None = None):
        self.log = log_
        self.snapshot = snapshot
        self.read_version = snapshot.version if snapshot is not None else -1
        self.reads = ReadSet()
        self.new_metadata: Metadata | None = None
        self.new_protocol: Protocol | None = None
        default = (props.ISOLATION_LEVEL.of(snapshot.metadata.configuration)
                   if snapshot is not None else None)
        # Serializable by default, stricter than delta-spark's WriteSerializable: a DELETE, UPDATE
        # or MERGE fails when rows were appended concurrently into the region it read, instead of
        # committing as if the append came after it. delta.isolationLevel=WriteSerializable opts out.
        self.isolation_level = isolation_level or default or SERIALIZABLE
        if self.isolation_level not in (SERIALIZABLE, WRITE_SERIALIZABLE):
            raise SqlextError(f"table {log_.name}: unknown isolation level {self.isolation_level!r};"
                              f" use {SERIALIZABLE} or {WRITE_SERIALIZABLE}", table=log_.name)
        self.committed_version: int | None = None
        self.attempts = 0
        self._winners_mark = -1        # the highest row id high-water mark winners committed
        # set by a writer that copied or updated rows with their materialized stable row ids
        self.row_ids_preserved = False
        # (appId, version) of an application transaction this commit records as a ``txn`` action
        # (delta-spark's idempotent DML: the session's write.txnAppId / txnVersion settings)
        self.app_transaction: tuple[str, int] | None = None
        # run in order once the commit landed; failures are logged, the commit stands
        self.post_commit: list[PostCommitHook] = list(KERNEL_POST_COMMIT)

    # --- what was read ----------------------------------------------------------------------

    def read_predicate(self, predicate) -> None:
        """Record that rows matching ``predicate`` (SQL text or sqlglot expression) were read."""
        if predicate is None:
            self.reads.whole_table = True
            return
        if isinstance(predicate, str):
            predicate = parse_predicate(predicate)
        self.reads.predicates.append(predicate)

    def read_whole_table(self) -> None:
        """Record that the whole table was read (any concurrent data change conflicts)."""
        self.reads.whole_table = True

    def read_files(self, files: Iterable[AddFile]) -> None:
        """Record data files that were scanned (a concurrent removal of one conflicts)."""
        self.reads.files.update(decode_path(f.path) for f in files)

    # --- metadata ---------------------------------------------------------------------------

    def update_metadata(self, metadata: Metadata) -> None:
        """Commit new metadata (schema, partitioning, properties) with the actions. With column
        mapping, fields that have no id and physical name yet get them
        (:func:`sqlext.log.column_mapping.assign_column_mapping`)."""
        previous = self.snapshot.metadata if self.snapshot is not None else None
        self.new_metadata = assign_column_mapping(metadata, previous, self.log.name)

    def update_protocol(self, protocol: Protocol) -> None:
        self.new_protocol = protocol

    @property
    def metadata(self) -> Metadata | None:
        """The metadata this transaction commits under (new, or the snapshot's)."""
        if self.new_metadata is not None:
            return self.new_metadata
        return self.snapshot.metadata if self.snapshot is not None else None

    # --- commit -----------------------------------------------------------------------------

    def commit(self, actions: Iterable[Action], operation: Operation | str,
               parameters: dict | None = None, metrics: dict | None = None,
               user_metadata: str | None = None, engine_info: str = ENGINE_INFO,
               extra_info: dict | None = None) -> int:
        """Commit ``actions`` as one new version and return it.

        ``operation``: an :class:`~sqlext.log.operations.Operation`, which gives the
        commitInfo's ``operation`` and ``operationParameters`` (``parameters`` stays None), or
        an operation's name with its ``parameters`` (the older form, kept for callers that
        have no operation object). Retries at later versions while the winners do not
        conflict; raises the typed :class:`~sqlext.errors.ConcurrentModificationException`
        subclass when one does.
        """
        if isinstance(operation, Operation):
            if parameters is not None:
                raise TypeError(f"{operation.name}: an Operation brings its own parameters")
            operation, parameters = operation.name, operation.parameters()
        if self.committed_version is not None:
            raise SqlextError(f"table {self.log.name}: this transaction already committed "
                              f"version {self.committed_version}", table=self.log.name,
                              version=self.committed_version)
        actions = list(actions)
        self._validate(actions)
        tracking = row_tracking.assigns_row_ids(self.new_protocol or (
            self.snapshot.protocol if self.snapshot is not None else None), self.metadata)
        if tracking:
            actions += self._row_tracking_backfill(actions)
        removes = {decode_path(a.path) for a in actions if isinstance(a, RemoveFile)}
        app_ids = {a.app_id for a in actions if isinstance(a, SetTransaction)}
        blind = (self.reads.empty and not removes
                 and all(a.data_change for a in actions if isinstance(a, AddFile)))
        info = {"timestamp": now_ms(), "operation": operation,
                "operationParameters": _stringify(parameters or {}),
                **({"readVersion": self.read_version} if self.read_version >= 0 else {}),
                "isolationLevel": self.isolation_level, "isBlindAppend": blind,
                "operationMetrics": _stringify(metrics or {}), "engineInfo": engine_info,
                "txnId": str(uuid.uuid4())}
        if user_metadata is not None:
            info["userMetadata"] = user_metadata
        if tracking:
            info["tags"] = {row_tracking.PRESERVED_TAG:
                            "true" if self.row_ids_preserved
                            or not row_tracking.rows_copied(actions) else "false"}
        info.update(extra_info or {})
        head: list[Action] = []
        if self.new_protocol is not None:
            head.append(self.new_protocol)
        if self.new_metadata is not None:
            head.append(self.new_metadata)
        body = head + actions
        checked_up_to = self.read_version
        version = self.read_version + 1
        self.attempts += 1                  # attempts: the versions this commit aimed at
        puts = 0
        pruners = pruner_factory(self.snapshot) if self.snapshot is not None else None
        while True:
            # Check the winners before the put, not only after losing it: log cleanup may have
            # removed N+1.json, and a put-if-absent would then "win" below a newer checkpoint.
            listing = self.log.version_listing()
            latest = listing.latest_version
            if latest is not None and any(v not in listing.commits
                                          for v in range(checked_up_to + 1, latest + 1)):
                listing = self.log.listing()      # names only cannot tell a directory apart
                latest = listing.latest_version
            if latest is not None and latest > checked_up_to:
                self._check_winners(listing, checked_up_to, pruners, removes, app_ids)
                checked_up_to = latest
            if checked_up_to + 1 != version:
                version = checked_up_to + 1
                self.attempts += 1
            puts += 1
            commit_info = CommitInfo(self._with_ict(info, version))
            data = serialize_commit([commit_info, *(self._with_row_ids(body, version)
                                                    if tracking else body)])
            path = self.log.store.join(self.log.log_dir, commit_name(version))
            try:
                self.log.store.write_if_absent(path, data)
            except FileExistsError as exc:
                if max(self.attempts, puts) > MAX_RETRIES:
                    raise ConcurrentModificationException(
                        f"table {self.log.name}: gave up after {self.attempts} attempts to commit "
                        f"(read version {self.read_version}); other writers kept winning. Retry "
                        "the operation later.", error_class="DELTA_CONCURRENT_WRITE",
                        table=self.log.name, version=self.read_version) from exc
                continue
            except OSError as exc:            # a full disk (ENOSPC), a quota, permissions
                raise CommitFailedError(
                    f"table {self.log.name}: could not write commit {version} (read version "
                    f"{self.read_version}): {exc.strerror or exc}. Nothing was committed; the "
                    "table is unchanged. Free space on the table's file system (or fix its "
                    "permissions) and run the operation again.", table=self.log.name,
                    version=version) from exc
            self._refuse_stray_commit(version, path)
            break
        self.committed_version = version
        self._post_commit(version)
        return version

    def _row_tracking_backfill(self, actions: list[Action]) -> list[Action]:
        """The re-adds giving ids to a table's files when this commit turns row tracking on
        (the whole table is then read: a concurrent data change conflicts)."""
        if (self.snapshot is None or self.new_metadata is None
                or not row_tracking.enabled(self.new_metadata.configuration)
                or row_tracking.enabled(self.snapshot.metadata.configuration)):
            return []
        files = row_tracking.backfill(self.snapshot.files, actions)
        if files:
            self.read_whole_table()
        return files

    def _with_row_ids(self, body: list[Action], version: int) -> list[Action]:
        """``body`` with row ids assigned for ``version`` above every mark committed so far."""
        start = max(self._winners_mark, row_tracking.high_water_mark(self.snapshot.domains)
                    if self.snapshot is not None else -1)
        previous = self.snapshot.files_by_path if self.snapshot is not None else {}
        body, mark = row_tracking.assign(self.log.name, body, version, start, previous)
        return body + [row_tracking.mark_action(mark)] if mark > start else body

    def _with_ict(self, info: dict, version: int) -> dict:
        md = self.metadata
        if md is None or not props.IN_COMMIT_TIMESTAMPS.of(md.configuration):
            return info
        # strictly greater than the previous commit's, whatever the clock says (PROTOCOL.md)
        ict = max(now_ms(), info["timestamp"])
        if version > 0:
            try:
                previous = self.log.commit_info(version - 1)
            except SqlextError:
                previous = None
            if previous is not None and previous.in_commit_timestamp is not None:
                ict = max(ict, int(previous.in_commit_timestamp) + 1)
        return {"inCommitTimestamp": ict, **info}

    def _validate(self, actions: list[Action]) -> None:
        if self.snapshot is None:
            if self.new_metadata is None or self.new_protocol is None:
                raise SqlextError(f"table {self.log.name}: creating a table needs protocol and "
                                  "metadata", table=self.log.name)
        else:
            check_writable(self.log.name, self.snapshot.version, self.new_protocol or
                           self.snapshot.protocol, self.metadata)
        if self.metadata is not None and props.APPEND_ONLY.of(self.metadata.configuration):
            bad = [a for a in actions if isinstance(a, RemoveFile) and a.data_change]
            if bad:
                raise UnsupportedOperationError(
                    f"table {self.log.name} is append-only (delta.appendOnly=true): this "
                    "operation would remove data. Set delta.appendOnly=false to allow it.",
                    error_class="DELTA_CANNOT_MODIFY_APPEND_ONLY", table=self.log.name,
                    version=self.read_version)

    def _check_winners(self, listing, checked_up_to: int, pruners, removes: set[str],
                       app_ids: set[str]) -> None:
        """Check the commits after ``checked_up_to`` up to the listing's latest for conflicts."""
        latest = listing.latest_version
        if self.snapshot is None:
            raise ProtocolChangedException(
                f"table {self.log.name}: another writer created the table (version {latest} is "
                "there now) while this transaction was creating it. Create the table ahead of "
                "time to avoid this conflict, or retry against the existing table.",
                table=self.log.name, version=latest)
        gone = [v for v in range(checked_up_to + 1, latest + 1) if v not in listing.commits]
        if gone:
            raise self._cleaned_up(gone, listing)
        for v in range(checked_up_to + 1, latest + 1):
            try:
                winner = WinningCommit(v, self.log.read_commit(v))
            except VersionNotFoundException:        # deleted since the listing
                raise self._cleaned_up([v], self.log.version_listing()) from None
            self._winners_mark = max(self._winners_mark, row_tracking.mark_in(winner.actions))
            check_conflicts(self.log.name, winner, self.reads, removes, app_ids,
                            self.new_metadata is not None, self.isolation_level, pruners)

    def _cleaned_up(self, gone: list[int], listing) -> ConcurrentLogCleanupException:
        newest_cp = max((c.version for c in listing.checkpoints), default=None)
        where = f"; the log now starts from checkpoint {newest_cp}" if newest_cp is not None else ""
        return ConcurrentLogCleanupException(
            f"table {self.log.name}: this transaction read version {self.read_version}, but "
            f"commits after it ({_span(gone)}) were removed by log cleanup{where}. They cannot be "
            "checked for conflicts, so nothing was committed and the table is unchanged. Retry the "
            "operation; to avoid this, keep delta.logRetentionDuration longer than the longest "
            "transaction.")

    def _refuse_stray_commit(self, version: int, path: str) -> None:
        """Undo a put that landed below a checkpoint written before it: log cleanup removed the
        winner's ``version`` between the check and the put, and no reader would see this commit."""
        if not any(c.version > version for c in self.log.version_listing().checkpoints):
            return                          # the common case, without a status per file
        store = self.log.store
        entries = {e.name: e for e in store.list_dir(self.log.log_dir) if not e.is_dir}
        listing = parse_listing(list(entries.values()))
        mine = listing.commits.get(version)
        if mine is None:
            return
        # A checkpoint after this version that predates this file was built from another
        # commit numbered ``version``: ours is a stray. (A checkpoint written after our put may
        # include it legitimately; commit files are not compared, as delta-rs reuses one temp
        # file for all its attempts, so a later winner's file can be older than ours.)
        older = [c.version for c in listing.checkpoints if c.version > version and
                 max(entries[p].modification_time for p in c.parts) < mine.modification_time]
        if not older:
            return
        store.delete(path)
        raise self._cleaned_up(list(range(self.read_version + 1, version + 1)), listing)

    def _post_commit(self, version: int) -> None:
        """Run :attr:`post_commit`'s hooks, in order, after ``version`` landed."""
        for hook in self.post_commit:
            after_commit(self.log.name, version, hook.what, lambda: hook.run(self, version))


def _span(versions: list[int]) -> str:
    return (f"version {versions[0]}" if len(versions) == 1
            else f"versions {versions[0]}..{versions[-1]}")


def _stringify(values: dict) -> dict:
    """operationParameters / operationMetrics are maps of strings in delta-spark's commitInfo."""
    out = {}
    for k, v in values.items():
        if v is None:
            continue
        if isinstance(v, bool):
            out[k] = "true" if v else "false"
        elif isinstance(v, (list, dict)):
            out[k] = json.dumps(v, separators=(",", ":"))
        else:
            out[k] = str(v)
    return out

