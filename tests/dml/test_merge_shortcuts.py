"""Shortcuts MERGE takes that must not change its result: a source no target file can match
written as plain inserts, one-sided clauses' plain column values
read after the join instead of copied before it, a small source's keys summarised on the driver
(read from its parquet files when it is a plain scan of them), a computed source materialized
once, empty table frames reused."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

import sqlext
from sqlext import DeltaTable
from sqlext.engine.dml.command import table_frame
from sqlext.engine.merge.clauses import MATCHED, NOT_MATCHED, NOT_MATCHED_BY_SOURCE, Clause
from sqlext.engine.merge.command import AT_ONCE_CONF, materialized_source
from sqlext.engine.merge.plan import SOURCE_PRESENT, TARGET_PRESENT, MergePlan, source_alias
from sqlext.engine.merge.prune import KeyPair, SourceSummary, broadcastable, summarize_source
from sqlext.engine.schemas import spark_schema
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog
from tests.support.dml_cases import SPARK_SCHEMA, changes_of, operation, rows_table, spark_table
from tests.support.merge_cases import duckdb_merge
from sqlext.engine.local import policy
from tests.support.spark import jobs_run, spark_conf
from tests.support import assert_same_rows, read_deltalake

ROWS = [(i, i % 3, "abc"[i % 3], i * 10) for i in range(30)]


def plan_of(spark, path, source, clauses) -> MergePlan:
    snapshot: Snapshot = DeltaLog(str(path)).snapshot()
    return MergePlan(spark, str(path), snapshot, source, "t.id = s.id", tuple(clauses), "t",
                     False)


def test_plain_insert_and_by_source_values_are_not_copied_before_the_join(spark, table_path):
    spark_table(spark, table_path, ROWS, files=3)
    # `p` arrives as a smallint (cast on store assignment), `v` as an expression: both computed
    # after the join, in their clause's branch (only for the rows it takes); `id` and `s` are
    # the source's own columns, read after the join
    src = spark.createDataFrame([(1, 2, "x", 5)], "id long, p smallint, s string, v long")
    plan = plan_of(spark, table_path, src.alias("s"), [
        Clause(NOT_MATCHED, "insert", None, (("id", "s.id"), ("p", "s.p"), ("s", "s.s"),
                                             ("v", "s.v + 1"))),
        Clause(NOT_MATCHED_BY_SOURCE, "update", None, (("s", "t.s"), ("v", "t.v * 2")))])
    insert, by_source = plan.clauses
    assert insert.plain == {"id": "id", "s": "s"}
    assert by_source.plain == {"s": "s"}
    assert insert.deferred == {"p", "v"} and by_source.deferred == {"v"}
    assert plan.source_side().columns == ["id", "p", "s", "v", SOURCE_PRESENT]
    target = DeltaTable.forPath(spark, str(table_path)).toDF()
    assert plan.target_side(target).columns == ["id", "p", "s", "v", TARGET_PRESENT]


def test_insert_star_copies_nothing_and_merges_as_duckdb(spark, table_path):
    spark_table(spark, table_path, ROWS, files=3)
    src_rows = [(12, 1, "x", -1), (40, 2, "new", 7), (41, None, None, None)]
    src = spark.createDataFrame(src_rows, SPARK_SCHEMA).alias("s")
    plan = plan_of(spark, table_path, src, [Clause(MATCHED, "update"),
                                           Clause(NOT_MATCHED, "insert")])
    assert plan.source_side().columns == ["id", "p", "s", "v", SOURCE_PRESENT]

    (DeltaTable.forPath(spark, str(table_path)).alias("t").merge(src, "t.id = s.id")
     .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
    expected = duckdb_merge(ROWS, src_rows, "MERGE INTO tgt AS t USING src AS s ON t.id = s.id "
                                               "WHEN MATCHED THEN UPDATE SET * "
                                               "WHEN NOT MATCHED THEN INSERT *")
    assert_same_rows(read_deltalake(table_path), expected)


def test_a_source_no_file_can_match_is_only_inserted(spark, table_path):
    """Source keys beyond every file's id range: no candidate file, so the MERGE (update and
    insert clauses, a NOT MATCHED BY SOURCE one whose condition no file's statistics allow)
    writes the inserts straight from the source in one Spark job, removes nothing, and ends as
    DuckDB's MERGE does."""
    spark_table(spark, table_path, ROWS, files=3)
    src_rows = [(100, 1, "x", 5), (101, 2, "y", None), (100, 0, "z", 6)]
    # a VALUES source: held by the plan, its keys summarised on the driver (no job of its own)
    src = spark.sql("SELECT CAST(id AS BIGINT) id, CAST(p AS INT) p, s, CAST(v AS BIGINT) v "
                    "FROM VALUES (100, 1, 'x', 5), (101, 2, 'y', NULL), (100, 0, 'z', 6) "
                    "AS s(id, p, s, v)").alias("s")
    statement = ("MERGE INTO tgt AS t USING src AS s ON t.id = s.id "
                 "WHEN MATCHED THEN UPDATE SET v = s.v "
                 "WHEN NOT MATCHED THEN INSERT * "
                 "WHEN NOT MATCHED BY SOURCE AND t.id > 500 THEN DELETE")

    def run():
        return (DeltaTable.forPath(spark, str(table_path)).alias("t").merge(src, "t.id = s.id")
                .whenMatchedUpdate(set={"v": "s.v"}).whenNotMatchedInsertAll()
                .whenNotMatchedBySourceDelete("t.id > 500").execute())

    # the Spark path's one job (the driver path writes these inserts with none)
    with spark_conf(spark, {policy.MODE_CONF: "off"}):
        result, jobs = jobs_run(spark, run)
    assert jobs == 1
    assert_same_rows(read_deltalake(table_path), duckdb_merge(ROWS, src_rows, statement))
    metrics = result.first()
    assert (metrics.num_affected_rows, metrics.num_inserted_rows, metrics.num_updated_rows) == \
        (3, 3, 0)
    commit = [json.loads(line) for line in (table_path / "_delta_log" / f"{1:020d}.json")
              .read_text().splitlines()]
    assert not any("remove" in a for a in commit)
    assert json.loads(commit[0]["commitInfo"]["operationMetrics"]["numTargetRowsInserted"]) == 3


def test_a_small_source_is_summarised_on_the_driver_with_the_same_result(spark, table_path):
    spark_table(spark, table_path, ROWS, files=3)
    snapshot = DeltaLog(str(table_path)).snapshot()
    types = {f.name: f.dataType for f in spark_schema(snapshot.metadata.schema_string).fields}
    # ids in the first file's range, NULL keys, and two rows above every file; a string key and
    # a narrower integer key beside it
    ids = spark.range(0, 200, 1, numPartitions=4).select(
        F.when(F.col("id") % 50 == 0, F.lit(None)).otherwise(
            F.when(F.col("id") < 100, F.col("id") % 7 + 3).otherwise(F.col("id") + 1000)
        ).alias("id"))
    src = ids.filter(F.col("id").isNull() | (F.col("id") < 1100) | (F.col("id") > 1197)).select(
        "id", F.when(F.col("id") % 2 == 0, F.concat(F.lit("n"), F.col("id").cast("string")))
        .alias("name"), (F.col("id") % 3).cast("smallint").alias("q")).alias("s")
    pairs = [("id", "id"), ("s", "name"), ("p", "q")]

    def summary():
        keys = [KeyPair(t, exp.column(c, "s")) for t, c in pairs]
        return summarize_source(src, snapshot, snapshot.files, keys, types)

    assert broadcastable(src)
    small = summary()
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        assert not broadcastable(src)
        large = summary()
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    assert small.num_rows == large.num_rows == src.count()
    described = [[(k.pair.kind, k.low, k.high, k.intervals) for k in s.keys]
                 for s in (small, large)]
    assert described[0] == described[1]
    assert [d[:3] for d in described[0]] == [("int", 3, 1199), ("string", "n1198", "n8"),
                                             ("int", 0, 2)]
    grid_intervals = described[0][0][3]
    assert grid_intervals[0][0] == 3 and grid_intervals[-1][1] == 1199
    # the ids reach the first file only; the names ("n...") lie beyond every file's `s` range
    by_id = SourceSummary(small.num_rows, small.keys[:1]).prune(snapshot, snapshot.files)
    assert [f.parsed_stats()["minValues"]["id"] for f in by_id] == [0]
    assert small.prune(snapshot, snapshot.files) == []


def test_keys_of_a_plain_parquet_source_are_read_without_a_spark_job(spark, table_path,
                                                                       tmp_path):
    spark_table(spark, table_path, ROWS, files=3)
    snapshot = DeltaLog(str(table_path)).snapshot()
    types = {f.name: f.dataType for f in spark_schema(snapshot.metadata.schema_string).fields}
    src_rows = [(12, 1, "x", -1), (15, 1, None, -2), (None, 2, "n", 0), (100, 2, "new", 1),
                (101, None, "b", None)]
    source_file = tmp_path / "source.parquet"
    pq.write_table(rows_table(src_rows), source_file)
    src = spark.read.parquet(str(source_file)).alias("s")

    from_files, in_spark = _summaries_without_and_with_a_job(spark, src, snapshot, types)
    assert from_files.num_rows == in_spark.num_rows == len(src_rows)
    assert [(k.pair.kind, k.low, k.high, k.intervals) for k in from_files.keys] == \
        [(k.pair.kind, k.low, k.high, k.intervals) for k in in_spark.keys]
    assert (from_files.keys[0].low, from_files.keys[0].high) == (12, 101)

    result = (DeltaTable.forPath(spark, str(table_path)).alias("t").merge(src, "t.id = s.id")
              .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute().collect()[0])
    expected = duckdb_merge(ROWS, src_rows, "MERGE INTO tgt AS t USING src AS s ON t.id = s.id "
                                               "WHEN MATCHED THEN UPDATE SET * "
                                               "WHEN NOT MATCHED THEN INSERT *")
    assert_same_rows(read_deltalake(table_path), expected)
    assert (result.num_updated_rows, result.num_inserted_rows) == (2, 3)
    assert operation(table_path, 1)[2]["numSourceRows"] == str(len(src_rows))


def test_keys_of_a_values_source_are_summarised_without_a_spark_job(spark, table_path):
    spark_table(spark, table_path, ROWS, files=3)
    snapshot = DeltaLog(str(table_path)).snapshot()
    types = {f.name: f.dataType for f in spark_schema(snapshot.metadata.schema_string).fields}
    # SQL VALUES: a local relation, whose rows Spark hands back from the driver
    src = spark.sql("SELECT * FROM VALUES (12, 'x'), (15, CAST(NULL AS STRING)), "
                    "(CAST(NULL AS INT), 'n'), (100, 'new') AS s(id, s)").alias("s")
    assert src._jdf.queryExecution().optimizedPlan().nodeName() == "LocalRelation"

    local, in_spark = _summaries_without_and_with_a_job(spark, src, snapshot, types)
    assert local.num_rows == in_spark.num_rows == 4
    assert [(k.pair.kind, k.low, k.high, k.intervals) for k in local.keys] == \
        [(k.pair.kind, k.low, k.high, k.intervals) for k in in_spark.keys]
    assert [(k.low, k.high) for k in local.keys] == [(12, 100), ("n", "x")]


def test_empty_table_frames_are_reused_per_schema_and_alias(spark, table_path):
    spark_table(spark, table_path, ROWS, files=1)
    log = DeltaLog(str(table_path))
    before = log.snapshot()
    framed = table_frame(spark, before, "t")
    assert table_frame(spark, before, "t") is framed
    assert table_frame(spark, before, None) is not framed
    assert framed.columns == ["id", "p", "s", "v"]
    assert framed.select("t.id").schema.fields[0].dataType == T.LongType()
    sqlext.write(spark.createDataFrame([(1, 1, "a", 1, 2.5)], "id long, p int, s string, v long, "
                                                              "w double"),
                 str(table_path), mergeSchema=True)
    after = table_frame(spark, log.snapshot(), "t")
    assert after is not framed and after.columns == ["id", "p", "s", "v", "w"]


def test_a_computed_source_is_materialized_once_and_plain_ones_are_not(spark, table_path,
                                                                        tmp_path):
    spark_table(spark, table_path, ROWS, files=3)
    source_file = tmp_path / "source.parquet"
    pq.write_table(rows_table([(12, 1, "x", -1), (40, 2, "new", 7)]), source_file)
    plain = spark.read.parquet(str(source_file)).alias("s")
    local = spark.createDataFrame(rows_table([(1, 1, "a", 1)]).to_pandas()).alias("s")
    assert materialized_source(plain) is plain
    assert materialized_source(local) is local

    # a view with an aggregate and a scalar subquery over the target: computed by one job
    computed = (plain.groupBy("id", "p", "s").agg(F.sum("v").alias("v"))
                .where(F.col("id") > DeltaTable.forPath(spark, str(table_path)).toDF()
                       .agg(F.min("id")).first()[0]).alias("s"))
    # small enough to broadcast: its rows come to the driver and are held in the plan
    kept, jobs = jobs_run(spark, lambda: materialized_source(computed))
    assert jobs >= 1
    assert kept._jdf.queryExecution().optimizedPlan().nodeName() == "LocalRelation"
    assert source_alias(kept) == "s" and kept.schema == computed.schema
    # the kept rows are the computed source's
    assert sorted(kept.collect()) == sorted(computed.collect())
    # too large to broadcast (here: broadcasts off): kept by the executors
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        in_spark = materialized_source(computed)
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    assert in_spark._jdf.queryExecution().optimizedPlan().nodeName() == "LogicalRDD"
    assert source_alias(in_spark) == "s"
    assert sorted(in_spark.collect()) == sorted(computed.collect())

    (DeltaTable.forPath(spark, str(table_path)).alias("t").merge(computed, "t.id = s.id")
     .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
    expected = duckdb_merge(ROWS, [(12, 1, "x", -1), (40, 2, "new", 7)],
                               "MERGE INTO tgt AS t USING src AS s ON t.id = s.id "
                               "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    assert_same_rows(read_deltalake(table_path), expected)


def test_a_non_deterministic_source_gives_the_same_rows_to_every_pass(spark, table_path):
    spark_table(spark, table_path, ROWS, files=3)
    # ids 25-34: five update the last file, five are inserted; v is random
    src = spark.range(25, 35, 1, numPartitions=2).select(
        "id", (F.col("id") % 3).cast("int").alias("p"), F.lit("r").alias("s"),
        (F.rand() * 1e9).cast("long").alias("v")).alias("s")
    assert not src._jdf.queryExecution().analyzed().deterministic()
    # every pass (key summary, join) reads the same pinned rows
    assert materialized_source(src)._jdf.queryExecution().optimizedPlan().nodeName() in (
        "LocalRelation", "LogicalRDD")
    result = (DeltaTable.forPath(spark, str(table_path)).alias("t").merge(src, "t.id = s.id")
              .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute().collect()[0])
    assert (result.num_updated_rows, result.num_inserted_rows) == (5, 5)
    table = {r["id"]: r["v"] for r in read_deltalake(table_path).to_pylist()}
    changes = changes_of(table_path, 1).to_pylist()
    after = {r["id"]: r["v"] for r in changes
             if r["_change_type"] in ("insert", "update_postimage")}
    assert sorted(after) == list(range(25, 35))
    # the values written to the table are the ones the change feed recorded
    assert {i: table[i] for i in after} == after


def _summaries_without_and_with_a_job(spark, src, snapshot, types):
    """The source summary of keys ``id`` and ``s`` taken on the driver (asserted: no Spark
    job), and again with broadcasts off, which makes Spark compute it (asserted: a job)."""
    def summary():
        keys = [KeyPair("id", exp.column("id", "s")), KeyPair("s", exp.column("s", "s"))]
        return summarize_source(src, snapshot, snapshot.files, keys, types)

    without_job, jobs = jobs_run(spark, summary)
    assert jobs == 0
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        in_spark, jobs = jobs_run(spark, summary)
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    assert jobs >= 1
    return without_job, in_spark


def _file_ranges(path) -> dict[str, tuple[int, int]]:
    """{path: (min id, max id)} of the table's files, from their statistics."""
    return {f.path: tuple(json.loads(f.stats)[k]["id"] for k in ("minValues", "maxValues"))
            for f in DeltaLog(str(path)).snapshot().files}


def test_few_small_files_are_rewritten_in_one_pass_and_untouched_ones_stay(spark, table_path,
                                                                         tmp_path):
    # three files of ids 0-9, 10-19, 20-29; the source updates ids 12 and 15 and inserts 40.
    # One pass joins and writes (fewer Spark jobs than finding the touched files first, the
    # general path, run on a copy); only the file of 10-19 is removed, as delta-spark would
    general_path = tmp_path / "general"
    src_rows = [(12, 1, "x", -1), (15, 0, "y", -2), (40, 2, "new", 7)]
    src = spark.createDataFrame(rows_table(src_rows)).alias("s")      # rows held in the plan
    statement = ("MERGE INTO tgt AS t USING src AS s ON t.id = s.id "
                 "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")

    def merge(path):
        return jobs_run(spark, lambda: DeltaTable.forPath(spark, str(path)).alias("t")
                        .merge(src, "t.id = s.id").whenMatchedUpdateAll()
                        .whenNotMatchedInsertAll().execute().collect()[0])

    for path in (table_path, general_path):
        spark_table(spark, path, ROWS, files=3)
    before = _file_ranges(table_path)
    result, jobs = merge(table_path)
    spark.conf.set(AT_ONCE_CONF, "0")
    try:
        general, general_jobs = merge(general_path)
    finally:
        spark.conf.unset(AT_ONCE_CONF)
    assert jobs <= general_jobs
    assert result == general
    assert (result.num_updated_rows, result.num_inserted_rows) == (2, 1)
    expected = duckdb_merge(ROWS, src_rows, statement)
    for path in (table_path, general_path):
        assert_same_rows(read_deltalake(path), expected)
    after = _file_ranges(table_path)
    assert sorted(r for p, r in before.items() if p in after) == [(0, 9), (20, 29)]
    _, _, metrics = operation(table_path, 1)
    _, _, general_metrics = operation(general_path, 1)
    counted = ("numTargetFilesRemoved", "numTargetRowsCopied", "numTargetRowsUpdated",
               "numTargetRowsInserted", "numOutputRows", "numTargetFilesBeforeSkipping")
    assert [metrics[k] for k in counted] == [general_metrics[k] for k in counted] == [
        "1", "8", "2", "1", "11", "3"]
    changes = sorted((r["id"], r["_change_type"]) for r in changes_of(table_path, 1).to_pylist())
    assert changes == [(12, "update_postimage"), (12, "update_preimage"),
                       (15, "update_postimage"), (15, "update_preimage"), (40, "insert")]
    assert changes == sorted((r["id"], r["_change_type"])
                             for r in changes_of(general_path, 1).to_pylist())

    # matches that change nothing and a new row: no file is removed, only the insert is added
    src2 = [(21, 0, "unused", 0), (50, 1, "n", 5)]
    DeltaTable.forPath(spark, str(table_path)).alias("t").merge(
        spark.createDataFrame(rows_table(src2)).alias("s"), "t.id = s.id").whenMatchedUpdate(
        condition="s.v > 100", set={"v": "s.v"}).whenNotMatchedInsertAll().execute()
    _, _, metrics = operation(table_path, 2)
    assert (metrics["numTargetFilesRemoved"], metrics["numTargetRowsInserted"]) == ("0", "1")
    assert set(after) <= set(_file_ranges(table_path))
    assert sorted(r["id"] for r in read_deltalake(table_path).to_pylist()) == sorted(
        [r[0] for r in ROWS] + [40, 50])


def test_null_safe_merge_prunes_by_key_and_matches_nulls_as_duckdb(spark, table_path, tmp_path):
    # ids 0-9, 10-19, 20-29 and a file holding a NULL id; `<=>` as dbt's merges write it
    rows = ROWS + [(None, 1, "null id", 1)]
    df = spark.createDataFrame(rows, SPARK_SCHEMA).repartitionByRange(4, "id")
    sqlext.write(df, str(table_path))
    statement = ("MERGE INTO tgt AS t USING src AS s ON s.id IS NOT DISTINCT FROM t.id "
                 "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    expected_rows = list(rows)
    for version, src_rows in ((1, [(12, 1, "x", -1), (40, 2, "new", 7)]),
                              (2, [(None, 2, "null matched", 5), (13, 0, "y", 3)])):
        src = spark.createDataFrame(rows_table(src_rows)).alias("s")
        DeltaTable.forPath(spark, str(table_path)).alias("t").merge(
            src, "s.id <=> t.id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute()
        expected = duckdb_merge(expected_rows, src_rows, statement)
        assert_same_rows(read_deltalake(table_path), expected)
        expected_rows = [tuple(r.values()) for r in expected.to_pylist()]
        _, _, metrics = operation(table_path, version)
        if version == 1:
            # no NULL in the source: pruned to the file of 10-19 as with `=`
            assert metrics["numTargetFilesAfterSkipping"] == "1"
        else:
            # a NULL source key: the NULL target row is matched (updated, not inserted again)
            assert int(metrics["numTargetFilesAfterSkipping"]) > 1
            assert (metrics["numTargetRowsUpdated"], metrics["numTargetRowsInserted"]) == ("2", "0")
