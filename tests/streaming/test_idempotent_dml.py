"""Idempotent DML and writes with delta-spark's session settings
``spark.databricks.delta.write.txnAppId`` / ``txnVersion`` (and ``txnVersion.autoReset.enabled``):
the commit of a MERGE, DELETE, UPDATE or write carries ``txn(appId, version)``; a command run
again with a pair already in the log is a no-op. The README's upsert in ``foreachBatch``: a
batch Spark runs again leaves the table unchanged."""

from __future__ import annotations

import json
import os

import pytest

import sqlext
from sqlext.errors import SqlextError
from sqlext.tables import DeltaTable
from tests.support.table_checks import latest_version

APP, VERSION = "spark.databricks.delta.write.txnAppId", "spark.databricks.delta.write.txnVersion"
RESET = "spark.databricks.delta.write.txnVersion.autoReset.enabled"


@pytest.fixture
def session(drop_in):
    """conftest's ``drop_in``, with the idempotent-write settings unset after the test."""
    yield drop_in
    for key in (APP, VERSION, RESET):
        drop_in.conf.unset(key)


def _txns(table):
    log = os.path.join(table, "_delta_log")
    out = {}
    for name in sorted(n for n in os.listdir(log) if n.endswith(".json")):
        for line in open(os.path.join(log, name)):
            action = json.loads(line)
            if "txn" in action:
                out[int(name[:20])] = (action["txn"]["appId"], action["txn"]["version"])
    return out


def _rows(spark, table):
    return sorted(tuple(r) for r in sqlext.read(spark, table).collect())


def test_merge_delete_update_write_skip_a_committed_pair(session, tmp_path):
    spark, t = session, str(tmp_path / "t")
    sqlext.write(spark.range(3).selectExpr("id", "'a' AS v"), t)
    spark.conf.set(APP, "app1")
    spark.conf.set(VERSION, "5")
    dt = DeltaTable.forPath(spark, t)

    def upsert(v, hi):
        src = spark.range(2, hi).selectExpr("id", f"'{v}' AS v")
        return (dt.alias("t").merge(src.alias("s"), "t.id = s.id").whenMatchedUpdateAll()
                .whenNotMatchedInsertAll().execute().collect())
    first = upsert("b", 5)
    assert first[0]["num_affected_rows"] == 3
    assert _txns(t) == {1: ("app1", 5)}
    again = upsert("c", 8)                              # same pair: nothing happens
    assert again == []                                 # delta-spark: no row
    skipped = [spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 0"),
               spark.sql(f"UPDATE delta.`{t}` SET v = 'z'")]
    assert [(d.columns, d.collect()) for d in skipped] == [(["num_affected_rows"], [])] * 2
    sqlext.write(spark.range(100, 101).selectExpr("id", "'w' AS v"), t, mode="append")
    assert latest_version(t) == 1
    assert _rows(spark, t) == [(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "b")]
    spark.conf.set(VERSION, "6")
    spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 0")
    assert _txns(t) == {1: ("app1", 5), 2: ("app1", 6)}
    spark.conf.set(RESET, "true")                       # the version is unset once read
    spark.conf.set(VERSION, "7")
    spark.sql(f"UPDATE delta.`{t}` SET v = 'y' WHERE id = 1")
    assert spark.conf.get(VERSION, None) is None
    assert _txns(t)[3] == ("app1", 7)
    with pytest.raises(SqlextError, match="DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS"):
        spark.sql(f"UPDATE delta.`{t}` SET v = 'q' WHERE id = 1")
    spark.conf.unset(APP)
    assert _rows(spark, t) == [(1, "y"), (2, "b"), (3, "b"), (4, "b")]


def test_write_options_win_over_session_settings(session, tmp_path):
    spark, t = session, str(tmp_path / "t")
    sqlext.write(spark.range(1).selectExpr("id"), t)
    spark.conf.set(APP, "app1")
    spark.conf.set(VERSION, "5")
    sqlext.write(spark.range(1, 2).selectExpr("id"), t, mode="append",
                 txnAppId="app2", txnVersion=1)
    sqlext.write(spark.range(2, 3).selectExpr("id"), t, mode="append")
    sqlext.write(spark.range(3, 4).selectExpr("id"), t, mode="append",
                 txnAppId="app1", txnVersion=5)
    assert _txns(t) == {1: ("app2", 1), 2: ("app1", 5)}
    assert _rows(spark, t) == [(0,), (1,), (2,)]


def test_upsert_in_foreach_batch_rerun_batch_leaves_table_unchanged(session, tmp_path):
    """The README's idempotent MERGE: foreachBatch upserts with the query id and batch id as
    the session's txnAppId/txnVersion; a batch Spark runs again (its checkpoint commit lost)
    changes nothing."""
    spark, t, src, ck = session, str(tmp_path / "t"), tmp_path / "in", str(tmp_path / "ck")
    sqlext.write(spark.range(0).selectExpr("id", "0L AS n"), t)
    os.makedirs(src)
    for b in range(3):
        with open(src / f"part-{b}.json", "w") as f:
            f.write(json.dumps({"id": b % 2, "n": 1}) + "\n")
    app_id = "upsert-into-t"            # a fixed id: the same across restarts

    def upsert(batch, batch_id):
        batch.sparkSession.conf.set(APP, app_id)
        batch.sparkSession.conf.set(VERSION, str(batch_id))
        (DeltaTable.forPath(batch.sparkSession, t).alias("t")
         .merge(batch.alias("s"), "t.id = s.id")
         .whenMatchedUpdate(set={"n": "t.n + s.n"})
         .whenNotMatchedInsertAll().execute())

    def run():
        q = (spark.readStream.schema("id long, n long").option("maxFilesPerTrigger", 1)
             .json(str(src)).writeStream.foreachBatch(upsert)
             .option("checkpointLocation", ck).trigger(availableNow=True).start())
        q.awaitTermination()
    run()
    assert _rows(spark, t) == [(0, 2), (1, 1)]
    version = latest_version(t)
    for name in ("2", ".2.crc"):        # Spark runs batch 2 again
        os.remove(os.path.join(ck, "commits", name))
    run()
    assert latest_version(t) == version
    assert _rows(spark, t) == [(0, 2), (1, 1)]
    assert sorted(_txns(t).values()) == [(app_id, 0), (app_id, 1), (app_id, 2)]
