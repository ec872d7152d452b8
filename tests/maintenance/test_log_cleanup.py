"""Log cleanup after checkpoints (``delta.logRetentionDuration``): expired commits and checkpoints
go, every version within the retention stays reconstructable and reads as before. Kernel only
(no Spark); commit times are aged with ``os.utime``, as time travel reads them from mtimes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sqlext.errors import TimestampOutOfRangeError, VersionNotFoundException
from sqlext.log.cleanup import anchor_version, cleanup_expired_logs, expired_log_cutoff
from sqlext.log.segment import parse_listing
from sqlext.log.storage import FileStatus
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import append, clear_caches, create_table
from tests.support import deltalake_add_paths, read_deltalake

DAY_MS = 86_400_000


def _age(path: Path, versions, days_ago: float) -> None:
    """Give the commit (and checkpoint) files of ``versions`` an mtime ``days_ago`` days back,
    one second apart so that they stay in order."""
    log_dir = path / "_delta_log"
    base = time.time() - days_ago * 86_400
    for i, v in enumerate(versions):
        for name in (f"{v:020d}.json", f"{v:020d}.checkpoint.parquet"):
            if (log_dir / name).exists():
                os.utime(log_dir / name, (base + i, base + i))


def _build(path: Path, commits: int, conf: dict | None = None) -> DeltaLog:
    """A table with ``commits`` appends after version 0; checkpoints every 3 versions."""
    configuration = {"delta.checkpointInterval": "3", "delta.logRetentionDuration": "interval 2 days",
                     **(conf or {})}
    log = create_table(path, configuration=configuration)
    for i in range(commits):
        append(log, [{"id": i, "name": f"n{i}"}], part="a" if i % 2 else "b")
    return log


def _file_sets(log: DeltaLog, versions) -> dict[int, set[str]]:
    clear_caches()
    return {v: set(log.snapshot(v).files_by_path) for v in versions}


def test_cleanup_keeps_every_version_within_retention(tmp_path):
    path = tmp_path / "t"
    log = _build(path, 10)                      # versions 0..10, checkpoints at 3, 6, 9
    before = _file_sets(log, range(11))
    _age(path, range(0, 8), days_ago=5)         # versions 0..7 are older than the retention
    clear_caches()
    append(log, [{"id": 100, "name": "x"}])     # version 11
    append(log, [{"id": 101, "name": "y"}])     # version 12: checkpoint, then cleanup
    names = set(os.listdir(path / "_delta_log"))
    # the oldest version within retention is 8: checkpoint 6 rebuilds it and stays with its commit
    assert f"{6:020d}.checkpoint.parquet" in names and f"{6:020d}.json" in names
    for v in range(6):
        assert f"{v:020d}.json" not in names
    assert f"{3:020d}.checkpoint.parquet" not in names
    clear_caches()
    after = _file_sets(log, range(6, 11))
    assert after == {v: before[v] for v in range(6, 11)}
    for v in (0, 5):
        with pytest.raises(VersionNotFoundException, match="no longer be reconstructed"):
            log.snapshot(v)
    # another reader agrees on the oldest retained version and the latest
    for v in (6, 12):
        assert set(deltalake_add_paths(path, v)) == _file_sets(log, [v])[v]
    assert sorted(r["id"] for r in read_deltalake(path, 6).to_pylist()) == list(range(6))


def test_no_cleanup_before_the_retention(tmp_path):
    path = tmp_path / "t"
    log = _build(path, 7)                       # checkpoints at 3 and 6, all fresh
    names = set(os.listdir(path / "_delta_log"))
    assert {f"{v:020d}.json" for v in range(8)} <= names
    assert f"{3:020d}.checkpoint.parquet" in names
    assert cleanup_expired_logs(log, log.snapshot()).deleted == []


def test_cleanup_disabled_by_table_property(tmp_path):
    path = tmp_path / "t"
    log = _build(path, 6, {"delta.enableExpiredLogCleanup": "false"})
    _age(path, range(0, 6), days_ago=10)
    clear_caches()
    for i in range(3):
        append(log, [{"id": 50 + i, "name": "z"}])  # version 9 writes a checkpoint
    assert f"{0:020d}.json" in os.listdir(path / "_delta_log")


def test_everything_expired_keeps_the_latest_checkpoint_and_after(tmp_path):
    path = tmp_path / "t"
    log = _build(path, 8)
    _age(path, range(0, 9), days_ago=10)
    clear_caches()
    append(log, [{"id": 99, "name": "last"}])   # version 9: checkpoint 9, all older versions go
    names = sorted(os.listdir(path / "_delta_log"))
    assert [n for n in names if n.endswith(".json")] == [f"{9:020d}.json"]
    assert f"{9:020d}.checkpoint.parquet" in names and "_last_checkpoint" in names
    clear_caches()
    assert len(log.snapshot().files_by_path) == 9
    assert sorted(r["id"] for r in read_deltalake(path).to_pylist()) == [*range(8), 99]
    # time travel by timestamp before the first retained commit is out of range
    with pytest.raises(TimestampOutOfRangeError):
        log.version_at_timestamp(int((time.time() - 9 * 86_400) * 1000))


def test_stale_temporary_files_are_removed(tmp_path):
    path = tmp_path / "t"
    log = _build(path, 2)
    log_dir = path / "_delta_log"
    old = log_dir / f".{3:020d}.json.{'a' * 32}.tmp"
    fresh = log_dir / f".{3:020d}.json.{'b' * 32}.tmp"
    old.write_text("partial")
    fresh.write_text("in flight")
    ten_days_ago = time.time() - 10 * 86_400
    os.utime(old, (ten_days_ago, ten_days_ago))
    deleted = cleanup_expired_logs(log, log.snapshot()).deleted
    assert deleted == [old.name]
    assert fresh.exists() and not old.exists()


def test_cutoff_is_truncated_to_midnight_utc(tmp_path):
    log = _build(tmp_path / "t", 0)
    now = 1_700_000_000_000 + 13 * 3_600_000
    cutoff = expired_log_cutoff(log.snapshot(), now)
    assert cutoff % DAY_MS == 0 and now - 2 * DAY_MS - DAY_MS < cutoff <= now - 2 * DAY_MS
    assert expired_log_cutoff(log.snapshot(), now, truncate_to_day=False) == now - 2 * DAY_MS


def _listing(commits, checkpoints):
    entries = [FileStatus(f"{v:020d}.json", 1, 0) for v in commits]
    entries += [FileStatus(f"{v:020d}.checkpoint.parquet", 1, 0) for v in checkpoints]
    return parse_listing(entries)


@pytest.mark.parametrize("first_new, expected", [
    (8, 6),      # oldest version within retention 8: checkpoint 6 rebuilds it
    (6, 6),      # a checkpoint exactly at the oldest retained version
    (5, 3),
    (2, None),   # no checkpoint at or before version 2: nothing can go
])
def test_anchor_is_the_newest_checkpoint_at_or_before_the_oldest_retained_version(first_new,
                                                                                  expected):
    listing = _listing(range(0, 12), [3, 6, 9])
    times = {v: (10 if v < first_new else 1000) for v in range(12)}
    assert anchor_version(listing, times, cutoff_ms=100) == expected


def test_anchor_refuses_a_log_with_a_hole():
    listing = _listing([0, 1, 2, 3, 5, 6], [3])
    assert anchor_version(listing, {v: 0 for v in (0, 1, 2, 3, 5, 6)}, cutoff_ms=100) is None


@pytest.mark.parametrize("done", [1, 3, 5, 8])
def test_an_interrupted_cleanup_leaves_a_log_that_starts_later(tmp_path, done):
    """Cleanup deletes oldest first; stopping after ``done`` deletions (a killed process) leaves
    every version it kept readable as before, and the others cleanly unavailable."""
    path = tmp_path / "t"
    log = _build(path, 10)                                  # checkpoints 3, 6, 9
    before = _file_sets(log, range(11))
    _age(path, range(0, 8), days_ago=5)
    clear_caches()
    doomed = sorted(n for n in os.listdir(path / "_delta_log")
                    if n[:20].isdigit() and int(n[:20]) < 6)
    assert len(doomed) == 7                                 # commits 0..5 and checkpoint 3
    order = sorted(doomed, key=lambda n: (int(n[:20]), 0 if n.endswith(".json") else 1))
    for name in order[:done]:
        os.unlink(path / "_delta_log" / name)
    clear_caches()
    for v in range(11):
        try:
            files = set(log.snapshot(v).files_by_path)
        except VersionNotFoundException:
            assert v < 6, f"version {v} lost"
            continue
        assert files == before[v]
    # the next checkpoint's cleanup finishes the job
    clear_caches()
    append(log, [{"id": 100, "name": "x"}])
    append(log, [{"id": 101, "name": "y"}])                 # version 12: checkpoint + cleanup
    assert not any(int(n[:20]) < 6 for n in os.listdir(path / "_delta_log") if n[:20].isdigit())
