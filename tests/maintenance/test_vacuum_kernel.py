"""VACUUM without Spark (``collect_garbage``): what is deleted and what never is. "Later" is
simulated by passing ``now_ms``, so the default 7-day retention is exercised as is."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from sqlext.log.vacuum import collect_garbage
from sqlext.errors import (TableNotFoundError, UnsupportedOperationError,
                           VersionNotFoundException)
from sqlext.log.actions import AddCDCFile, RemoveFile
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import append, clear_caches, create_table, log_bytes, write_file
from tests.support import deltalake_add_paths, read_deltalake

DAY_MS = 86_400_000


def _now() -> int:
    return int(time.time() * 1000)


def _remove(log: DeltaLog, path: str, deletion_ms: int | None = None) -> int:
    snap = log.snapshot()
    f = next(f for f in snap.files if f.path == path)
    txn = log.start_transaction()
    txn.read_files([f])
    return txn.commit([f.remove(deletion_ms if deletion_ms is not None else _now())], "DELETE")


def _tree(root: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            out.add(Path(dirpath, name).relative_to(root).as_posix())
    return out


@pytest.fixture
def table(tmp_path):
    """A partitioned table: three live files, one removed file, plus everything VACUUM must
    judge: an orphan, staging leftovers, an old change file, hidden files, symlinks."""
    path = tmp_path / "t"
    log = create_table(path)
    for i, part in enumerate(["a", "a", "b", "c"]):
        append(log, [{"id": i, "name": f"n{i}"}], part=part)
    removed = next(f.path for f in log.snapshot().files if f.partition_values["part"] == "c")
    _remove(log, removed)
    orphan = write_file(log, [{"id": 9, "name": "orphan"}], partition_values={"part": "a"}).path
    (path / "_sqlext_staging" / "abc" / "_temporary").mkdir(parents=True)
    (path / "_sqlext_staging" / "abc" / "part-0.parquet").write_bytes(b"x" * 10)
    (path / "_sqlext_staging" / "abc" / "_temporary" / ".part-0.crc").write_bytes(b"c")
    (path / "_change_data").mkdir()
    (path / "_change_data" / "cdc-old.parquet").write_bytes(b"cdc")
    (path / "part=a" / ".hidden").write_bytes(b"h")
    (path / "_other").mkdir()
    (path / "_other" / "keep.txt").write_bytes(b"k")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.parquet").write_bytes(b"p")
    os.symlink(outside, path / "part=z")                      # a symlinked directory
    os.symlink(outside / "precious.parquet", path / "part=a" / "link.parquet")
    return {"path": path, "log": log, "removed": removed, "orphan": orphan, "outside": outside}


def test_default_retention_keeps_recent_files(table):
    before = _tree(table["path"])
    result = collect_garbage(table["log"])
    assert result.paths == [] and result.retention_ms == 7 * DAY_MS
    # only the VACUUM START / END commits (delta-spark logs them even when nothing goes)
    assert _tree(table["path"]) - before == {"_delta_log/00000000000000000006.json",
                                             "_delta_log/00000000000000000007.json"}
    assert before <= _tree(table["path"])


def test_after_the_retention_only_unreferenced_files_go(table):
    path, log = table["path"], table["log"]
    live = set(deltalake_add_paths(path))
    dry = collect_garbage(log, dry_run=True, now_ms=_now() + 8 * DAY_MS)
    expected = {table["removed"], table["orphan"], "_sqlext_staging/abc/part-0.parquet",
                "_sqlext_staging/abc/_temporary/.part-0.crc", "_change_data/cdc-old.parquet"}
    assert {Path(p).relative_to(path).as_posix() for p in dry.files} == expected
    assert {Path(p).relative_to(path).as_posix() for p in dry.directories} == {
        "part=c", "_sqlext_staging/abc/_temporary", "_sqlext_staging/abc", "_sqlext_staging",
        "_change_data"}
    assert dry.start_version is None and log.latest_version() == 5      # a dry run commits nothing
    assert all(Path(p).exists() for p in dry.files)

    result = collect_garbage(log, now_ms=_now() + 8 * DAY_MS)
    assert sorted(result.paths) == sorted(dry.paths)
    remaining = _tree(path)
    assert not any(p.startswith("_sqlext_staging") or p.startswith("_change_data")
                   for p in remaining)
    # never touched: the log, live files, hidden entries, symlinks and what they point to
    assert live <= remaining
    assert {"part=a/.hidden", "_other/keep.txt", "part=z", "part=a/link.parquet"} <= remaining
    assert (table["outside"] / "precious.parquet").read_bytes() == b"p"
    assert any(p.startswith("_delta_log/") for p in remaining)
    assert set(deltalake_add_paths(path)) == live
    assert sorted(r["id"] for r in read_deltalake(path).to_pylist()) == [0, 1, 2]


def test_vacuum_start_and_end_commits(table):
    log = table["log"]
    result = collect_garbage(log, now_ms=_now() + 8 * DAY_MS)
    assert (result.start_version, result.end_version) == (6, 7)
    start, end = log.commit_info(6).values, log.commit_info(7).values
    assert start["operation"] == "VACUUM START" and end["operation"] == "VACUUM END"
    assert start["operationParameters"] == {"retentionCheckEnabled": "true",
                                            "defaultRetentionMillis": str(7 * DAY_MS)}
    assert start["operationMetrics"]["numFilesToDelete"] == str(len(result.paths))
    assert start["operationMetrics"]["sizeOfDataToDelete"] == str(result.bytes)
    assert end["operationParameters"] == {"status": "COMPLETED"}
    assert end["operationMetrics"]["numDeletedFiles"] == str(len(result.paths))
    # empty commits: no actions, so they change no file list
    assert set(log.snapshot(7).files_by_path) == set(log.snapshot(5).files_by_path)
    no_log = collect_garbage(log, log_commits=False)
    assert no_log.start_version is None and log.latest_version() == 7


def test_tombstone_within_retention_protects_its_file(tmp_path):
    path = tmp_path / "t"
    log = create_table(path)
    append(log, [{"id": 1, "name": "a"}])
    append(log, [{"id": 2, "name": "b"}])
    first, second = sorted(log.snapshot().files, key=lambda f: f.num_records or 0)[:2]
    now = _now()
    _remove(log, first.path, deletion_ms=now)                   # removed now
    _remove(log, second.path, deletion_ms=now - 10 * DAY_MS)    # removed long ago
    old = time.time() - 20 * 86_400
    for f in (first, second):                                   # both written 20 days ago
        os.utime(path / f.path, (old, old))
    # eight days from now, a 9-day retention: the file removed now is still within it (its
    # tombstone protects it), the one removed 10 days ago is not
    result = collect_garbage(log, retention_hours=9 * 24, now_ms=now + 8 * DAY_MS)
    assert [Path(p).relative_to(path).as_posix() for p in result.files] == [second.path]
    assert (path / first.path).exists()


def test_short_retention_is_refused_unless_the_check_is_off(table):
    log = table["log"]
    before = log_bytes(table["path"])
    with pytest.raises(UnsupportedOperationError, match="168 hours") as err:
        collect_garbage(log, retention_hours=1)
    assert "retentionDurationCheck.enabled=false" in str(err.value)
    with pytest.raises(UnsupportedOperationError, match="negative"):
        collect_garbage(log, retention_hours=-1, check_retention=False)
    assert log_bytes(table["path"]) == before
    result = collect_garbage(log, retention_hours=0, check_retention=False)
    assert table["orphan"] in {Path(p).relative_to(table["path"]).as_posix() for p in result.files}


def test_table_retention_property_sets_the_default(tmp_path):
    path = tmp_path / "t"
    log = create_table(path, configuration={"delta.deletedFileRetentionDuration": "interval 1 hours"})
    append(log, [{"id": 1, "name": "a"}])
    orphan = write_file(log, [{"id": 2, "name": "o"}], partition_values={"part": "a"})
    assert collect_garbage(log, retention_hours=2).paths == []      # 2 h >= 1 h: allowed
    result = collect_garbage(log, now_ms=_now() + 2 * 3_600_000)
    assert [Path(p).relative_to(path).as_posix() for p in result.files] == [orphan.path]


def test_files_outside_the_table_are_never_deleted(tmp_path):
    path = tmp_path / "t"
    log = create_table(path, partition_columns=())
    append_outside = tmp_path / "elsewhere.parquet"
    append_outside.write_bytes(b"not ours")
    txn = log.start_transaction()
    # a tombstone with an absolute path outside the table, long expired
    txn.commit([RemoveFile(f"file://{append_outside}", _now() - 30 * DAY_MS, True, True, {}, 8),
                AddCDCFile("../elsewhere.parquet", {}, 8)], "DELETE")
    result = collect_garbage(log, now_ms=_now() + 30 * DAY_MS)
    assert result.files == [] and append_outside.exists()
    lite = collect_garbage(log, mode="LITE", now_ms=_now() + 30 * DAY_MS)
    assert lite.files == [] and append_outside.exists()


def test_lite_deletes_removed_files_but_not_orphans(table):
    log, path = table["log"], table["path"]
    result = collect_garbage(log, mode="LITE", now_ms=_now() + 8 * DAY_MS)
    assert [Path(p).relative_to(path).as_posix() for p in result.files] == [table["removed"]]
    assert (path / table["orphan"]).exists()
    # a full VACUUM then finds the orphans; a LITE one after it starts from its VACUUM END
    full = collect_garbage(log, now_ms=_now() + 8 * DAY_MS)
    assert table["orphan"] in {Path(p).relative_to(path).as_posix() for p in full.files}
    assert collect_garbage(log, mode="LITE", now_ms=_now() + 8 * DAY_MS).files == []


def test_lite_needs_the_commits_since_the_last_vacuum(tmp_path):
    path = tmp_path / "t"
    log = create_table(path)
    for i in range(3):
        append(log, [{"id": i, "name": "x"}])
    log.write_checkpoint(log.snapshot())
    os.unlink(path / "_delta_log" / f"{0:020d}.json")      # as log cleanup would
    clear_caches()
    with pytest.raises(VersionNotFoundException, match="VACUUM t FULL"):
        collect_garbage(log, mode="LITE")
    with pytest.raises(UnsupportedOperationError, match="mode"):
        collect_garbage(log, mode="SOMETIMES")


def test_not_a_table(tmp_path):
    with pytest.raises(TableNotFoundError):
        collect_garbage(DeltaLog(str(tmp_path / "nothing")))


def test_partition_directories_starting_with_underscore_are_collected(tmp_path):
    from sqlext.log.schema import Field
    path = tmp_path / "t"
    schema = [Field("id", "long"), Field("_p", "string")]
    log = create_table(path, schema=schema, partition_columns=("_p",))
    orphan = write_file(log, [{"id": 1}], schema=schema, partition_columns=("_p",),
                        partition_values={"_p": "x"})
    result = collect_garbage(log, now_ms=_now() + 8 * DAY_MS, log_commits=False)
    assert [Path(p).relative_to(path).as_posix() for p in result.files] == [orphan.path]
    assert json.loads((path / "_delta_log" / f"{0:020d}.json").read_text().splitlines()[0])
