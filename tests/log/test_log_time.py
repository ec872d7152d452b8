"""Version and timestamp resolution: commit mtimes made strictly increasing, in-commit timestamps,
errors before the first commit and after the last; history."""

from __future__ import annotations

import os

import pytest

from sqlext.errors import TableNotFoundError, TimestampOutOfRangeError
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import append, clear_caches, create_table
from tests.support.fixtures import commit_timestamps

T0 = 1_700_000_000_000


pytestmark = pytest.mark.usefixtures("fresh_caches")     # kernel caches cleared around each test


def _set_mtime(log: DeltaLog, version: int, ms: int) -> None:
    os.utime(os.path.join(log.log_dir, f"{version:020d}.json"), ns=(ms * 10**6, ms * 10**6))


def _table(tmp_path, commits=4, configuration=None) -> DeltaLog:
    log = create_table(tmp_path / "t", configuration=configuration)
    for i in range(commits):
        append(log, [{"id": i, "name": "x"}])
    return log


def test_equal_and_decreasing_mtimes_are_made_strictly_increasing(tmp_path):
    log = _table(tmp_path)
    for v, ms in {0: T0, 1: T0 + 1000, 2: T0 + 1000, 3: T0 + 1000, 4: T0 + 500}.items():
        _set_mtime(log, v, ms)
    times = log.commit_timestamps()
    assert times == {0: T0, 1: T0 + 1000, 2: T0 + 1001, 3: T0 + 1002, 4: T0 + 1003}
    assert log.version_at_timestamp(T0 + 1000) == 1
    assert log.version_at_timestamp(T0 + 1001) == 2
    assert log.version_at_timestamp(T0 + 1002) == 3
    assert log.version_at_timestamp(T0 + 1003) == 4


def test_version_at_timestamp_between_commits(tmp_path):
    log = _table(tmp_path)
    for v in range(5):
        _set_mtime(log, v, T0 + v * 60_000)
    assert log.version_at_timestamp(T0) == 0
    assert log.version_at_timestamp(T0 + 59_999) == 0
    assert log.version_at_timestamp(T0 + 60_000) == 1
    assert log.version_at_timestamp(T0 + 150_000) == 2
    assert log.version_at_timestamp(T0 + 240_000) == 4
    assert log.first_version_at_or_after(T0 + 1) == 1
    assert log.first_version_at_or_after(T0 + 240_000) == 4
    assert log.first_version_at_or_after(T0 + 240_001) is None


def test_timestamp_before_first_and_after_last(tmp_path):
    log = _table(tmp_path)
    for v in range(5):
        _set_mtime(log, v, T0 + v * 60_000)
    with pytest.raises(TimestampOutOfRangeError) as err:
        log.version_at_timestamp(T0 - 1)
    msg = str(err.value)
    assert "before the earliest" in msg and "version 0" in msg and log.location in msg
    assert "2023-11-14T22:13:20.000+00:00" in msg
    with pytest.raises(TimestampOutOfRangeError) as err:
        log.version_at_timestamp(T0 + 240_001)
    assert "after the latest" in str(err.value) and "version 4" in str(err.value)


def test_timestamp_on_a_log_that_starts_later(tmp_path):
    log = _table(tmp_path, commits=12)
    for v in range(13):
        _set_mtime(log, v, T0 + v * 1000)
    for v in range(10):
        os.unlink(os.path.join(log.log_dir, f"{v:020d}.json"))
    clear_caches()
    log = DeltaLog(log.location)
    assert log.version_at_timestamp(T0 + 10_000) == 10
    assert log.version_at_timestamp(T0 + 11_500) == 11
    assert log.version_at_timestamp(T0 + 12_000) == 12
    with pytest.raises(TimestampOutOfRangeError, match="version 10"):
        log.version_at_timestamp(T0 + 9_999)


def test_no_table(tmp_path):
    with pytest.raises(TableNotFoundError):
        DeltaLog(str(tmp_path / "nothing")).version_at_timestamp(T0)


def test_fixture_commit_times(fixture_table):
    path = fixture_table("simple_table")
    log = DeltaLog(str(path))
    stamps = commit_timestamps(path)
    times = log.commit_timestamps()
    assert times == {v: ms for v, ms in stamps.items()}       # distinct and increasing already
    for v, ms in stamps.items():
        assert log.version_at_timestamp(ms) == v
        if v:
            assert log.version_at_timestamp(ms - 1) == v - 1


def test_in_commit_timestamps_win_over_mtimes(tmp_path):
    conf = {"delta.enableInCommitTimestamps": "true",
            "delta.inCommitTimestampEnablementVersion": "0"}
    log = _table(tmp_path, commits=4, configuration=conf)
    icts = {}
    for v in range(5):
        info = log.commit_info(v)
        assert info.in_commit_timestamp is not None
        icts[v] = info.in_commit_timestamp
        _set_mtime(log, v, T0 - v)              # mtimes that say nothing useful
    assert all(icts[v] < icts[v + 1] for v in range(4)), icts    # strictly increasing
    assert log.commit_timestamps() == icts
    for v, ms in icts.items():
        assert log.version_at_timestamp(ms) == v
    with pytest.raises(TimestampOutOfRangeError):
        log.version_at_timestamp(icts[0] - 1)
    # the commitInfo line comes first, as the protocol asks of in-commit timestamps
    with open(os.path.join(log.log_dir, f"{3:020d}.json")) as f:
        assert f.readline().startswith('{"commitInfo":{"inCommitTimestamp"')


def test_in_commit_timestamps_stay_increasing_when_the_clock_does_not(tmp_path, monkeypatch):
    from sqlext.log import transaction
    conf = {"delta.enableInCommitTimestamps": "true",
            "delta.inCommitTimestampEnablementVersion": "0"}
    log = _table(tmp_path, commits=0, configuration=conf)
    monkeypatch.setattr(transaction, "now_ms", lambda: T0)       # a clock stuck, or behind
    for i in range(3):
        append(log, [{"id": i, "name": "x"}])
    icts = [log.commit_info(v).in_commit_timestamp for v in range(4)]
    assert all(a < b for a, b in zip(icts, icts[1:])), icts
    assert icts[1:] == [icts[0] + 1, icts[0] + 2, icts[0] + 3]


def test_in_commit_timestamps_enabled_later(tmp_path):
    log = _table(tmp_path, commits=2)
    for v in range(3):
        _set_mtime(log, v, T0 + v)
    snap = log.snapshot()
    md = snap.metadata
    md.configuration = {**md.configuration, "delta.enableInCommitTimestamps": "true",
                        "delta.inCommitTimestampEnablementVersion": "3"}
    txn = log.start_transaction()
    txn.update_metadata(md)
    assert txn.commit([], "SET TBLPROPERTIES") == 3
    append(log, [{"id": 9, "name": "y"}])
    times = log.commit_timestamps()
    assert [times[v] for v in range(3)] == [T0, T0 + 1, T0 + 2]
    assert times[3] == log.commit_info(3).in_commit_timestamp
    assert times[4] == log.commit_info(4).in_commit_timestamp > times[3]


def test_history(tmp_path):
    log = _table(tmp_path, commits=3)
    hist = log.history()
    assert [h.version for h in hist] == [3, 2, 1, 0]
    assert [h.commit_info.operation for h in hist] == ["WRITE", "WRITE", "WRITE", "CREATE TABLE"]
    assert hist[0].commit_info.values["operationMetrics"] == {"numFiles": "1", "numOutputRows": "1"}
    assert hist[0].commit_info.values["readVersion"] == 2
    assert [h.version for h in log.history(limit=2)] == [3, 2]
    assert all(a.timestamp > b.timestamp for a, b in zip(hist, hist[1:]))
