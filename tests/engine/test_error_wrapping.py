"""Issue 12, case 2: errors that were not SqlextError. A write and a kernel commit on a full
disk (a real one: a small tmpfs), a read racing VACUUM, and a lazily collected old version."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest
from pyspark.sql import functions as F

import sqlext
from sqlext.engine.io import scan as scan_module
from sqlext.errors import CommitFailedError, DeltaFileNotFoundError, SqlextError
from sqlext.log.table import DeltaLog
from sqlext.log.vacuum import collect_garbage


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MiB tmpfs: a file system that really runs out of space (needs root, as the test
    machines and CI run)."""
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(directory: Path) -> Path:
    """Fill the file system of ``directory`` to the last byte; returns the filler file."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (65536, 4096, 1):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)
    return filler


def _versions(path: Path) -> list[int]:
    return sorted(int(p.name[:20]) for p in (path / "_delta_log").glob("*.json"))


def test_write_on_a_full_disk_is_a_sqlext_error_and_changes_nothing(spark, small_disk):
    path = small_disk / "t"
    sqlext.write(spark.createDataFrame([(1, "a")], "id long, v string"), str(path))
    big = spark.range(0, 300_000, numPartitions=2).select(
        "id", F.sha2(F.col("id").cast("string"), 256).alias("v"))
    with pytest.raises(SqlextError) as err:
        sqlext.write(big, str(path))
    message = str(err.value)
    assert f"table {path}" in message and "version 0" in message
    assert "No space left on device" in message and "Nothing was committed" in message
    assert _versions(path) == [0]
    assert [tuple(r) for r in sqlext.read(spark, str(path)).collect()] == [(1, "a")]


def test_kernel_commit_on_a_full_disk_is_a_sqlext_error(spark, small_disk):
    path = small_disk / "t"
    sqlext.write(spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string"), str(path))
    filler = _fill(small_disk)
    table = sqlext.DeltaTable.forPath(spark, str(path))
    with pytest.raises(CommitFailedError) as err:
        table.delete()                  # removes only: no Spark job, just the kernel's commit
    message = str(err.value)
    assert f"table {path}" in message and "commit 1" in message and "Free space" in message
    assert isinstance(err.value.__cause__, OSError) and err.value.__cause__.errno == errno.ENOSPC
    assert _versions(path) == [0]
    os.remove(filler)
    assert sqlext.read(spark, str(path)).count() == 2
    table.delete()
    assert _versions(path) == [0, 1] and sqlext.read(spark, str(path)).count() == 0


@pytest.fixture
def overwritten_table(spark, table_path):
    """Version 0's file is removed by version 1 (an overwrite)."""
    sqlext.write(spark.createDataFrame([(1, "a")], "id long, v string"), str(table_path))
    sqlext.write(spark.createDataFrame([(2, "b")], "id long, v string"), str(table_path),
                 mode="overwrite")
    return table_path


def _vacuum_now(path: Path) -> None:
    result = collect_garbage(DeltaLog(str(path)), 0, check_retention=False)
    assert result.files, "VACUUM deleted nothing"


def test_read_racing_vacuum_is_a_delta_file_not_found_error(spark, overwritten_table,
                                                           monkeypatch):
    """VACUUM runs between sqlext's check of the files and Spark's listing of them."""
    real = scan_module.check_files_exist

    def check_then_vacuum(log, snapshot, files):
        real(log, snapshot, files)
        _vacuum_now(overwritten_table)

    monkeypatch.setattr(scan_module, "check_files_exist", check_then_vacuum)
    with pytest.raises(DeltaFileNotFoundError) as err:
        sqlext.read(spark, str(overwritten_table), versionAsOf=0)
    message = str(err.value)
    assert f"table {overwritten_table}, version 0" in message and "VACUUM" in message
    assert "Read again" in message


def test_old_version_collected_after_vacuum(spark, overwritten_table):
    """A DataFrame is lazy: one built before VACUUM fails in Spark when collected after it
    (README says so); reading the version again gives the clear error."""
    df = sqlext.read(spark, str(overwritten_table), versionAsOf=0)
    _vacuum_now(overwritten_table)
    with pytest.raises(Exception) as lazy:
        df.collect()
    assert "FILE_NOT_EXIST" in str(lazy.value) or "does not exist" in str(lazy.value)
    with pytest.raises(DeltaFileNotFoundError) as fresh:
        sqlext.read(spark, str(overwritten_table), versionAsOf=0)
    assert f"table {overwritten_table}, version 0" in str(fresh.value)
    assert "read a later version" in str(fresh.value)
    assert [tuple(r) for r in sqlext.read(spark, str(overwritten_table)).collect()] == [(2, "b")]
