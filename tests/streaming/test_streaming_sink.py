"""``df.writeStream.format("delta")`` after ``sqlext.install``: each micro-batch one commit with
``txn(appId=<query id>, version=<batch id>)``, as delta-spark's DeltaSink; a batch Spark runs
again (its checkpoint commit lost) is skipped, so every row is written once."""

from __future__ import annotations

import json
import os
import uuid

import pytest
from pyspark.sql import functions as F

import sqlext
from sqlext.engine.streaming.sink import write_micro_batch
from sqlext.log.table_ref import TableRef
from sqlext.errors import UnsupportedOperationError
from tests.support.table_checks import latest_version

SCHEMA = "id long, g string"



def _add_input(folder, batch: int, n: int = 4) -> None:
    """One JSON file of ``n`` rows (ids batch*10 ...) in the stream's input folder."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"part-{batch:03d}.json"), "w") as f:
        for j in range(n):
            f.write(json.dumps({"id": batch * 10 + j, "g": f"g{j % 2}"}) + "\n")


def _input(spark, folder):
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(folder))


def _run(writer, *args):
    query = writer.trigger(availableNow=True).start(*args)
    query.awaitTermination()
    return query


def _commits(table):
    """Each commit's actions by kind: {version: {"commitInfo": ..., "txn": [...], ...}}."""
    log = os.path.join(table, "_delta_log")
    out = {}
    for name in sorted(n for n in os.listdir(log) if n.endswith(".json")):
        kinds: dict = {}
        for line in open(os.path.join(log, name)):
            (key, value), = json.loads(line).items()
            kinds.setdefault(key, []).append(value)
        out[int(name[:20])] = kinds
    return out


def _ids(spark, table):
    return sorted(r.id for r in spark.read.format("delta").load(table).collect())


def test_append_batches_commit_with_query_txn_and_restart_continues(drop_in, tmp_path):
    spark, source, table, ck = drop_in, tmp_path / "in", str(tmp_path / "t"), str(tmp_path / "ck")
    for b in range(3):
        _add_input(source, b)
    query = _run(_input(spark, source).writeStream.format("delta")
                 .option("checkpointLocation", ck).option("userMetadata", "from a stream"), table)
    assert _ids(spark, table) == sorted(b * 10 + j for b in range(3) for j in range(4))
    commits = _commits(table)
    assert sorted(commits) == [0, 1, 2]
    for version, kinds in commits.items():
        info = kinds["commitInfo"][0]
        assert info["operation"] == "STREAMING UPDATE"
        assert info["operationParameters"]["outputMode"] == "Append"
        assert info["operationParameters"]["queryId"] == str(query.id)
        assert info["operationParameters"]["epochId"] == str(version)
        assert info["userMetadata"] == "from a stream"
        assert kinds["txn"] == [{"appId": str(query.id), "version": version,
                                 "lastUpdated": kinds["txn"][0]["lastUpdated"]}]
    # restart from the checkpoint: only the new file, same query id, next batch id
    _add_input(source, 3)
    again = _run(_input(spark, source).writeStream.format("delta")
                 .option("checkpointLocation", ck), table)
    assert again.id == query.id
    assert _ids(spark, table) == sorted(b * 10 + j for b in range(4) for j in range(4))
    assert _commits(table)[3]["txn"][0]["version"] == 3


def test_batch_rerun_after_lost_checkpoint_commit_is_skipped(drop_in, tmp_path):
    spark, source, table, ck = drop_in, tmp_path / "in", str(tmp_path / "t"), str(tmp_path / "ck")
    for b in range(2):
        _add_input(source, b)
    _run(_input(spark, source).writeStream.format("delta").option("checkpointLocation", ck),
         table)
    assert latest_version(table) == 1
    # the batch's table commit happened, Spark's record of it did not: Spark runs batch 1 again
    for name in ("1", ".1.crc"):
        os.remove(os.path.join(ck, "commits", name))
    _run(_input(spark, source).writeStream.format("delta").option("checkpointLocation", ck),
         table)
    assert latest_version(table) == 1                 # nothing committed twice
    assert len(_ids(spark, table)) == 8
    assert os.path.exists(os.path.join(ck, "commits", "1"))     # Spark finished the batch


def test_micro_batch_written_twice_commits_once(drop_in, tmp_path):
    spark, table = drop_in, str(tmp_path / "t")
    df = spark.createDataFrame([(1, "a"), (2, "b")], SCHEMA)
    query_id = str(uuid.uuid4())
    ref = TableRef(table)
    assert write_micro_batch(df, 0, ref, "Append", None, {}, query_id=query_id) == 0
    assert write_micro_batch(df, 0, ref, "Append", None, {}, query_id=query_id) == 0
    assert write_micro_batch(df, 1, ref, "Append", None, {}, query_id=query_id) == 1
    assert write_micro_batch(df, 1, ref, "Append", None, {}, query_id=query_id) == 1
    assert _ids(spark, table) == [1, 1, 2, 2]


def test_complete_mode_overwrites_each_batch(drop_in, tmp_path):
    spark, source, table, ck = drop_in, tmp_path / "in", str(tmp_path / "t"), str(tmp_path / "ck")
    for b in range(2):
        _add_input(source, b)

    def counts():
        return (_input(spark, source).groupBy("g").agg(F.count("*").alias("n"))
                .writeStream.format("delta").outputMode("complete")
                .option("checkpointLocation", ck))
    _run(counts(), table)
    rows = sorted(tuple(r) for r in spark.read.format("delta").load(table).collect())
    assert rows == [("g0", 4), ("g1", 4)]
    _add_input(source, 2)
    _run(counts(), table)
    rows = sorted(tuple(r) for r in spark.read.format("delta").load(table).collect())
    assert rows == [("g0", 6), ("g1", 6)]
    last = _commits(table)[latest_version(table)]
    assert last["commitInfo"][0]["operationParameters"]["outputMode"] == "Complete"
    assert last.get("remove")          # the previous batch's rows replaced


def test_to_table_partitioned_and_merge_schema(drop_in, tmp_path):
    spark, source, ck = drop_in, tmp_path / "in", str(tmp_path / "ck")
    name = f"stream_{uuid.uuid4().hex[:8]}"
    _add_input(source, 0)
    query = (_input(spark, source).writeStream.format("delta").partitionBy("g")
             .option("checkpointLocation", ck).trigger(availableNow=True).toTable(name))
    query.awaitTermination()
    assert sorted(r.id for r in spark.table(name).collect()) == [0, 1, 2, 3]
    assert sqlext.DeltaTable.forName(spark, name).detail().first().partitionColumns == ["g"]
    # a new column: refused without mergeSchema, added with it
    wider = str(tmp_path / "wider")
    os.makedirs(wider)
    with open(os.path.join(wider, "a.json"), "w") as f:
        f.write(json.dumps({"id": 100, "g": "g0", "extra": "x"}) + "\n")
    frame = spark.readStream.schema("id long, g string, extra string").json(wider)
    query = (frame.writeStream.format("delta").option("checkpointLocation", str(tmp_path / "c2"))
             .option("mergeSchema", "true").trigger(availableNow=True).toTable(name))
    query.awaitTermination()
    assert spark.table(name).where("id = 100").first().extra == "x"
    spark.sql(f"DROP TABLE {name}")


def test_update_output_mode_is_refused_as_delta_spark(drop_in, tmp_path):
    _add_input(tmp_path / "in", 0)
    writer = (_input(drop_in, tmp_path / "in").groupBy("g").count().writeStream.format("delta")
              .outputMode("update").option("checkpointLocation", str(tmp_path / "ck")))
    with pytest.raises(UnsupportedOperationError, match="does not support Update output mode"):
        writer.start(str(tmp_path / "t"))


def test_other_formats_untouched(drop_in, tmp_path):
    _add_input(tmp_path / "in", 0)
    out = str(tmp_path / "out")
    query = (_input(drop_in, tmp_path / "in").writeStream.format("parquet").partitionBy("g")
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True)
             .start(out))
    query.awaitTermination()
    assert sorted(os.listdir(out))[:2] == ["_spark_metadata", "g=g0"]
    assert drop_in.read.parquet(out).count() == 4
