"""The change feed as a stream (``readStream.format("delta").option("readChangeFeed", "true")``)
against delta-spark 4.4 (issue 28): on one table sqlext wrote (an append, a DELETE, an UPDATE and a
MERGE after its first version), both engines stream the same rows with ``_change_type``,
``_commit_version`` and ``_commit_timestamp``: from ``startingVersion`` each version's changes,
without a start the snapshot as ``insert`` rows at the latest version."""

from __future__ import annotations


import sqlext
from sqlext.tables import DeltaTable
from tests.support.deltaspark import run_on_both

RUN = r'''
def run(spark, table, ck, opts):
    seen = []
    reader = spark.readStream.format("delta").option("readChangeFeed", "true")
    for k, v in opts.items():
        reader = reader.option(k, v)
    q = (reader.load(table).writeStream
         .foreachBatch(lambda df, i: seen.extend(
             (r.id, r.v, r._change_type, r._commit_version, str(r._commit_timestamp))
             for r in df.collect()))
         .option("checkpointLocation", ck).trigger(availableNow=True).start())
    q.awaitTermination()
    return sorted(seen)
'''
CASES = {"from0": {"startingVersion": "0"}, "from2": {"startingVersion": "2"},
         "snapshot": {}}



def test_change_feed_stream_as_delta_spark(drop_in, delta_spark, tmp_path):
    spark, table = drop_in, str(tmp_path / "t")
    sqlext.write(spark.range(4).selectExpr("id", "'a' AS v"), table,
                 configuration={"delta.enableChangeDataFeed": "true"})
    sqlext.write(spark.range(4, 6).selectExpr("id", "'b' AS v"), table)
    spark.sql(f"DELETE FROM delta.`{table}` WHERE id = 0")
    spark.sql(f"UPDATE delta.`{table}` SET v = 'u' WHERE id = 1")
    (DeltaTable.forPath(spark, table).alias("t")
     .merge(spark.range(5, 8).selectExpr("id", "'m' AS v").alias("s"), "t.id = s.id")
     .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
    theirs, ours = run_on_both(spark, delta_spark, RUN, table, tmp_path / "ck", CASES)
    kinds = {r[2] for r in theirs["from0"]}
    assert kinds == {"insert", "delete", "update_preimage", "update_postimage"}
    assert {r[2] for r in theirs["snapshot"]} == {"insert"}
    for name in CASES:
        assert [list(r) for r in ours[name]] == [list(r) for r in theirs[name]], name
