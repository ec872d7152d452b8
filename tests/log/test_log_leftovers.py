"""Leftovers and transient failures of the log (issue 12, section 3), kernel only: temp files of a
failed write are removed by the writer, stale ones by log cleanup; a read of the latest version
racing log cleanup lists again instead of failing; an empty commit file is refused."""

from __future__ import annotations

import os
import resource
import signal
import threading
import time
import uuid

import pytest

from sqlext.errors import CorruptLogError, SqlextError
from sqlext.log.cleanup import cleanup_expired_logs
from sqlext.log.storage import LocalLogStore
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import (SHORT_RETENTION, age_commits, append, clear_caches, create_table,
                           log_bytes, log_files, write_file)
from tests.support import deltalake_add_paths

CONF = SHORT_RETENTION


pytestmark = pytest.mark.usefixtures("fresh_caches")     # kernel caches cleared around each test


def _temp_files(log: DeltaLog) -> list[str]:
    return [n for n in os.listdir(log.log_dir) if n.endswith(".tmp")]


class _FileSizeLimit:
    """Writes past ``limit`` bytes into any file fail with EFBIG, as on a full disk (ENOSPC):
    the process's RLIMIT_FSIZE, with SIGXFSZ ignored so that the write raises OSError."""

    def __init__(self, limit: int):
        self.limit = limit

    def __enter__(self):
        self.old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
        self.old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.limit, self.old_limit[1]))

    def __exit__(self, *exc):
        resource.setrlimit(resource.RLIMIT_FSIZE, self.old_limit)
        signal.signal(signal.SIGXFSZ, self.old_handler)


def test_a_commit_that_cannot_be_written_leaves_no_temp_file(tmp_path):
    log = create_table(tmp_path / "t")
    append(log, [{"id": 1, "name": "a"}])
    add = write_file(log, [{"id": 2, "name": "b"}], partition_values={"part": "a"})
    before = log_bytes(log.location)
    txn = log.start_transaction()
    with _FileSizeLimit(4096), pytest.raises((OSError, SqlextError)):
        txn.commit([add], "WRITE", user_metadata="x" * 20_000)    # the commit is ~20 KB
    assert _temp_files(log) == [] and log_bytes(log.location) == before
    assert append(log, [{"id": 3, "name": "c"}]) == 2                   # the table works on


def test_a_checkpoint_that_cannot_be_written_leaves_no_temp_file(tmp_path):
    log = create_table(tmp_path / "t", configuration={"delta.checkpointInterval": "2"})
    append(log, [{"id": 1, "name": "a"}])
    # the checkpoint of version 2 cannot replace a directory of its name: its write fails
    os.mkdir(os.path.join(log.log_dir, f"{2:020d}.checkpoint.parquet"))
    assert append(log, [{"id": 2, "name": "b"}]) == 2                   # the commit stands
    assert _temp_files(log) == []
    assert len(DeltaLog(log.location).snapshot().files) == 2


def _temp_name(version: int, kind: str) -> str:
    return f".{version:020d}.{kind}.{uuid.uuid4().hex}.tmp"


def test_log_cleanup_removes_temp_files_older_than_an_hour(tmp_path):
    log = create_table(tmp_path / "t", configuration=CONF)
    append(log, [{"id": 1, "name": "a"}])
    old = [_temp_name(2, "json"), _temp_name(1, "checkpoint.parquet")]
    fresh = [_temp_name(2, "json"), _temp_name(3, "checkpoint.parquet")]
    now = time.time()
    for name, age_s in [(old[0], 2 * 3600), (old[1], 3700), (fresh[0], 0), (fresh[1], 1800)]:
        path = os.path.join(log.log_dir, name)
        with open(path, "wb") as f:
            f.write(b"{}")
        os.utime(path, (now - age_s, now - age_s))
    result = cleanup_expired_logs(log, log.snapshot())
    assert sorted(result.deleted) == sorted(old)
    assert sorted(_temp_files(log)) == sorted(fresh)
    assert log.snapshot().version == 1 and f"{0:020d}.json" in log_files(log.location)


@pytest.mark.parametrize("content", [b"", b"\n", b"  \n\n"])
def test_an_empty_last_commit_is_refused(tmp_path, content):
    log = create_table(tmp_path / "t")
    for i in range(3):
        append(log, [{"id": i, "name": "x"}])
    with open(os.path.join(log.log_dir, f"{3:020d}.json"), "wb") as f:
        f.write(content)
    clear_caches()
    with pytest.raises(CorruptLogError) as err:
        DeltaLog(log.location).snapshot()
    msg = str(err.value)
    assert log.location in msg and "version 3" in msg and "empty" in msg and "backup" in msg
    assert len(DeltaLog(log.location).snapshot(2).files) == 2           # the versions before read


class _CleanupAfterListing(LocalLogStore):
    """The local store, with an adversary that runs once right after the next listing of
    ``_delta_log``: the reader decides what to read, then log cleanup deletes it."""

    def __init__(self, adversary):
        self.adversary = adversary

    def list_dir(self, path: str):
        entries = super().list_dir(path)
        if path.endswith("_delta_log") and self.adversary is not None:
            adversary, self.adversary = self.adversary, None
            adversary()
        return entries


def _table_with_checkpoint(tmp_path) -> DeltaLog:
    """Versions 0..5 with a checkpoint at 3 (interval 3), retention one day."""
    log = create_table(tmp_path / "t", configuration={**CONF, "delta.checkpointInterval": "3"})
    for i in range(5):
        append(log, [{"id": i, "name": "x"}])
    return log


def _checkpoint_and_clean(location: str) -> None:
    """Another writer commits up to version 6 (a checkpoint) with every earlier commit aged two
    days, so its log cleanup deletes versions 0..5 and checkpoint 3."""
    age_commits(location, days_ago=2)
    append(DeltaLog(location), [{"id": 100, "name": "late"}])           # version 6
    clear_caches()                                                      # the reader's process


def test_a_read_of_the_latest_version_racing_cleanup_lists_again(tmp_path):
    log = _table_with_checkpoint(tmp_path)
    clear_caches()
    reader = DeltaLog(log.location, store=_CleanupAfterListing(
        lambda: _checkpoint_and_clean(log.location)))
    snap = reader.snapshot()            # listed 0..5 + checkpoint 3; then all of it was deleted
    assert log_files(log.location)[0] == f"{6:020d}.checkpoint.parquet"
    assert snap.version == 6 and snap.checkpoint_version == 6
    assert set(snap.files_by_path) == deltalake_add_paths(log.location)


def test_a_real_corruption_is_not_retried_into_success(tmp_path):
    log = _table_with_checkpoint(tmp_path)
    os.unlink(os.path.join(log.log_dir, f"{4:020d}.json"))
    clear_caches()
    with pytest.raises(CorruptLogError, match=r"\[4\]"):
        DeltaLog(log.location).snapshot()


def test_reads_under_a_cleanup_loop_never_fail(tmp_path):
    """Readers of the latest version while a writer commits every few milliseconds, checkpoints
    every other version and cleans the log (every commit aged two days)."""
    log = create_table(tmp_path / "t", configuration={**CONF, "delta.checkpointInterval": "2"})
    stop = threading.Event()
    errors: list[Exception] = []
    reads = 0

    def writer():
        i = 0
        while not stop.is_set():
            age_commits(log.location, days_ago=2)
            append(DeltaLog(log.location), [{"id": i, "name": "w"}])
            i += 1
            time.sleep(0.002)

    thread = threading.Thread(target=writer)
    thread.start()
    deadline = time.time() + 6
    try:
        while time.time() < deadline:
            clear_caches()
            try:
                snap = DeltaLog(log.location).snapshot()
                assert len(snap.files) == snap.version
            except SqlextError as exc:
                errors.append(exc)
            reads += 1
    finally:
        stop.set()
        thread.join()
    assert reads > 20 and not errors, f"{len(errors)} of {reads} reads failed: {errors[:3]}"
