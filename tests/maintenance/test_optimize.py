"""OPTIMIZE: bin-packing per partition, WHERE on partitions, target size, z-order clustering,
dataChange=false commits that the change feed ignores, and no conflict with concurrent appends."""

from __future__ import annotations

import threading
import time

import pytest

import sqlext
from sqlext import DeltaTable
from sqlext.engine.maintenance.optimize import plan_bins
from sqlext.engine.session import parse_size
from sqlext.errors import AnalysisException, ConcurrentDeleteReadException
from sqlext.log.actions import AddFile
from sqlext.log.pruning import Pruner, parse_predicate
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import clear_caches, write_file
from tests.support.table_checks import actions_of, assert_readers_agree, commit_info
from tests.support.spark import spark_conf
from tests.support import deltalake_cdf


def _small_files(spark, path, writes: int = 4) -> None:
    """``writes`` appends of ids in three partitions (p = id % 3): 3 files per append."""
    for i in range(writes):
        df = spark.range(i * 30, (i + 1) * 30).selectExpr(
            "id", "cast(id % 3 as string) as p", "concat('v', id) as s").repartition(1)
        sqlext.write(df, str(path), partitionBy=["p"])


def _live(path) -> list:
    clear_caches()
    return DeltaLog(str(path)).snapshot().files


def test_compaction_bin_packs_each_partition(spark, table_path):
    _small_files(spark, table_path)
    before = assert_readers_agree(spark, table_path)
    version = DeltaLog(str(table_path)).latest_version()
    result = DeltaTable.forPath(spark, str(table_path)).optimize().executeCompaction().collect()[0]
    files = _live(table_path)
    assert sorted(f.partition_values["p"] for f in files) == ["0", "1", "2"]
    assert_readers_agree(spark, table_path, expected=before)
    v = version + 1
    adds, removes = actions_of(table_path, v, "add"), actions_of(table_path, v, "remove")
    assert len(adds) == 3 and len(removes) == 12
    assert not any(a["dataChange"] for a in adds) and not any(r["dataChange"] for r in removes)
    info = commit_info(table_path, v)
    assert info["operation"] == "OPTIMIZE" and info["isBlindAppend"] is False
    assert info["operationParameters"]["predicate"] == "[]"
    assert info["operationParameters"]["zOrderBy"] == "[]"
    m = info["operationMetrics"]
    assert (m["numAddedFiles"], m["numRemovedFiles"]) == ("3", "12")
    assert m["numRemovedBytes"] == str(sum(r["size"] for r in removes))
    assert m["maxFileSize"] == str(max(a["size"] for a in adds))
    assert (result.metrics.numFilesAdded, result.metrics.numFilesRemoved) == (3, 12)
    assert result.metrics.partitionsOptimized == 3 and result.path == str(table_path)
    # the change feed shows nothing for a compaction
    assert deltalake_cdf(table_path, v, v).num_rows == 0
    assert sqlext.changes(spark, str(table_path), v, v).count() == 0
    # nothing left to compact: no commit
    again = DeltaTable.forPath(spark, str(table_path)).optimize().executeCompaction().collect()[0]
    assert again.metrics.numFilesAdded == 0 and DeltaLog(str(table_path)).latest_version() == v


def test_where_selects_partitions(spark, table_path):
    _small_files(spark, table_path, writes=3)
    before = assert_readers_agree(spark, table_path)
    DeltaTable.forPath(spark, str(table_path)).optimize().where("p = '1' OR p = '2'") \
        .executeCompaction()
    counts = {}
    for f in _live(table_path):
        counts[f.partition_values["p"]] = counts.get(f.partition_values["p"], 0) + 1
    assert counts == {"0": 3, "1": 1, "2": 1}
    assert_readers_agree(spark, table_path, expected=before)
    v = DeltaLog(str(table_path)).latest_version()
    assert "p" in commit_info(table_path, v)["operationParameters"]["predicate"]
    with pytest.raises(AnalysisException, match="partition columns only"):
        DeltaTable.forPath(spark, str(table_path)).optimize().where("id > 3").executeCompaction()
    assert DeltaLog(str(table_path)).latest_version() == v


def test_target_file_size_makes_several_bins(spark, table_path):
    _small_files(spark, table_path, writes=6)
    sizes = sorted(f.size for f in _live(table_path) if f.partition_values["p"] == "0")
    assert len(sizes) == 6
    target = 3 * sizes[-1] + 1                # any three fit in a bin, no four do
    with spark_conf(spark, {"spark.databricks.delta.optimize.maxFileSize": str(target)}):
        DeltaTable.forPath(spark, str(table_path)).optimize().where("p = '0'").executeCompaction()
    part0 = [f for f in _live(table_path) if f.partition_values["p"] == "0"]
    assert len(part0) == 2 and all(f.size < target for f in part0)
    assert_readers_agree(spark, table_path)


def test_plan_bins_follows_delta_spark():
    def f(name, size, part="x"):
        return AddFile(name, {"p": part}, size, 0)
    files = [f("a", 10), f("b", 50), f("c", 30), f("d", 200), f("e", 5, "y"), f("big", 1000)]
    bins = plan_bins(files, ["p"], min_size=100, max_size=60, zorder=False)
    # smallest first, bins of at most 60 bytes; single-file bins and large files are left alone
    assert [[x.path for x in b] for b in bins] == [["a", "c"]]
    z = plan_bins(files, ["p"], min_size=100, max_size=60, zorder=True)
    assert [[x.path for x in b] for b in z] == [["a", "c", "b", "d", "big"], ["e"]]
    assert parse_size("128mb") == 128 * 1024 ** 2 and parse_size("1g") == 1024 ** 3
    assert parse_size(4096) == 4096


def _files_matching(path, predicate: str) -> int:
    clear_caches()
    snap = DeltaLog(str(path)).snapshot()
    return len(Pruner(parse_predicate(predicate), snap.schema, snap.partition_columns)
               .prune(snap.files))


def test_zorder_clusters_rows_for_skipping(spark, table_path):
    df = spark.range(0, 4000).selectExpr("id", "(id * 7919) % 4000 as x", "(id * 104729) % 4000 as y")
    sqlext.write(df.repartition(8), str(table_path))
    before = assert_readers_agree(spark, table_path)
    total = sum(f.size for f in _live(table_path))
    with spark_conf(spark, {"spark.databricks.delta.optimize.maxFileSize": str(total // 8)}):
        row = DeltaTable.forPath(spark, str(table_path)).optimize().executeZOrderBy("x", "y") \
            .collect()[0]
    assert_readers_agree(spark, table_path, expected=before)
    files = _live(table_path)
    assert len(files) >= 6 and row.metrics.zOrderBy == ["x", "y"]
    v = DeltaLog(str(table_path)).latest_version()
    assert commit_info(table_path, v)["operationParameters"]["zOrderBy"] == '["x","y"]'
    # randomly spread rows: any file may hold a small x or a small y; after z-ordering a corner
    # of the (x, y) square is in few files, whichever column the predicate uses
    for predicate in ("x < 500 AND y < 500", "x < 500", "y < 500"):
        assert _files_matching(table_path, predicate) < len(files)
    assert _files_matching(table_path, "x < 500 AND y < 500") <= len(files) // 2


def test_zorder_rejects_partition_and_unknown_columns(spark, table_path):
    _small_files(spark, table_path, writes=1)
    table = DeltaTable.forPath(spark, str(table_path))
    with pytest.raises(AnalysisException, match="partition column"):
        table.optimize().executeZOrderBy("p")
    with pytest.raises(AnalysisException, match="no such column"):
        table.optimize().executeZOrderBy("nope")
    assert DeltaLog(str(table_path)).latest_version() == 0


def test_concurrent_appends_do_not_conflict(spark, table_path):
    _small_files(spark, table_path, writes=3)
    path = str(table_path)
    expected_ids = set(range(90))
    stop = threading.Event()
    appended: list[int] = []
    errors: list[BaseException] = []

    def appender():
        log = DeltaLog(path)
        i = 0
        try:
            while not stop.is_set():
                add = write_file(log, [{"id": 10_000 + i, "s": "late"}], schema=_schema(log),
                                 partition_columns=("p",), partition_values={"p": "1"})
                log.start_transaction().commit([add], "WRITE", {"mode": "Append"})
                appended.append(10_000 + i)
                i += 1
                time.sleep(0.02)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=appender)
    thread.start()
    try:
        DeltaTable.forPath(spark, path).optimize().executeCompaction()
    finally:
        stop.set()
        thread.join()
    assert not errors and appended
    log = DeltaLog(path)
    clear_caches()
    opt = next(r for r in log.history() if r.commit_info.operation == "OPTIMIZE")
    # appends committed between OPTIMIZE's read and its commit: it retried past them
    assert opt.version - 1 > opt.commit_info.values["readVersion"]
    rows = assert_readers_agree(spark, table_path)
    assert set(rows.column("id").to_pylist()) == expected_ids | set(appended)
    assert rows.num_rows == len(expected_ids) + len(appended)


def _schema(log):
    from sqlext.log.schema import parse_schema
    return parse_schema(log.snapshot().metadata.schema_string)


def _writing(staging) -> bool:
    """Whether a write is under way: a directory in sqlext's staging area."""
    try:
        return any(staging.iterdir())
    except FileNotFoundError:
        return False


def test_concurrent_delete_of_a_compacted_file_fails_optimize(spark, table_path):
    _small_files(spark, table_path, writes=2)
    path = str(table_path)
    victim = next(f for f in _live(table_path) if f.partition_values["p"] == "2")
    staging = table_path / "_sqlext_staging"

    def deleter():
        deadline = time.time() + 120
        while time.time() < deadline and not _writing(staging):
            time.sleep(0.005)
        log = DeltaLog(path)
        txn = log.start_transaction()
        txn.read_files([victim])
        txn.commit([victim.remove(int(time.time() * 1000))], "DELETE")

    thread = threading.Thread(target=deleter)
    thread.start()
    try:
        with pytest.raises(ConcurrentDeleteReadException):
            DeltaTable.forPath(spark, path).optimize().executeCompaction()
    finally:
        thread.join()
    clear_caches()
    assert not any(r.commit_info.operation == "OPTIMIZE" for r in DeltaLog(path).history())
    assert_readers_agree(spark, table_path)
