"""Streaming against delta-spark 4.4 (issue 28): a table sqlext's Delta sink writes (a batch
replayed included) reads in delta-spark, batch and streaming, with every row once and history
``STREAMING UPDATE``; delta-spark's own sink records the same ``txn`` action; delta-spark's
source stops on a DELETE with the message sqlext's source gives."""

from __future__ import annotations

import json
import os

import pytest
from pyspark.errors import StreamingQueryException




def _input(folder, batch):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"part-{batch}.json"), "w") as f:
        for j in range(3):
            f.write(json.dumps({"id": batch * 10 + j, "p": f"p{j % 2}"}) + "\n")


def _stream(spark, source, table, ck):
    q = (spark.readStream.schema("id long, p string").option("maxFilesPerTrigger", 1)
         .json(str(source)).writeStream.format("delta").partitionBy("p")
         .option("checkpointLocation", ck).trigger(availableNow=True).start(table))
    q.awaitTermination()


def test_delta_spark_reads_sqlext_sink_every_row_once(drop_in, delta_spark, tmp_path):
    spark, source = drop_in, tmp_path / "in"
    table, ck = str(tmp_path / "t"), str(tmp_path / "ck")
    for b in range(3):
        _input(source, b)
    _stream(spark, source, table, ck)
    for name in ("2", ".2.crc"):                 # Spark reruns batch 2: sqlext skips it
        os.remove(os.path.join(ck, "commits", name))
    _stream(spark, source, table, ck)
    expected = sorted(b * 10 + j for b in range(3) for j in range(3))
    code = f"""
rows = sorted(r.id for r in spark.read.format("delta").load({table!r}).collect())
seen = []
q = (spark.readStream.format("delta").load({table!r}).writeStream
     .foreachBatch(lambda df, i: seen.extend(r.id for r in df.collect()))
     .option("checkpointLocation", {str(tmp_path / "ds-ck")!r}).trigger(availableNow=True).start())
q.awaitTermination()
history = [(r.version, r.operation, dict(r.operationParameters))
           for r in DeltaTable.forPath(spark, {table!r}).history().collect()]
result = {{"rows": rows, "streamed": sorted(seen), "history": history}}
"""
    answer = delta_spark.exec(code)
    assert answer["rows"] == expected
    assert answer["streamed"] == expected
    history = sorted(answer["history"])
    assert [v for v, _, _ in history] == [0, 1, 2]
    assert {op for _, op, _ in history} == {"STREAMING UPDATE"}
    assert [params["epochId"] for _, _, params in history] == ["0", "1", "2"]
    assert {params["outputMode"] for _, _, params in history} == {"Append"}


def test_txn_action_as_delta_spark_sink_writes_it(drop_in, delta_spark, tmp_path):
    spark, source = drop_in, tmp_path / "in"
    _input(source, 0)
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    _stream(spark, source, ours, str(tmp_path / "ck1"))
    delta_spark.exec(f"""
q = (spark.readStream.schema("id long, p string").json({str(source)!r}).writeStream
     .format("delta").option("checkpointLocation", {str(tmp_path / "ck2")!r})
     .trigger(availableNow=True).start({theirs!r}))
q.awaitTermination()
result = None
""")

    def txn(table):
        lines = open(os.path.join(table, "_delta_log", "00000000000000000000.json")).readlines()
        found = [json.loads(line)["txn"] for line in lines if '"txn"' in line]
        return found[0]
    mine, delta = txn(ours), txn(theirs)
    assert sorted(mine) == sorted(delta) == ["appId", "lastUpdated", "version"]
    assert mine["version"] == delta["version"] == 0


def test_delete_error_text_matches_delta_spark(drop_in, delta_spark, tmp_path):
    spark = drop_in
    texts = {}
    for who in ("sqlext", "delta"):
        table, ck = str(tmp_path / who), str(tmp_path / f"{who}-ck")
        run = f"""
seen = []
q = (spark.readStream.format("delta").load({table!r}).writeStream
     .foreachBatch(lambda df, i: seen.append(df.count()))
     .option("checkpointLocation", {ck!r}).trigger(availableNow=True).start())
q.awaitTermination()
"""
        setup = [f"INSERT INTO delta.`{table}` VALUES (1, 'a'), (2, 'b')",
                 f"DELETE FROM delta.`{table}` WHERE true"]
        if who == "sqlext":
            spark.sql(f"CREATE TABLE delta.`{table}` (id long, p string) USING delta")
            spark.sql(setup[0])
            exec(run, {"spark": spark})
            spark.sql(setup[1])
            with pytest.raises(StreamingQueryException) as info:
                exec(run, {"spark": spark})
            texts[who] = str(info.value)
        else:
            answer = delta_spark.exec(f"""
spark.sql("CREATE TABLE delta.`{table}` (id long, p string) USING delta")
spark.sql("{setup[0]}")
{run}
spark.sql("{setup[1]}")
try:
{chr(10).join('    ' + line for line in run.strip().splitlines())}
    result = "no error"
except Exception as e:
    result = str(e)
""")
            texts[who] = answer
    for text in texts.values():
        assert "DELTA_SOURCE_IGNORE_DELETE" in text
        assert "from streaming source at version 2. This is currently not supported. If you'd " \
               "like to ignore deletes, set the option 'ignoreDeletes' to 'true'." in text
