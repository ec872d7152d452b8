"""Cases transcribed from delta-spark's streaming suites (spark/src/test/scala/org/apache/spark/
sql/delta/DeltaSourceSuite.scala, DeltaSinkSuite.scala, DeltaCDCStreamSuite.scala), with the
outcomes those tests state, on sqlext's source and sink after ``sqlext.install``. Each test's
docstring names the Scala tests it transcribes (``Suite: "test name"``)."""

from __future__ import annotations

import datetime
import shutil
from zoneinfo import ZoneInfo

import pytest
from pyspark.errors import StreamingQueryException

import sqlext
from sqlext.errors import SqlextError, UnsupportedOperationError

TZ = "spark.sql.session.timeZone"


def _write(spark, table, ids, mode="append", **options):
    sqlext.write(spark.createDataFrame([(i,) for i in ids], "x long"), table, mode=mode,
                 **options)


def _batches(spark, table, ck, **opts):
    """One Trigger.AvailableNow run of a stream of ``table``: each non-empty batch's sorted rows
    (tuples)."""
    seen = []
    reader = spark.readStream.format("delta")
    for key, value in opts.items():
        reader = reader.option(key, value)
    query = (reader.load(table).writeStream
             .foreachBatch(lambda df, i: seen.append(sorted(tuple(r) for r in df.collect())))
             .option("checkpointLocation", ck).trigger(availableNow=True).start())
    query.awaitTermination()
    return [b for b in seen if b]


def _error(spark, table, ck, **opts) -> str:
    with pytest.raises(StreamingQueryException) as info:
        _batches(spark, table, ck, **opts)
    return str(info.value)


def _rows(batches):
    return sorted(r for b in batches for r in b)


@pytest.fixture
def five(drop_in, tmp_path):
    """A table of five commits of one file each (x = 0..4)."""
    table = str(tmp_path / "t")
    for i in range(5):
        _write(drop_in, table, [i])
    return table


def test_rate_limits(drop_in, five, tmp_path):
    """DeltaSourceSuite: "maxFilesPerTrigger"
    DeltaSourceSuite: "maxFilesPerTrigger: change and restart"
    DeltaSourceSuite: "maxBytesPerTrigger: process at least one file"
    DeltaSourceSuite: "maxBytesPerTrigger: max bytes and max files together"
    DeltaSourceSuite: "maxBytesPerTrigger: change and restart"
    """
    spark, ck = drop_in, str(tmp_path / "ck")
    one_each = [[(i,)] for i in range(5)]
    assert _batches(spark, five, ck + "1", maxFilesPerTrigger="1") == one_each
    assert _batches(spark, five, ck + "2", maxBytesPerTrigger="1b") == one_each
    assert _batches(spark, five, ck + "3", maxFilesPerTrigger="1",
                    maxBytesPerTrigger="100gb") == one_each
    assert _batches(spark, five, ck + "4", maxFilesPerTrigger="2",
                    maxBytesPerTrigger="1b") == one_each
    for i in range(5, 9):                           # restarted with another limit
        _write(spark, five, [i])
    assert _batches(spark, five, ck + "1", maxFilesPerTrigger="2") == [[(5,), (6,)], [(7,), (8,)]]
    assert _batches(spark, five, ck + "2", maxBytesPerTrigger="100g") == [
        [(i,) for i in range(5, 9)]]


INVALID = [("maxFilesPerTrigger", "0", ("Invalid", "maxFilesPerTrigger", "positive")),
           ("maxFilesPerTrigger", "string", ("Invalid", "maxFilesPerTrigger", "positive")),
           ("maxBytesPerTrigger", "-1", ("Invalid", "maxBytesPerTrigger", "size")),
           ("excludeRegex", "[abc", ("excludeRegex",)),
           ("startingVersion", "-1", ("Invalid value '-1' for option 'startingVersion'",))]


def test_invalid_options(drop_in, tmp_path):
    """DeltaSourceSuite: "maxFilesPerTrigger: invalid parameter"
    DeltaSourceSuite: "maxBytesPerTrigger: invalid parameter"
    DeltaSourceSuite: "excludeRegex throws good error on bad regex pattern"
    DeltaSourceSuite: "startingVersion" (its -1 case)
    """
    table = str(tmp_path / "t")
    _write(drop_in, table, [1])
    for n, (option, value, words) in enumerate(INVALID):
        text = _error(drop_in, table, str(tmp_path / f"ck{n}"), **{option: value})
        for word in words:
            assert word in text, (option, value)


def test_starting_version(drop_in, tmp_path):
    """DeltaSourceSuite: "startingVersion"
    DeltaSourceSuite: "startingVersion latest"
    DeltaSourceSuite: "startingVersion latest works on defined but empty table"
    DeltaSourceSuite: "startingVersion and startingTimestamp are both set"
    DeltaSourceSuite: "Trigger.AvailableNow with an empty table"
    """
    spark, table, ck = drop_in, str(tmp_path / "t"), str(tmp_path / "ck")
    _write(spark, table, range(10))
    _write(spark, table, range(10, 20))
    assert _rows(_batches(spark, table, ck + "0", startingVersion="0")) == [
        (i,) for i in range(20)]
    assert _rows(_batches(spark, table, ck + "1", startingVersion="1")) == [
        (i,) for i in range(10, 20)]
    assert "Cannot time travel Delta table to version 2" in _error(
        spark, table, ck + "2", startingVersion="2")
    assert "Please either provide 'startingVersion' or 'startingTimestamp'" in _error(
        spark, table, ck + "3", startingVersion="0", startingTimestamp="2020-07-15")
    assert _batches(spark, table, ck + "latest", startingVersion="latest") == []
    _write(spark, table, range(20, 25))
    assert _batches(spark, table, ck + "latest", startingVersion="latest") == [
        [(i,) for i in range(20, 25)]]
    empty = str(tmp_path / "empty")
    spark.sql(f"CREATE TABLE delta.`{empty}` (x long) USING delta")
    assert _batches(spark, empty, ck + "e", maxFilesPerTrigger="1") == []
    assert _batches(spark, empty, ck + "el", startingVersion="latest") == []
    _write(spark, empty, range(5))
    assert _batches(spark, empty, ck + "el", startingVersion="latest") == [
        [(i,) for i in range(5)]]


def test_starting_timestamp_in_session_time_zone(drop_in, tmp_path):
    """DeltaSourceSuite: "startingTimestamp" (its strings are read in the session's time zone,
    America/Los_Angeles in delta-spark's test session; a date is its midnight there)
    """
    spark, table, ck = drop_in, str(tmp_path / "t"), str(tmp_path / "ck")
    _write(spark, table, range(10))
    _write(spark, table, range(10, 20))
    times = {r.version: r.timestamp for r in spark.sql(
        f"DESCRIBE HISTORY delta.`{table}`").collect()}        # session (UTC) wall times
    zone = ZoneInfo("America/Los_Angeles")

    def local(version, seconds=0.0):
        moment = times[version].replace(tzinfo=datetime.timezone.utc).astimezone(zone)
        return (moment + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S.%f")
    spark.conf.set(TZ, "America/Los_Angeles")
    try:
        day = local(0)[:10]
        assert _rows(_batches(spark, table, ck + "d", startingTimestamp=day)) == [
            (i,) for i in range(20)]
        assert _rows(_batches(spark, table, ck + "0", startingTimestamp=local(0))) == [
            (i,) for i in range(20)]
        assert _rows(_batches(spark, table, ck + "1", startingTimestamp=local(1))) == [
            (i,) for i in range(10, 20)]
        text = _error(spark, table, ck + "2", startingTimestamp=local(1, 1.0))
        assert "DELTA_TIMESTAMP_GREATER_THAN_COMMIT" in text
        assert f"Timestamp {local(1, 1.0)[:19]}" in text       # shown in the session's zone
        assert "DELTA_TIMESTAMP_INVALID" in _error(spark, table, ck + "3",
                                                   startingTimestamp="i am not a timestamp")
    finally:
        spark.conf.set(TZ, "UTC")


def _three_phases(spark, tmp_path, **opts):
    """DeltaSourceSuite's testReadOptionHandling: v0 [1, 2, 3]; v1 delete all; v2 append [4, 5];
    v3 overwrite [6, 7, 8]; v4 append [9, 10]. The rows read after each phase, or the error
    text of the last."""
    table, ck = str(tmp_path / "t"), str(tmp_path / "ck")
    out = []
    _write(spark, table, [1, 2, 3])
    out.append(_rows(_batches(spark, table, ck, **opts)))
    spark.sql(f"DELETE FROM delta.`{table}`")
    _write(spark, table, [4, 5])
    out.append(_rows(_batches(spark, table, ck, **opts)))
    _write(spark, table, [6, 7, 8], mode="overwrite")
    _write(spark, table, [9, 10])
    try:
        out.append(_rows(_batches(spark, table, ck, **opts)))
    except StreamingQueryException as exc:
        out.append(str(exc))
    return [[r[0] for r in phase] if isinstance(phase, list) else phase for phase in out]


@pytest.mark.parametrize("opts, last", [
    ({"ignoreDeletes": "true"}, "skipChangeCommits"),
    ({"skipChangeCommits": "true"}, [9, 10]),
    ({"ignoreFileDeletion": "true"}, [6, 7, 8, 9, 10]),
])
def test_read_options(drop_in, tmp_path, opts, last):
    """DeltaSourceSuite: "read options [ignoreDeletes]: ignores delete, rejects change"
    DeltaSourceSuite: "read options [skipChangeCommits]: ignores delete, skips change"
    DeltaSourceSuite: "read options [ignoreFileDeletion] (deprecated): equivalent to
    ignoreChanges" (and so "read options [ignoreChanges]: ignores delete, includes change
    AddFiles")
    """
    phases = _three_phases(drop_in, tmp_path, **opts)
    assert phases[:2] == [[1, 2, 3], [4, 5]]
    if isinstance(last, str):
        assert "DELTA_SOURCE_TABLE_IGNORE_CHANGES" in phases[2] and last in phases[2]
    else:
        assert phases[2] == last


def test_delete_and_change_errors_name_file_version_and_table(drop_in, tmp_path):
    """DeltaSourceSuite: "deltaSourceIgnoreChangesError contains changeInfo, version, tablePath"
    DeltaSourceSuite: "deltaSourceIgnoreDeleteError contains removeFile, version, tablePath"
    """
    spark = drop_in
    texts = {}
    for kind in ("overwrite", "delete"):
        table, ck = str(tmp_path / kind), str(tmp_path / f"{kind}-ck")
        _write(spark, table, [1, 2, 3])
        _batches(spark, table, ck)
        if kind == "overwrite":
            _write(spark, table, [1, 2, 3], mode="overwrite")
        else:
            spark.sql(f"DELETE FROM delta.`{table}`")
        texts[kind] = _error(spark, table, ck)
        assert "for example" in texts[kind] and "version 1" in texts[kind]
        assert table in texts[kind]
    assert ("This is currently not supported. If this is going to happen regularly and you are "
            "okay to skip changes, set the option 'skipChangeCommits' to 'true'.") \
        in texts["overwrite"]
    assert ("This is currently not supported. If you'd like to ignore deletes, set the option "
            "'ignoreDeletes' to 'true'.") in texts["delete"]


def test_table_deleted_and_recreated(drop_in, tmp_path):
    """DeltaSourceSuite: "streaming query should fail when table is deleted and recreated with
    new id"
    """
    spark, table, ck = drop_in, str(tmp_path / "t"), str(tmp_path / "ck")
    _write(spark, table, [1, 2])
    assert _batches(spark, table, ck) == [[(1,), (2,)]]
    shutil.rmtree(table)
    _write(spark, table, [3])
    _write(spark, table, [4])
    text = _error(spark, table, ck)
    assert "DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE" in text
    for word in ("delete", "checkpoint", "restart"):
        assert word in text


def test_schema_changes(drop_in, tmp_path):
    """DeltaSourceSuite: "allow to change schema before starting a streaming query"
    DeltaSourceSuite: "add column: restarting with new DataFrame should recover"
    DeltaSourceSuite: "rename column: should fail with non-additive schema change error"
    DeltaSourceSuite: "drop column: should fail with non-additive schema change error"
    """
    spark = drop_in
    before = str(tmp_path / "before")
    _write(spark, before, range(5))
    spark.sql(f"ALTER TABLE delta.`{before}` ADD COLUMNS (value string)")
    spark.sql(f"INSERT INTO delta.`{before}` VALUES (5, '5'), (6, '6')")
    assert _rows(_batches(spark, before, str(tmp_path / "ck0"), startingVersion="0")) == [
        (i, None) for i in range(5)] + [(5, "5"), (6, "6")]

    added, ck = str(tmp_path / "added"), str(tmp_path / "ck1")
    _write(spark, added, range(3))
    assert _rows(_batches(spark, added, ck)) == [(0,), (1,), (2,)]
    # a running query meets the change: it stops; restarted (a new DataFrame), it reads on
    seen, errors = [], []
    query = (spark.readStream.format("delta").load(added).writeStream
             .foreachBatch(lambda df, i: seen.extend(tuple(r) for r in df.collect()))
             .option("checkpointLocation", ck).start())
    try:
        spark.sql(f"ALTER TABLE delta.`{added}` ADD COLUMNS (newcol string)")
        spark.sql(f"INSERT INTO delta.`{added}` VALUES (10, 'a')")
        try:
            query.processAllAvailable()
        except StreamingQueryException as exc:
            errors.append(str(exc))
    finally:
        query.stop()
    assert errors and "Detected schema change in version 1" in errors[0]
    assert "DELTA_SCHEMA_CHANGED_WITH_VERSION" in errors[0] and seen == []
    assert _batches(spark, added, ck) == [[(10, "a")]]

    for change in ("RENAME COLUMN value TO renamed_value", "DROP COLUMN value"):
        table, ck = str(tmp_path / change[:6]), str(tmp_path / (change[:6] + "-ck"))
        spark.sql(f"CREATE TABLE delta.`{table}` (id string, value string) USING delta "
                  "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
        spark.sql(f"INSERT INTO delta.`{table}` VALUES ('0', 'val0')")
        assert _batches(spark, table, ck) == [[("0", "val0")]]
        spark.sql(f"ALTER TABLE delta.`{table}` {change}")
        row = "('1', null)" if "RENAME" in change else "('1')"
        spark.sql(f"INSERT INTO delta.`{table}` VALUES {row}")
        for _ in range(2):                          # on every restart
            text = _error(spark, table, ck)
            assert ("Streaming read is not supported on tables with read-incompatible schema "
                    "changes") in text
        assert _rows(_batches(spark, table, ck + "new")) == _rows(
            [[tuple(r) for r in spark.read.format("delta").load(table).collect()]])


def test_sink_modes(drop_in, tmp_path):
    """DeltaSinkSuite: "append mode"
    DeltaSinkSuite: "complete mode"
    DeltaSinkSuite: "update mode: not supported"
    DeltaSinkSuite: "history includes user-defined metadata for DataFrame.writeStream API"
    """
    spark, source = drop_in, str(tmp_path / "src")
    _write(spark, source, [1, 2, 3])

    def run(out, ck, mode, frame=None, **opts):
        writer = (frame if frame is not None else spark.readStream.format("delta").load(source)) \
            .writeStream.format("delta").outputMode(mode).option("checkpointLocation", ck)
        for key, value in opts.items():
            writer = writer.option(key, value)
        query = writer.trigger(availableNow=True).start(out)
        query.awaitTermination()
    appended, complete = str(tmp_path / "appended"), str(tmp_path / "complete")
    counts = spark.readStream.format("delta").load(source).groupBy().count()
    run(appended, str(tmp_path / "ck-a"), "append", userMetadata="testMeta!")
    run(complete, str(tmp_path / "ck-c"), "complete", counts)
    _write(spark, source, [4, 5])
    run(appended, str(tmp_path / "ck-a"), "append", userMetadata="testMeta!")
    run(complete, str(tmp_path / "ck-c"), "complete", counts)
    assert sorted(r.x for r in spark.read.format("delta").load(appended).collect()) == [
        1, 2, 3, 4, 5]
    assert [tuple(r) for r in spark.read.format("delta").load(complete).collect()] == [(5,)]
    history = spark.sql(f"DESCRIBE HISTORY delta.`{appended}`").collect()
    assert {r.userMetadata for r in history} == {"testMeta!"}
    with pytest.raises(UnsupportedOperationError, match="does not support Update output mode"):
        run(str(tmp_path / "u"), str(tmp_path / "ck-u"), "update", counts)


def test_sink_then_batch_mismatches(drop_in, tmp_path):
    """DeltaSinkSuite: "throw exception when users are trying to write in batch with different
    partitioning"
    DeltaSinkSuite: "incompatible schema merging throws errors - first streaming then batch"
    """
    spark, source, out = drop_in, str(tmp_path / "src"), str(tmp_path / "out")
    sqlext.write(spark.range(1, 4).selectExpr("CAST(id AS int) AS id", "CAST(id * 1000 AS int) "
                                              "AS value"), source)
    query = (spark.readStream.format("delta").load(source).writeStream.format("delta")
             .partitionBy("id").option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(availableNow=True).start(out))
    query.awaitTermination()
    before = sorted(tuple(r) for r in spark.read.format("delta").load(out).collect())
    assert before == [(1, 1000), (2, 2000), (3, 3000)]
    frame = spark.range(100).selectExpr("CAST(id AS int) AS id", "id % 4 AS by4",
                                        "CAST(id AS int) * 1000 AS value")
    with pytest.raises(SqlextError, match="Partition columns do not match"):
        frame.write.format("delta").partitionBy("id", "by4").mode("append").save(out)
    with pytest.raises(SqlextError, match="column id has type int but the data has bigint") \
            as info:
        (spark.range(100).selectExpr("id", "CAST(id * 3 AS string) AS value").write
         .partitionBy("id").format("delta").mode("append").save(out))
    assert info.value.error_class == "DELTA_FAILED_TO_MERGE_FIELDS"
    assert sorted(tuple(r) for r in spark.read.format("delta").load(out).collect()) == before


def test_change_feed_stream_cases(drop_in, tmp_path):
    """DeltaCDCStreamSuite: "startingVersion = latest"
    DeltaCDCStreamSuite: "user provided startingVersion"
    DeltaCDCStreamSuite: "user provided startingTimestamp" (an update in the stream)
    DeltaCDCStreamSuite: "starting[Version/Timestamp] > latest version"
    """
    spark, table, ck = drop_in, str(tmp_path / "t"), str(tmp_path / "ck")
    sqlext.write(spark.createDataFrame([(i,) for i in (1, 2, 3)], "id long"), table,
                 configuration={"delta.enableChangeDataFeed": "true"})

    def changes(name, **opts):
        return [(r[0], r[1], r[2]) for b in _batches(spark, table, ck + name,
                                                     readChangeFeed="true", **opts) for r in b]
    assert "Cannot time travel Delta table to version 1. Available versions: [0, 0]" in _error(
        spark, table, ck + "v", readChangeFeed="true", startingVersion="1")
    assert "DELTA_TIMESTAMP_GREATER_THAN_COMMIT" in _error(
        spark, table, ck + "t", readChangeFeed="true", startingTimestamp="2999-01-01")
    assert changes("latest", startingVersion="latest") == []
    sqlext.write(spark.createDataFrame([(4,), (5,)], "id long"), table)
    assert sorted(changes("latest", startingVersion="latest")) == [
        (4, "insert", 1), (5, "insert", 1)]
    assert sorted(changes("from1", startingVersion="1")) == [(4, "insert", 1), (5, "insert", 1)]
    spark.sql(f"DELETE FROM delta.`{table}` WHERE id = 3")
    spark.sql(f"UPDATE delta.`{table}` SET id = 40 WHERE id = 4")
    assert sorted(changes("from1", startingVersion="1")) == [
        (3, "delete", 2), (4, "update_preimage", 3), (40, "update_postimage", 3)]
