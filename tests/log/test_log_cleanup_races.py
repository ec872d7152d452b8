"""A transaction racing log cleanup (issue 12, section 1), kernel only.

A transaction reads version v; meanwhile other writers commit v+1..c, a checkpoint is written at c
and log cleanup deletes the commits before c. A put-if-absent of ``v+1.json`` would then succeed
(the file is gone) and land below the checkpoint, where no reader ever looks: a lost write. The
transaction must notice, commit nothing and raise ``ConcurrentLogCleanupException``. The other
writer here is delta-rs (``write_deltalake`` + ``create_checkpoint`` + ``cleanup_metadata``) or the
kernel itself; commit times are aged with ``os.utime``.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from sqlext.errors import ConcurrentLogCleanupException, ConcurrentModificationException
from sqlext.log.cleanup import cleanup_expired_logs
from sqlext.log.storage import LocalLogStore
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import (SHORT_RETENTION, age_commits, append, clear_caches, create_table,
                           log_bytes, log_files, write_file)
from tests.support import read_deltalake

CONF = SHORT_RETENTION


pytestmark = pytest.mark.usefixtures("fresh_caches")     # kernel caches cleared around each test


def _deltars_append_checkpoint_cleanup(location: str, first_id: int) -> None:
    """Another engine appends three versions, the commits age two days, then it checkpoints its
    latest version and cleans the log up (deleting every commit before the checkpoint)."""
    for i in range(3):
        write_deltalake(location, pa.table({"id": pa.array([first_id + i], pa.int64()),
                                            "name": ["other"], "part": ["b"]}), mode="append")
    age_commits(location, days_ago=2)
    dt = DeltaTable(location)
    dt.create_checkpoint()
    dt.cleanup_metadata()


def _ids(log: DeltaLog) -> list[int]:
    clear_caches()
    return sorted(r["id"] for r in read_deltalake(log.location).to_pylist())


def _kernel_ids(log: DeltaLog) -> list[int]:
    """The ids of the latest version as the kernel rebuilds it (pyarrow reads its files)."""
    clear_caches()
    snap = DeltaLog(log.location).snapshot()
    return sorted(i for f in snap.files
                  for i in pq.read_table(log.data_path(f.path))["id"].to_pylist())


def _no_temp_files(log: DeltaLog) -> bool:
    return not [n for n in os.listdir(log.log_dir) if n.endswith(".tmp")]


@pytest.mark.parametrize("kind", ["blind append", "read files"])
def test_cleanup_first_the_commit_is_refused_and_nothing_is_written(tmp_path, kind):
    log = create_table(tmp_path / "t", configuration=CONF)
    append(log, [{"id": 1, "name": "a"}])                       # version 1
    txn = log.start_transaction()                               # reads version 1
    victim = txn.snapshot.files[0]
    if kind == "read files":
        txn.read_files([victim])
        txn.read_predicate("part = 'a'")
    add = write_file(log, [{"id": 99, "name": "mine"}], partition_values={"part": "a"})
    _deltars_append_checkpoint_cleanup(log.location, 10)        # versions 2..4, checkpoint 4
    assert f"{2:020d}.json" not in log_files(log.location)
    before = log_bytes(log.location)
    actions = [add] + ([victim.remove(1)] if kind == "read files" else [])
    with pytest.raises(ConcurrentLogCleanupException) as err:
        txn.commit(actions, "WRITE")
    assert isinstance(err.value, ConcurrentModificationException)
    msg = str(err.value)
    assert log.location in msg and "read version 1" in msg and "versions 2..3" in msg
    assert "checkpoint 4" in msg and "delta.logRetentionDuration" in msg
    assert log_bytes(log.location) == before and _no_temp_files(log)
    # every reader sees the same table: the other engine's rows, not the refused one
    assert _ids(log) == _kernel_ids(log) == [1, 10, 11, 12]
    assert DeltaTable(log.location).version() == DeltaLog(log.location).latest_version() == 4
    # a retry (a new transaction) commits above the checkpoint and everyone sees it
    assert append(log, [{"id": 100, "name": "retry"}]) == 5
    assert _ids(log) == _kernel_ids(log) == [1, 10, 11, 12, 100]


def test_commit_first_the_commit_survives_cleanup(tmp_path):
    log = create_table(tmp_path / "t", configuration=CONF)
    append(log, [{"id": 1, "name": "a"}])
    txn = log.start_transaction()
    add = write_file(log, [{"id": 99, "name": "mine"}], partition_values={"part": "a"})
    assert txn.commit([add], "WRITE") == 2                      # before the others and cleanup
    _deltars_append_checkpoint_cleanup(log.location, 10)        # versions 3..5, checkpoint 5
    assert f"{2:020d}.json" not in log_files(log.location)      # cleaned up, but in checkpoint 5
    assert _ids(log) == _kernel_ids(log) == [1, 10, 11, 12, 99]


def test_kernel_writer_and_kernel_cleanup(tmp_path):
    """The same hole with sqlext alone: its own checkpoint and cleanup after a commit."""
    log = create_table(tmp_path / "t", configuration={**CONF, "delta.checkpointInterval": "4"})
    append(log, [{"id": 1, "name": "a"}])
    txn = log.start_transaction()
    txn.read_predicate("part = 'b'")
    add = write_file(log, [{"id": 99, "name": "mine"}], partition_values={"part": "b"})
    other = DeltaLog(log.location)
    append(other, [{"id": 2, "name": "x"}])                    # version 2
    append(other, [{"id": 3, "name": "x"}])                    # version 3
    age_commits(log.location, days_ago=2)
    append(other, [{"id": 4, "name": "x"}])                    # version 4: checkpoint + cleanup
    assert log_files(log.location)[0] == f"{4:020d}.checkpoint.parquet"
    before = log_bytes(log.location)
    with pytest.raises(ConcurrentLogCleanupException, match="versions 2..3"):
        txn.commit([add], "WRITE")
    assert log_bytes(log.location) == before
    assert _ids(log) == _kernel_ids(log) == [1, 2, 3, 4]


class _CleanupBeforePut(LocalLogStore):
    """The local store, with an adversary that runs once right before the next commit put: the
    window between the transaction's check of the log and its put-if-absent."""

    def __init__(self, adversary):
        self.adversary = adversary

    def write_if_absent(self, path: str, data: bytes) -> None:
        adversary, self.adversary = self.adversary, None
        if adversary is not None and path.endswith(".json"):
            adversary()
        super().write_if_absent(path, data)


def test_cleanup_between_check_and_put_the_stray_commit_is_removed(tmp_path):
    log = create_table(tmp_path / "t", configuration=CONF)
    append(log, [{"id": 1, "name": "a"}])                       # version 1
    racing = DeltaLog(log.location, store=_CleanupBeforePut(
        lambda: _deltars_append_checkpoint_cleanup(log.location, 10)))
    txn = racing.start_transaction()
    add = write_file(log, [{"id": 99, "name": "mine"}], partition_values={"part": "a"})
    with pytest.raises(ConcurrentLogCleanupException) as err:
        txn.commit([add], "WRITE")
    assert "read version 1" in str(err.value)
    # the put of version 2 succeeded below checkpoint 4; the transaction deleted its own file
    assert log_files(log.location) == [f"{4:020d}.checkpoint.parquet", f"{4:020d}.json",
                                       "_last_checkpoint"]
    assert _ids(log) == _kernel_ids(log) == [1, 10, 11, 12]
    assert txn.committed_version is None


class _CleanupOnRead(LocalLogStore):
    """The local store, with an adversary that runs once when ``name`` is first read."""

    def __init__(self, name: str, adversary):
        self.name, self.adversary = name, adversary

    def read(self, path: str) -> bytes:
        if os.path.basename(path) == self.name and self.adversary is not None:
            adversary, self.adversary = self.adversary, None
            adversary()
        return super().read(path)


def test_winner_deleted_between_listing_and_read_is_a_cleanup_conflict(tmp_path):
    """Cleanup deletes a winner after the transaction listed it and before it reads it."""
    log = create_table(tmp_path / "t", configuration={**CONF, "delta.checkpointInterval": "100"})
    append(log, [{"id": 1, "name": "a"}])

    def adversary():
        other = DeltaLog(log.location)
        append(other, [{"id": 3, "name": "c"}])                 # version 3
        snap = other.snapshot()
        other.write_checkpoint(snap)
        age_commits(log.location, days_ago=2, versions=range(3))
        cleanup_expired_logs(other, snap)

    racing = DeltaLog(log.location, store=_CleanupOnRead(f"{2:020d}.json", adversary))
    txn = racing.start_transaction()                            # reads version 1
    append(DeltaLog(log.location), [{"id": 2, "name": "b"}])    # version 2, a winner
    add = write_file(log, [{"id": 99, "name": "mine"}], partition_values={"part": "a"})
    clear_caches()
    with pytest.raises(ConcurrentLogCleanupException, match="version 2"):
        txn.commit([add], "WRITE")
    assert f"{2:020d}.json" not in log_files(log.location)
    assert _ids(log) == _kernel_ids(log) == [1, 2, 3]
