"""RESTORE's action planning and commit, from the log alone (no Spark), as delta-spark's
RestoreTableCommand.

One commit brings the table back to an older version: ``add`` (``dataChange=true``) for each file
of that version the latest one lacks, ``remove`` (``dataChange=true``) for each file of the latest
version the old one lacks, the old version's metadata, and a protocol that is never downgraded.
The change feed reads the commit as the inserts and deletes it amounts to. The files to add must
still exist: a version whose files were vacuumed cannot be restored
(:class:`~sqlext.errors.DeltaFileNotFoundError`) unless ``ignore_missing_files`` is true, in which
case the missing files are left out. The transaction reads the whole table, so any concurrent
data change makes the RESTORE fail rather than undo it silently. The Spark-side entry point
(session settings, result frame) is :mod:`sqlext.engine.maintenance.restore`.

Metrics (commit and result), delta-spark's: ``tableSizeAfterRestore``, ``numOfFilesAfterRestore``,
``numRemovedFiles``, ``numRestoredFiles``, ``removedFilesSize``, ``restoredFilesSize``.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from sqlext.errors import (DeltaFileNotFoundError, SqlextError, TableNotFoundError,
                           TimestampOutOfRangeError, UnsupportedOperationError,
                           VersionNotFoundException)
from sqlext.log import operations as ops
from sqlext.log.actions import AddFile, Protocol
from sqlext.log.deletion_vectors import unique_id
from sqlext.log.protocol import check_readable, check_writable
from sqlext.log.storage import is_local
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import ENGINE_INFO, now_ms

OPERATION = ops.Restore.name
# delta-spark's conditions for a RESTORE timestamp outside the table's history
_RESTORE_TIMESTAMP = {
    "DELTA_TIMESTAMP_GREATER_THAN_COMMIT": "DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER",
    "DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION": "DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER",
}


@dataclass
class RestoreResult:
    """The version RESTORE committed, the version it restored, and its metrics."""

    version: int
    restored_version: int
    metrics: dict[str, int]


def merged_protocol(restored: Protocol, current: Protocol) -> Protocol:
    """The protocol after a restore: the stronger of the two, never a downgrade."""
    def features(p: Protocol, attr: str) -> set[str]:
        return set(getattr(p, attr) or [])
    reader = max(restored.min_reader_version, current.min_reader_version)
    writer = max(restored.min_writer_version, current.min_writer_version)
    rf = features(restored, "reader_features") | features(current, "reader_features")
    wf = features(restored, "writer_features") | features(current, "writer_features")
    uses_rf = current.reader_features is not None or restored.reader_features is not None
    uses_wf = current.writer_features is not None or restored.writer_features is not None
    return Protocol(reader, writer, sorted(rf) if uses_rf and reader >= 3 else None,
                    sorted(wf) if uses_wf and writer >= 7 else None, dict(current.extra))


def _missing(log: DeltaLog, files: list[AddFile]) -> list[AddFile]:
    if is_local(log.location):
        return [f for f in files if not os.path.exists(log.data_path(f.path))]
    return [f for f in files if not log.store.exists(log.data_path(f.path))]


def _same_vector(a, b) -> bool:
    return unique_id(a.deletion_vector) == unique_id(b.deletion_vector)


def restore_table(log: DeltaLog, version: int | None = None, timestamp_ms: int | None = None,
                  *, timestamp_text: str | None = None, ignore_missing_files: bool = False,
                  engine_info: str = ENGINE_INFO,
                  user_metadata: str | None = None) -> RestoreResult:
    """Restore the table of ``log`` to ``version`` or to the version current at
    ``timestamp_ms`` (exactly one of them); no Spark needed. ``timestamp_text`` is what the
    commit records as the ``timestamp`` parameter; ``engine_info`` and ``user_metadata`` go into
    its commitInfo (:func:`sqlext.engine.commit.commit_fields`)."""
    if (version is None) == (timestamp_ms is None):
        raise SqlextError(f"table {log.name}: RESTORE needs a version or a timestamp (exactly "
                          "one of them)", table=log.name)
    txn = log.start_transaction()
    latest = txn.snapshot
    if latest is None:
        raise TableNotFoundError(f"{log.name} is not a Delta table (no _delta_log at "
                                 f"{log.location}); RESTORE needs an existing table",
                                 table=log.name)
    check_writable(log.name, latest.version, latest.protocol, latest.metadata)
    try:
        target_version = (int(version) if version is not None
                          else log.version_at_timestamp(int(timestamp_ms)))
    except TimestampOutOfRangeError as exc:     # delta-spark's conditions for RESTORE
        exc.error_class = _RESTORE_TIMESTAMP.get(exc.error_class, exc.error_class)
        exc.sqlstate = "22003" if exc.error_class in _RESTORE_TIMESTAMP.values() else exc.sqlstate
        raise
    if target_version > latest.version or target_version < 0:
        raise VersionNotFoundException(
            f"table {log.name}: cannot restore to version {target_version}: the latest version "
            f"is {latest.version}. Give an earlier version.",
            error_class="DELTA_CANNOT_RESTORE_TABLE_VERSION", table=log.name,
            version=target_version,
            message_parameters={"version": target_version, "endVersion": latest.version})
    if target_version == latest.version:
        raise UnsupportedOperationError(
            f"table {log.name}: version {target_version} is the latest version already; RESTORE "
            "needs an earlier version (as in delta-spark). The table is unchanged.",
            table=log.name, version=target_version)
    target = log.snapshot(target_version)
    check_readable(log.name, target.version, target.protocol, target.metadata)

    current, wanted = latest.files_by_path, target.files_by_path     # keyed by decoded path
    # a file is the same logical file only with the same deletion vector (a later DELETE may
    # have replaced it): otherwise its current (path, vector) goes and the target's comes back
    to_add = [dataclasses.replace(f, data_change=True) for p, f in wanted.items()
              if p not in current or not _same_vector(current[p], f)]
    to_remove = [f for p, f in current.items()
                 if p not in wanted or not _same_vector(wanted[p], f)]
    missing = _missing(log, to_add)
    if missing and not ignore_missing_files:
        shown = ", ".join(f.path for f in missing[:5])
        raise DeltaFileNotFoundError(
            f"table {log.name}: cannot restore to version {target_version}: {len(missing)} of "
            f"its data files no longer exist (removed by VACUUM, or lost), e.g. {shown}. Restore "
            "a later version, or set spark.sql.files.ignoreMissingFiles=true to restore without "
            "them. The table is unchanged.", table=log.name, version=target_version)
    if missing:
        gone = {f.path for f in missing}
        to_add = [f for f in to_add if f.path not in gone]

    txn.read_whole_table()
    txn.update_metadata(target.metadata)
    protocol = merged_protocol(target.protocol, latest.protocol)
    if protocol.to_dict() != latest.protocol.to_dict():
        txn.update_protocol(protocol)
    ts = now_ms()
    actions = list(to_add) + [f.remove(ts) for f in to_remove]
    metrics = {"tableSizeAfterRestore": target.size_in_bytes,
               "numOfFilesAfterRestore": len(target.files_by_path),
               "numRemovedFiles": len(to_remove),
               "numRestoredFiles": len(to_add),
               "removedFilesSize": sum(f.size for f in to_remove),
               "restoredFilesSize": sum(f.size for f in to_add)}
    done = ops.Restore(target_version if version is not None else None,
                       timestamp_text if timestamp_ms is not None else None)
    committed = txn.commit(actions, done, None, metrics, user_metadata, engine_info)
    return RestoreResult(committed, target_version, metrics)
