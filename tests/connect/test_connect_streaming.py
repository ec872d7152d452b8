"""Structured Streaming on sqlext tables over Spark Connect (issue 28), after
``sqlext.install(spark)`` on a Connect session: ``readStream.format("delta")`` reads through
sqlext's source (registered on the server, run in its Python workers), ``writeStream
.format("delta")`` commits each batch through sqlext's sink (the foreachBatch function runs in
the server's foreachBatch worker, the query id read from the checkpoint), and a user's
foreachBatch MERGE is idempotent with ``txnAppId``/``txnVersion``. The server is the folder's
(tests/connect/conftest.py); results are checked with delta-rs reading the tables."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os

import pytest

deltalake = pytest.importorskip("deltalake")

from tests.support.streaming_lines import admission_refused, has_admission_control  # noqa: E402

SCHEMA = "id long, v string"


@pytest.fixture
def installed(connect):
    import sqlext
    from sqlext.drop_in import uninstall
    sqlext.install(connect)
    yield connect
    uninstall(connect)


def _append(spark, table, ids, v="a"):
    import sqlext
    sqlext.write(spark.createDataFrame([(i, v) for i in ids], SCHEMA), table)


def _commits(table):
    """{version: (txn (appId, version) or None, operation, sorted ids the commit added)}."""
    dt = deltalake.DeltaTable(table)
    out = {}
    for v in range(dt.version() + 1):
        actions = [json.loads(line) for line in
                   open(os.path.join(table, "_delta_log", f"{v:020d}.json"))]
        txn = [(a["txn"]["appId"], a["txn"]["version"]) for a in actions if "txn" in a]
        info = [a["commitInfo"] for a in actions if "commitInfo" in a][0]
        before = set() if v == 0 else _ids(table, v - 1)
        out[v] = (txn[0] if txn else None, info["operation"], sorted(_ids(table, v) - before))
    return out


def _ids(table, version=None):
    rows = deltalake.DeltaTable(table, version=version).to_pyarrow_table().to_pylist()
    return {r["id"] for r in rows}


def _lose_commit(ck, batch):
    """Spark's record that ``batch`` finished is lost: Spark runs it again on restart."""
    for name in (str(batch), f".{batch}.crc"):
        os.remove(os.path.join(ck, "commits", name))


def _stream(spark, source, target, ck, **reader_options):
    """source -> target (both sqlext tables) once, Trigger.AvailableNow; returns the query."""
    reader = spark.readStream.format("delta")
    for key, value in reader_options.items():
        reader = reader.option(key, value)
    query = (reader.load(source).writeStream.format("delta")
             .option("checkpointLocation", ck).trigger(availableNow=True).start(target))
    query.awaitTermination()
    return query


def test_source_and_sink_batches_restart_and_rerun(installed, tmp_path):
    spark = installed
    source, target, ck = (str(tmp_path / n) for n in ("source", "target", "ck"))
    for i in range(1, 6):                       # versions 0-4, one file each
        _append(spark, source, [i])
    options = {"startingVersion": 2, "maxFilesPerTrigger": 2}
    batches = [[3, 4], [5]]     # versions 2, 3, 4: batches of two files, then one
    if not has_admission_control(spark.version):    # the server's pyspark is 4.0/4.1
        with admission_refused("maxFilesPerTrigger"):
            spark.readStream.format("delta").options(**options).load(source)
        options, batches = {"startingVersion": 2}, [[3, 4, 5]]
    query = _stream(spark, source, target, ck, **options)
    # each batch one commit with txn(query id, batch id), as delta-spark's sink
    assert _commits(target) == {b: ((query.id, b), "STREAMING UPDATE", ids)
                                for b, ids in enumerate(batches)}
    _append(spark, source, [6])
    _append(spark, source, [7])
    again = _stream(spark, source, target, ck, **options)
    last = len(batches)
    assert again.id == query.id                      # the checkpoint's query
    assert _commits(target)[last] == ((query.id, last), "STREAMING UPDATE", [6, 7])
    # the last batch's checkpoint commit lost: Spark runs it again, the sink skips it
    _lose_commit(ck, last)
    _stream(spark, source, target, ck, **options)
    assert deltalake.DeltaTable(target).version() == last
    assert sorted(_ids(target)) == [3, 4, 5, 6, 7]
    assert os.path.exists(os.path.join(ck, "commits", str(last)))


def test_to_table_by_name(installed, tmp_path):
    import sqlext
    spark = installed
    source = str(tmp_path / "source")
    _append(spark, source, [1, 2])
    query = (spark.readStream.format("delta").load(source).writeStream.format("delta")
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True)
             .toTable("connect_stream_out"))
    query.awaitTermination()
    try:
        assert sorted(r.id for r in spark.read.table("connect_stream_out").collect()) == [1, 2]
    finally:
        sqlext.sql(spark, "DROP TABLE connect_stream_out")


def test_sink_without_a_checkpoint_location_is_refused(installed, tmp_path):
    from sqlext.errors import SqlextError
    spark = installed
    source = str(tmp_path / "source")
    _append(spark, source, [1])
    writer = spark.readStream.format("delta").load(source).writeStream.format("delta")
    with pytest.raises(SqlextError, match="checkpointLocation"):
        writer.start(str(tmp_path / "target"))
    assert not os.path.exists(tmp_path / "target")


def test_foreach_batch_merge_is_idempotent_with_txn_settings(installed, tmp_path):
    spark = installed
    source, target, ck = (str(tmp_path / n) for n in ("source", "target", "ck"))
    _append(spark, target, [1, 2], "old")
    _append(spark, source, [2, 3], "b0")        # one file per row (local[2]): three batches
    _append(spark, source, [4], "b1")

    def upsert(batch, batch_id):        # runs in the server's foreachBatch worker
        from delta.tables import DeltaTable
        session = batch.sparkSession
        session.conf.set("spark.databricks.delta.write.txnAppId", "connect-upsert")
        session.conf.set("spark.databricks.delta.write.txnVersion", str(batch_id))
        (DeltaTable.forPath(session, target).alias("t").merge(batch.alias("s"), "t.id = s.id")
         .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())

    one_file = {"maxFilesPerTrigger": 1} if has_admission_control(spark.version) else {}
    batches = 3 if one_file else 1

    def run():
        (spark.readStream.format("delta").options(**one_file).load(source)
         .writeStream.foreachBatch(upsert).option("checkpointLocation", ck)
         .trigger(availableNow=True).start().awaitTermination())

    run()
    commits = _commits(target)
    assert [(c[0], c[1]) for c in commits.values()] == [
        (None, "WRITE"), *[(("connect-upsert", b), "MERGE") for b in range(batches)]]
    expected = [(1, "old"), (2, "b0"), (3, "b0"), (4, "b1")]
    assert sorted((r["id"], r["v"]) for r in
                  deltalake.DeltaTable(target).to_pyarrow_table().to_pylist()) == expected
    _lose_commit(ck, batches - 1)               # the last batch runs again: MERGE skipped
    run()
    assert deltalake.DeltaTable(target).version() == batches
    assert os.path.exists(os.path.join(ck, "commits", str(batches - 1)))


# --- the same stream on Connect and on the classic session ---------------------------------

def _batches(spark, table, out, ck, options):
    """{batch id: sorted rows} of the stream of ``table`` read with ``options``, Trigger
    .AvailableNow; each batch is written as parquet under ``out`` by a foreachBatch function
    (on Connect it runs in the server's worker), then read back with pyarrow."""
    import pyarrow.parquet as pq

    def keep(batch, batch_id):
        batch.write.mode("overwrite").parquet(os.path.join(out, str(batch_id)))

    (spark.readStream.format("delta").options(**options).load(table).writeStream
     .foreachBatch(keep).option("checkpointLocation", ck).trigger(availableNow=True)
     .start().awaitTermination())
    found = {}
    for name in sorted(os.listdir(out), key=int) if os.path.isdir(out) else []:
        rows = pq.read_table(os.path.join(out, name)).to_pylist()
        found[int(name)] = sorted((tuple(r.values()) for r in rows), key=str)
    return found


@contextlib.contextmanager
def _classic_mode():
    """pyspark builds classic Columns while in it (the Connect session's client set
    ``SPARK_CONNECT_MODE_ENABLED`` for this process)."""
    saved = os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["SPARK_CONNECT_MODE_ENABLED"] = saved


def _on_both(classic, connect, table, folder, cases):
    """{case: (classic's batches, Connect's batches)} for each case's reader options."""
    out = {}
    for name, options in cases.items():
        def run(who, session):
            return _batches(session, table, str(folder / who / name / "out"),
                            str(folder / who / name / "ck"), options)
        with _classic_mode():
            theirs = run("classic", classic)
        out[name] = (theirs, run("connect", connect))
    return out


@pytest.fixture
def both(request, installed):
    """(the classic session, the Connect session), sqlext installed on each; the classic one
    is built (if this is the run's first use) in classic mode, else pyspark would make it a
    Connect one."""
    with _classic_mode():
        classic = request.getfixturevalue("drop_in")
    return classic, installed


def test_change_feed_and_start_options_as_on_the_classic_session(both, tmp_path):
    import sqlext
    from sqlext.log.table import DeltaLog
    classic, connect = both
    table = str(tmp_path / "t")
    with _classic_mode():
        rows = classic.createDataFrame([(i, "a") for i in range(4)], SCHEMA)
        sqlext.write(rows, table, configuration={"delta.enableChangeDataFeed": "true"})  # v0
        _append(classic, table, [4, 5], "b")                                             # v1
        classic.sql(f"DELETE FROM delta.`{table}` WHERE id = 0")                         # v2
        classic.sql(f"UPDATE delta.`{table}` SET v = 'u' WHERE id = 1")                  # v3
        _append(classic, table, [6], "c")                                                # v4
    at_v2 = DeltaLog(table).commit_timestamps()[2]
    stamp = dt.datetime.fromtimestamp(at_v2 / 1000, dt.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S.%f")[:-3]
    cases = {"cdf_from0": {"readChangeFeed": "true", "startingVersion": "0"},
             "cdf_snapshot": {"readChangeFeed": "true"},
             "cdf_from_timestamp": {"readChangeFeed": "true", "startingTimestamp": stamp},
             "from_timestamp_skip_changes": {"startingTimestamp": stamp,
                                             "skipChangeCommits": "true"},
             "from_v3_skip_changes": {"startingVersion": "3", "skipChangeCommits": "true"}}
    if has_admission_control(connect.version) and has_admission_control():
        cases["cdf_one_file_a_batch"] = {"readChangeFeed": "true", "startingVersion": "1",
                                         "maxFilesPerTrigger": "1"}
        cases["one_file_a_batch_skip"] = {"startingVersion": "0", "maxFilesPerTrigger": "1",
                                          "skipChangeCommits": "true"}
    found = _on_both(classic, connect, table, tmp_path, cases)
    for name, (theirs, ours) in found.items():
        assert ours == theirs, name
    kinds = {r[2] for rows in found["cdf_from0"][0].values() for r in rows}
    assert kinds == {"insert", "delete", "update_preimage", "update_postimage"}
    # from version 2 on: the DELETE and UPDATE skipped, only v4's append
    assert [r[0] for rows in found["from_timestamp_skip_changes"][1].values()
            for r in rows] == [6]
    assert [r[0] for rows in found["from_v3_skip_changes"][1].values() for r in rows] == [6]
    assert {r[3] for rows in found["cdf_from_timestamp"][1].values() for r in rows} == {2, 3, 4}
    if "cdf_one_file_a_batch" in found:
        assert len(found["one_file_a_batch_skip"][1]) > 2        # one batch per file
        assert len(found["cdf_one_file_a_batch"][1]) > 2
