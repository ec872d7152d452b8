"""RESTORE: one commit of dataChange=true adds/removes, delta-spark's metrics, the old schema and
properties back, the change feed showing the difference, and a clear error for vacuumed files."""

from __future__ import annotations

import datetime as dt
import os
import time

import pytest

import sqlext
from sqlext import DeltaTable
from sqlext.errors import (DeltaFileNotFoundError, TimestampOutOfRangeError,
                           UnsupportedOperationError, VersionNotFoundException)
from tests.support.table_checks import actions_of, assert_readers_agree, commit_info
from tests.support.spark import NO_RETENTION_CHECK, spark_conf
from tests.support import assert_same_rows, deltalake_cdf, read_deltalake


@pytest.fixture
def history(spark, table_path):
    """v0: ids 0..9 in two partitions; v1: + ids 10..14 with a new column; v2: partition b
    deleted by overwrite of partition a (replaceWhere)."""
    path = str(table_path)
    base = spark.range(0, 10).selectExpr("id", "if(id % 2 = 0, 'a', 'b') as part")
    sqlext.write(base, path, partitionBy=["part"])
    sqlext.write(spark.range(10, 15).selectExpr("id", "'a' as part", "id * 10 as extra"), path,
                 mergeSchema=True)
    sqlext.write(spark.range(100, 102).selectExpr("id", "'a' as part", "cast(null as long) as extra"),
                 path, mode="overwrite", replaceWhere="part = 'a'")
    return table_path


def test_restore_to_version(spark, history):
    path = history
    v0 = read_deltalake(path, 0)
    latest_files = {a["path"] for a in actions_of(path, 2, "add")} | {
        a["path"] for a in actions_of(path, 0, "add") if a["partitionValues"]["part"] == "b"}
    row = DeltaTable.forPath(spark, str(path)).restoreToVersion(0).collect()[0]
    assert_readers_agree(spark, path, expected=v0)
    assert sqlext.read(spark, str(path)).columns == ["id", "part"]        # the old schema
    adds, removes = actions_of(path, 3, "add"), actions_of(path, 3, "remove")
    v0_files = {a["path"] for a in actions_of(path, 0, "add")}
    assert {a["path"] for a in adds} == {p for p in v0_files if p not in latest_files}
    assert {r["path"] for r in removes} == latest_files - v0_files
    assert all(a["dataChange"] for a in adds) and all(r["dataChange"] for r in removes)
    info = commit_info(path, 3)
    assert info["operation"] == "RESTORE" and info["operationParameters"] == {"version": "0"}
    m = info["operationMetrics"]
    assert m == {"numRestoredFiles": str(len(adds)), "numRemovedFiles": str(len(removes)),
                 "restoredFilesSize": str(sum(a["size"] for a in adds)),
                 "removedFilesSize": str(sum(r["size"] for r in removes)),
                 "numOfFilesAfterRestore": str(len(v0_files)),
                 "tableSizeAfterRestore": str(sum(a["size"] for a in actions_of(path, 0, "add")))}
    assert row.asDict() == {"table_size_after_restore": int(m["tableSizeAfterRestore"]),
                            "num_of_files_after_restore": len(v0_files),
                            "num_removed_files": len(removes), "num_restored_files": len(adds),
                            "removed_files_size": int(m["removedFilesSize"]),
                            "restored_files_size": int(m["restoredFilesSize"])}
    # the change feed of the RESTORE commit: rows of v0 not in v2 inserted, rows of v2 deleted
    changes = deltalake_cdf(path, 3, 3).select(["id", "_change_type"])
    expected = sorted([(i, "insert") for i in range(0, 10, 2)]
                      + [(i, "delete") for i in (100, 101)])
    assert sorted(zip(changes.column("id").to_pylist(),
                      map(str, changes.column("_change_type").to_pylist()))) == expected


def test_restore_to_timestamp(spark, history):
    path = history
    log_dir = path / "_delta_log"
    base = time.time() - 3600
    for v in range(3):                              # commits an hour ago, ten minutes apart
        os.utime(log_dir / f"{v:020d}.json", (base + 600 * v, base + 600 * v))
    when = dt.datetime.fromtimestamp(base + 900, dt.timezone.utc)      # between v1 and v2
    DeltaTable.forPath(spark, str(path)).restoreToTimestamp(
        when.strftime("%Y-%m-%d %H:%M:%S"))
    assert_readers_agree(spark, path, expected=read_deltalake(path, 1))
    info = commit_info(path, 3)
    assert info["operationParameters"] == {"timestamp": when.strftime("%Y-%m-%d %H:%M:%S")}
    with pytest.raises(TimestampOutOfRangeError):
        DeltaTable.forPath(spark, str(path)).restoreToTimestamp("2000-01-01 00:00:00")


def test_restore_needs_an_earlier_existing_version(spark, history):
    table = DeltaTable.forPath(spark, str(history))
    with pytest.raises(UnsupportedOperationError, match="latest version already"):
        table.restoreToVersion(2)
    with pytest.raises(VersionNotFoundException, match="latest version is 2"):
        table.restoreToVersion(7)
    assert sorted(p.name for p in (history / "_delta_log").glob("*.json"))[-1] == f"{2:020d}.json"


def test_restore_of_vacuumed_files_fails_cleanly(spark, history):
    path = history
    table = DeltaTable.forPath(spark, str(path))
    with spark_conf(spark, {**NO_RETENTION_CHECK,
                            "spark.databricks.delta.vacuum.logging.enabled": "false"}):
        table.vacuum(0)
    with pytest.raises(DeltaFileNotFoundError, match="cannot restore to version 0") as err:
        table.restoreToVersion(0)
    assert "ignoreMissingFiles" in str(err.value)
    assert sorted(p.name for p in (path / "_delta_log").glob("*.json"))[-1] == f"{2:020d}.json"
    # allowed to skip them: the files that still exist come back (partition b survived)
    with spark_conf(spark, {"spark.sql.files.ignoreMissingFiles": "true"}):
        table.restoreToVersion(0)
    ids = sorted(r["id"] for r in read_deltalake(path).to_pylist())
    assert ids == [1, 3, 5, 7, 9]
    assert_same_rows(sqlext.read(spark, str(path)), read_deltalake(path))


def test_restore_keeps_the_newer_protocol(spark, table_path):
    path = str(table_path)
    sqlext.write(spark.range(3), path, configuration={"delta.enableChangeDataFeed": "false"})
    sqlext.write(spark.range(3, 5), path, configuration={"delta.enableChangeDataFeed": "true"})
    before = actions_of(table_path, 1, "protocol") or actions_of(table_path, 0, "protocol")
    DeltaTable.forPath(spark, path).restoreToVersion(0)
    assert actions_of(table_path, 2, "protocol") == []               # no downgrade, no change
    md = actions_of(table_path, 2, "metaData")[0]
    assert md["configuration"]["delta.enableChangeDataFeed"] == "false"
    assert before[0]["minWriterVersion"] >= 4
    assert sorted(r["id"] for r in read_deltalake(table_path).to_pylist()) == [0, 1, 2]
