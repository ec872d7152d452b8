"""Issue 12's reproduction, with the public API: a MERGE whose source is a slow Python UDF runs
while another engine (delta-rs) appends three versions, the commit files age two days, and
delta-rs checkpoints and cleans the log up. Before the fix, the MERGE's put-if-absent of
``v+1.json`` succeeded (log cleanup had deleted it) and returned ``num_updated_rows=2`` for a
commit below the new checkpoint that no reader ever saw. It must raise the typed concurrency
error instead, and every reader must see the same table."""

from __future__ import annotations

import os
import threading
import time

from deltalake import DeltaTable as RsDeltaTable
from deltalake import write_deltalake
from pyspark.sql import functions as F
from pyspark.sql import types as T

import sqlext
from sqlext import DeltaTable
from sqlext.errors import ConcurrentLogCleanupException, ConcurrentModificationException
from tests.support.dml_cases import SPARK_SCHEMA, rows_table
from tests.support.table_checks import assert_readers_agree
from tests.support.kernel_tables import age_commits

ROWS = [(i, 0, "base", i) for i in range(4)]
RS_ROWS = [[(10 + i, 1, "delta-rs", 0)] for i in range(3)]


def _slow_source(spark, started: str, go: str):
    """Two source rows whose ``s`` comes from a Python UDF that signals ``started`` and then
    waits (up to two minutes) until ``go`` exists, so the MERGE runs as long as the test needs."""
    def slow(value):
        open(started, "a").close()
        deadline = time.time() + 120
        while not os.path.exists(go) and time.time() < deadline:
            time.sleep(0.05)
        return value

    udf = F.udf(slow, T.StringType())
    return (spark.createDataFrame([(1, 0, "x", 1), (2, 0, "y", 2)], SPARK_SCHEMA)
            .withColumn("s", udf(F.col("s"))))


def test_merge_racing_log_cleanup_raises_and_readers_agree(spark, table_path, tmp_path):
    sqlext.write(spark.createDataFrame(ROWS, SPARK_SCHEMA).coalesce(1), str(table_path),
                 configuration={"delta.logRetentionDuration": "interval 1 day"})   # version 0
    started, go = str(tmp_path / "started"), str(tmp_path / "go")
    source = _slow_source(spark, started, go)
    outcome: dict = {}

    def run_merge():
        try:
            outcome["result"] = (DeltaTable.forPath(spark, str(table_path)).alias("t")
                                 .merge(source.alias("s"), "t.id = s.id")
                                 .whenMatchedUpdate(set={"s": "s.s"}).execute().collect())
        except Exception as exc:  # noqa: BLE001 - checked below
            outcome["error"] = exc

    thread = threading.Thread(target=run_merge)
    thread.start()
    try:
        deadline = time.time() + 120
        while not os.path.exists(started) and time.time() < deadline:
            time.sleep(0.05)
        assert os.path.exists(started), "the MERGE's source never ran"
        for chunk in RS_ROWS:                                    # versions 1..3
            write_deltalake(str(table_path), rows_table(chunk), mode="append")
        age_commits(table_path, days_ago=2)
        rs = RsDeltaTable(str(table_path))
        rs.create_checkpoint()
        rs.cleanup_metadata()
        assert sorted(os.listdir(table_path / "_delta_log"))[0] == f"{3:020d}.checkpoint.parquet"
    finally:
        open(go, "a").close()
        thread.join(300)
    assert not thread.is_alive()
    assert "result" not in outcome, f"the MERGE returned {outcome.get('result')} for a lost commit"
    err = outcome["error"]
    assert isinstance(err, ConcurrentLogCleanupException), repr(err)
    assert isinstance(err, ConcurrentModificationException)
    assert str(table_path) in str(err) and "read version 0" in str(err)
    # nothing of the MERGE was committed: the log ends at delta-rs' version 3, and sqlext,
    # delta-rs and DuckDB read the same rows
    log_dir = table_path / "_delta_log"
    assert sorted(n for n in os.listdir(log_dir) if n.endswith(".json")) == [f"{3:020d}.json"]
    assert not [n for n in os.listdir(log_dir) if n.endswith(".tmp")]
    expected = rows_table(ROWS + [r for chunk in RS_ROWS for r in chunk])
    assert_readers_agree(spark, table_path, expected)
    assert RsDeltaTable(str(table_path)).version() == 3
    assert [h["operation"] for h in RsDeltaTable(str(table_path)).history()] == ["WRITE"]
    # retried, the MERGE commits at version 4 and everyone sees it
    out = (DeltaTable.forPath(spark, str(table_path)).alias("t")
           .merge(spark.createDataFrame([(1, 0, "x", 1)], SPARK_SCHEMA).alias("s"), "t.id = s.id")
           .whenMatchedUpdate(set={"s": "s.s"}).execute().collect())
    assert out[0]["num_updated_rows"] == 1
    assert_readers_agree(spark, table_path, rows_table(
        [(1, 0, "x", 1) if r[0] == 1 else r for r in ROWS] +
        [r for chunk in RS_ROWS for r in chunk]))

