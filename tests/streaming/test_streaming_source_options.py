"""The Delta streaming source's startingTimestamp, maxBytesPerTrigger and excludeRegex on sqlext
alone (tests/deltaspark/test_deltaspark_streaming_options.py compares them with delta-spark)."""

from __future__ import annotations

import datetime
import os
import time

import pytest
from pyspark.errors import StreamingQueryException

import sqlext
from tests.support.streaming_lines import ADMISSION_CONTROL, admission_refused



@pytest.fixture
def table(drop_in, tmp_path):
    path = str(tmp_path / "t")
    for v in range(3):
        sqlext.write(drop_in.range(v * 10, v * 10 + 3).repartition(3), path)
        time.sleep(1.1)
    return path


def _batches(spark, table, ck, **opts):
    seen = []
    reader = spark.readStream.format("delta")
    for k, v in opts.items():
        reader = reader.option(k, v)
    q = (reader.load(table).writeStream
         .foreachBatch(lambda df, i: seen.append(sorted(r.id for r in df.collect())))
         .option("checkpointLocation", ck).trigger(availableNow=True).start())
    q.awaitTermination()
    return seen


def test_options(drop_in, table, tmp_path):
    spark, ck = drop_in, str(tmp_path / "ck")
    ts = {r.version: r.timestamp for r in spark.sql(f"DESCRIBE HISTORY delta.`{table}`").collect()}
    text = ts[1].strftime("%Y-%m-%d %H:%M:%S.%f")
    assert _batches(spark, table, ck + "1", startingTimestamp=text) == [[10, 11, 12, 20, 21, 22]]
    later = (ts[1] + datetime.timedelta(milliseconds=1)).strftime("%Y-%m-%d %H:%M:%S.%f")
    assert _batches(spark, table, ck + "2", startingTimestamp=later) == [[20, 21, 22]]
    if ADMISSION_CONTROL:
        # 3 files of ~480 bytes a commit: 1k takes three (the one crossing the limit included)
        assert _batches(spark, table, ck + "3", maxBytesPerTrigger="1k") == [
            [0, 1, 2], [10, 11, 12], [20, 21, 22]]
        assert len(_batches(spark, table, ck + "4", maxBytesPerTrigger="1")) == 9
        assert [len(b) for b in _batches(spark, table, ck + "5", maxBytesPerTrigger="1g",
                                         maxFilesPerTrigger=2)] == [2, 2, 2, 2, 1]
    else:                           # pyspark 4.0/4.1: refused before the query starts
        with admission_refused("maxBytesPerTrigger"):
            _batches(spark, table, ck + "3", maxBytesPerTrigger="1k")
    first = sorted(f for f in os.listdir(table) if f.endswith(".parquet"))[0]
    rows = _batches(spark, table, ck + "6", excludeRegex=first[:14])
    assert len(rows) == 1 and len(rows[0]) == 8


@pytest.mark.parametrize("opts, condition", [
    ({"startingTimestamp": "2999-01-01"}, "DELTA_TIMESTAMP_GREATER_THAN_COMMIT"),
    ({"startingTimestamp": "2000-01-01", "startingVersion": "0"},
     "DELTA_STARTING_VERSION_AND_TIMESTAMP_BOTH_SET"),
    ({"startingTimestamp": "yesterday"}, "DELTA_TIMESTAMP_INVALID"),
    ({"maxBytesPerTrigger": "lots"}, "DELTA_ILLEGAL_OPTION"),
    ({"excludeRegex": "("}, "DELTA_REGEX_OPT_SYNTAX_ERROR"),
])
def test_refusals(drop_in, tmp_path, opts, condition):
    table = str(tmp_path / "t")
    sqlext.write(drop_in.range(3), table)
    refusal = pytest.raises(StreamingQueryException, match=condition)
    if "maxBytesPerTrigger" in opts and not ADMISSION_CONTROL:
        refusal = admission_refused("maxBytesPerTrigger")
    with refusal:
        _batches(drop_in, table, str(tmp_path / "ck"), **opts)


def test_change_feed_stream(drop_in, tmp_path):
    """readChangeFeed: the snapshot as inserts at its version, then each commit's changes (a
    DELETE does not stop the stream); the restarted query goes on from its checkpoint."""
    spark, table, ck = drop_in, str(tmp_path / "t"), str(tmp_path / "ck")
    sqlext.write(spark.range(3).selectExpr("id", "'a' AS v"), table,
                 configuration={"delta.enableChangeDataFeed": "true"})

    def stream():
        seen = []
        q = (spark.readStream.format("delta").option("readChangeFeed", "true").load(table)
             .writeStream.foreachBatch(lambda df, i: seen.extend(
                 (r.id, r.v, r._change_type, r._commit_version) for r in df.collect()))
             .option("checkpointLocation", ck).trigger(availableNow=True).start())
        q.awaitTermination()
        return sorted(seen)
    assert stream() == [(0, "a", "insert", 0), (1, "a", "insert", 0), (2, "a", "insert", 0)]
    spark.sql(f"DELETE FROM delta.`{table}` WHERE id = 0")
    spark.sql(f"UPDATE delta.`{table}` SET v = 'u' WHERE id = 1")
    assert stream() == [(0, "a", "delete", 1), (1, "a", "update_preimage", 2),
                        (1, "u", "update_postimage", 2)]
