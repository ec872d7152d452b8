"""``spark.readStream.format("delta")`` after ``sqlext.install``: the snapshot at the starting
version first, then each later commit's added files in order (delta-spark's DeltaSource
offsets); restart from Spark's checkpoint continues without duplicates; ``maxFilesPerTrigger``
bounds a batch; a commit removing data stops the stream with delta-spark's error unless
``ignoreDeletes``/``skipChangeCommits``/``ignoreChanges`` say otherwise."""

from __future__ import annotations

import pytest
from pyspark.errors import StreamingQueryException

import sqlext
from sqlext.engine.streaming.source import SOURCE_NAME
from tests.support.streaming_lines import ADMISSION_CONTROL, ONE_FILE_A_BATCH, admission_refused

SCHEMA = "id long, p string"



def _append(spark, table, ids, p="a", **options):
    sqlext.write(spark.createDataFrame([(i, p) for i in ids], SCHEMA), table, **options)


def _batches(spark, table, ck, reader_options=None, available_now=True):
    """Run the stream once (Trigger.AvailableNow) collecting each batch's sorted ids."""
    seen = []
    reader = spark.readStream.format("delta")
    for key, value in (reader_options or {}).items():
        reader = reader.option(key, value)
    query = (reader.load(table).writeStream
             .foreachBatch(lambda df, i: seen.append(sorted(r.id for r in df.collect())))
             .option("checkpointLocation", ck).trigger(availableNow=available_now).start())
    query.awaitTermination()
    return [b for b in seen if b]


def test_snapshot_then_commits_in_order_and_restart_continues(drop_in, tmp_path):
    spark, table, ck = drop_in, str(tmp_path / "t"), str(tmp_path / "ck")
    _append(spark, table, [1, 2])
    _append(spark, table, [3])
    assert _batches(spark, table, ck) == [[1, 2, 3]]          # the snapshot at version 1
    _append(spark, table, [4])
    _append(spark, table, [5, 6])
    assert _batches(spark, table, ck) == [[4, 5, 6]]          # only what came after
    assert _batches(spark, table, ck) == []                   # nothing new: nothing read
    # plan of the stream: sqlext's source, not Spark's Delta
    frame = spark.readStream.format("delta").load(table)
    assert frame.isStreaming
    assert SOURCE_NAME in frame._jdf.queryExecution().logical().toString()


def test_max_files_per_trigger_bounds_each_batch(drop_in, tmp_path):
    spark, table, ck = drop_in, str(tmp_path / "t"), str(tmp_path / "ck")
    for i in range(5):
        _append(spark, table, [i])
    if not ADMISSION_CONTROL:       # pyspark 4.0/4.1: refused before the query starts
        with admission_refused("maxFilesPerTrigger"):
            _batches(spark, table, ck, {"maxFilesPerTrigger": 2})
        return
    batches = _batches(spark, table, ck, {"maxFilesPerTrigger": 2})
    assert batches == [[0, 1], [2, 3], [4]]
    for i in range(5, 8):
        _append(spark, table, [i])
    assert _batches(spark, table, ck, {"maxFilesPerTrigger": 2}) == [[5, 6], [7]]


def test_starting_version_and_latest(drop_in, tmp_path):
    spark, table = drop_in, str(tmp_path / "t")
    for i in range(3):
        _append(spark, table, [i])
    assert _batches(spark, table, str(tmp_path / "c1"), {"startingVersion": 1}) == [[1, 2]]
    assert _batches(spark, table, str(tmp_path / "c2"), {"startingVersion": "latest"}) == []
    _append(spark, table, [3])
    assert _batches(spark, table, str(tmp_path / "c2"), {"startingVersion": "latest"}) == [[3]]


def test_stream_to_delta_sink_every_row_once(drop_in, tmp_path):
    spark, table, out = drop_in, str(tmp_path / "t"), str(tmp_path / "out")
    _append(spark, table, [1, 2], p="a", partitionBy=["p"])
    _append(spark, table, [3], p="b")

    def run():
        q = (spark.readStream.format("delta").options(**ONE_FILE_A_BATCH).load(table)
             .writeStream.format("delta").option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(availableNow=True).start(out))
        q.awaitTermination()
    run()
    _append(spark, table, [4], p="c")
    run()
    rows = sorted(tuple(r) for r in spark.read.format("delta").load(out).collect())
    assert rows == [(1, "a"), (2, "a"), (3, "b"), (4, "c")]


def test_delete_stops_the_stream_with_delta_spark_error(drop_in, tmp_path):
    spark, table, ck = drop_in, str(tmp_path / "t"), str(tmp_path / "ck")
    _append(spark, table, [1, 2], p="a", partitionBy=["p"])
    _append(spark, table, [3], p="b")
    assert _batches(spark, table, ck) == [[1, 2, 3]]
    spark.sql(f"DELETE FROM delta.`{table}` WHERE p = 'b'")          # whole file removed
    _append(spark, table, [4], p="c")
    with pytest.raises(StreamingQueryException, match=r"DELTA_SOURCE_IGNORE_DELETE[\s\S]*"
                       r"Detected deleted data \(for example .*\) from streaming source at "
                       r"version 2\. .*set the option 'ignoreDeletes' to 'true'"):
        _batches(spark, table, ck)
    # ignoreDeletes: the delete-only commit is skipped, the stream goes on
    assert _batches(spark, table, ck, {"ignoreDeletes": "true"}) == [[4]]


def test_update_stops_unless_skip_change_commits(drop_in, tmp_path):
    spark, table, ck = drop_in, str(tmp_path / "t"), str(tmp_path / "ck")
    _append(spark, table, [1, 2])
    assert _batches(spark, table, ck) == [[1, 2]]
    spark.sql(f"UPDATE delta.`{table}` SET p = 'z' WHERE id = 1")
    _append(spark, table, [3])
    for options in ({}, {"ignoreDeletes": "true"}):
        with pytest.raises(StreamingQueryException,
                           match=r"DELTA_SOURCE_TABLE_IGNORE_CHANGES[\s\S]*Detected a data update"
                                 r" \(for example .*\) in the source table at version 1\."):
            _batches(spark, table, ck, options)
    assert _batches(spark, table, ck, {"skipChangeCommits": "true"}) == [[3]]


def test_ignore_changes_reads_rewritten_files_again(drop_in, tmp_path):
    spark, table, ck = drop_in, str(tmp_path / "t"), str(tmp_path / "ck")
    spark.conf.set("spark.databricks.delta.properties.defaults.enableDeletionVectors", "false")
    try:
        _append(spark, table, [1, 2])
    finally:
        spark.conf.unset("spark.databricks.delta.properties.defaults.enableDeletionVectors")
    assert _batches(spark, table, ck) == [[1, 2]]
    spark.sql(f"UPDATE delta.`{table}` SET p = 'z' WHERE id = 1")
    batches = _batches(spark, table, ck, {"ignoreChanges": "true"})
    assert batches and 1 in batches[0]


def test_read_stream_table_by_name(drop_in, tmp_path):
    spark = drop_in
    spark.sql("CREATE TABLE stream_src (id long, p string) USING delta")
    try:
        spark.sql("INSERT INTO stream_src VALUES (1, 'a'), (2, 'b')")
        seen = []
        q = (spark.readStream.table("stream_src").writeStream
             .foreachBatch(lambda df, i: seen.extend(r.id for r in df.collect()))
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True)
             .start())
        q.awaitTermination()
        assert sorted(seen) == [1, 2]
    finally:
        spark.sql("DROP TABLE stream_src")


def test_available_now_reads_up_to_the_version_current_at_start(drop_in, tmp_path):
    spark, table, ck = drop_in, str(tmp_path / "t"), str(tmp_path / "ck")
    for i in range(3):
        _append(spark, table, [i])
    seen = []

    def batch(df, batch_id):
        seen.append(sorted(r.id for r in df.collect()))
        if batch_id == 0:       # committed while the query runs: for the next run
            _append(spark, table, [100])
    query = (spark.readStream.format("delta").option("startingVersion", 0)
             .options(**ONE_FILE_A_BATCH).load(table).writeStream.foreachBatch(batch)
             .option("checkpointLocation", ck).trigger(availableNow=True).start())
    query.awaitTermination()
    assert seen == ([[0], [1], [2]] if ADMISSION_CONTROL else [[0, 1, 2]])
    assert _batches(spark, table, ck) == [[100]]


def test_process_all_available_on_a_running_query(drop_in, tmp_path):
    spark, table, out = drop_in, str(tmp_path / "t"), str(tmp_path / "out")
    _append(spark, table, [1, 2])
    query = (spark.readStream.format("delta").load(table).writeStream.format("delta")
             .option("checkpointLocation", str(tmp_path / "ck")).start(out))
    try:
        query.processAllAvailable()
        _append(spark, table, [3])
        query.processAllAvailable()
        _append(spark, table, [4])
        query.processAllAvailable()
    finally:
        query.stop()
    assert sorted(r.id for r in spark.read.format("delta").load(out).collect()) == [1, 2, 3, 4]
