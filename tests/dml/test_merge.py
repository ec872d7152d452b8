"""MERGE through ``DeltaTable.merge``: what is committed (files, change data, parameters, metrics),
duplicate matches, insert-only merges, schema evolution, fixture tables written by delta-spark."""

from __future__ import annotations

import json
from collections import Counter

import pytest

import sqlext
from sqlext import DeltaTable
from sqlext.engine.merge.command import SINGLE_PASS_CONF
from sqlext.errors import MultipleSourceRowMatchError, UnsupportedOperationError
from tests.support.dml_cases import (SPARK_SCHEMA, changes_of, file_actions, latest_version, live_files,
                               operation, rows_table, spark_table)
from tests.support.merge_cases import (action_counts, actual_changes, duckdb_changes, duckdb_merge,
                                       sqlext_merge)
from tests.support.table_checks import assert_readers_agree
from tests.support import assert_same_rows, read_deltalake

# 30 rows, ids 0..29, written as 3 files of consecutive ids (0-9, 10-19, 20-29)
ROWS = [(i, i % 3, "abc"[i % 3], i * 10) for i in range(30)]


@pytest.fixture(params=["single pass", "two passes"])
def merge_mode(request, spark):
    """Both execution paths: the join cached (small candidate sets) or done twice."""
    if request.param == "two passes":
        spark.conf.set(SINGLE_PASS_CONF, "0")
    yield request.param
    spark.conf.unset(SINGLE_PASS_CONF)


def source(spark, rows, alias="s"):
    return spark.createDataFrame(rows, SPARK_SCHEMA).alias(alias)


def table(spark, path, alias="t"):
    return DeltaTable.forPath(spark, str(path)).alias(alias)


def files_on_disk(path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*.parquet")
            if "_delta_log" not in p.parts}


def test_upsert_rewrites_only_the_touched_file(spark, table_path):
    spark_table(spark, table_path, ROWS, files=3)
    before = {f["path"]: f for f in live_files(table_path)}
    touched = [p for p, f in before.items() if f["stats"]["minValues"]["id"] == 10]
    src = [(12, 1, "x", -1), (15, 1, "y", -2), (100, 2, "new", 1), (101, None, None, None)]

    result = (table(spark, table_path).merge(source(spark, src), "t.id = s.id")
              .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())

    assert result.collect()[0].asDict() == {"num_affected_rows": 4, "num_updated_rows": 2,
                                            "num_deleted_rows": 0, "num_inserted_rows": 2}
    assert latest_version(table_path) == 1
    actions = file_actions(table_path, 1)
    assert actions["remove"] == touched
    assert not set(actions["add"]) & set(before)
    assert len(actions["cdc"]) >= 1
    op, params, metrics = operation(table_path, 1)
    assert op == "MERGE"
    assert params == {"predicate": '["(t.id = s.id)"]',
                      "matchedPredicates": '[{"actionType":"update"}]',
                      "notMatchedPredicates": '[{"actionType":"insert"}]',
                      "notMatchedBySourcePredicates": "[]"}
    expected_metrics = {
        "numSourceRows": 4, "numTargetRowsInserted": 2, "numTargetRowsUpdated": 2,
        "numTargetRowsMatchedUpdated": 2, "numTargetRowsDeleted": 0, "numTargetRowsCopied": 8,
        "numOutputRows": 12, "numTargetFilesRemoved": 1,
        "numTargetFilesAdded": len(actions["add"]),
        "numTargetChangeFilesAdded": len(actions["cdc"]),
        # the source's keys 12 and 15 lie in one file's id range only; 100 and 101 in none
        "numTargetFilesBeforeSkipping": 3, "numTargetFilesAfterSkipping": 1}
    assert {k: int(metrics[k]) for k in expected_metrics} == expected_metrics
    assert {"executionTimeMs", "scanTimeMs", "rewriteTimeMs"} <= set(metrics)
    expected = duckdb_merge(ROWS, src, "MERGE INTO tgt AS t USING src AS s ON t.id = s.id "
                                          "WHEN MATCHED THEN UPDATE SET * "
                                          "WHEN NOT MATCHED THEN INSERT *")
    assert_readers_agree(spark, table_path, expected)
    assert actual_changes(changes_of(table_path, 1)) == Counter({
        ("update_preimage", (12, 0, "a", 120)): 1, ("update_preimage", (15, 0, "a", 150)): 1,
        ("update_postimage", (12, 1, "x", -1)): 1, ("update_postimage", (15, 1, "y", -2)): 1,
        ("insert", (100, 2, "new", 1)): 1, ("insert", (101, None, None, None)): 1})


def test_every_clause_kind_on_a_partitioned_table(spark, table_path, merge_mode):
    spark_table(spark, table_path, ROWS, partition_by=["p"], files=2)
    src = [(1, 1, "del", 0), (4, 1, "upd", 7), (50, 0, "ins", 5), (51, 2, "skip", 5)]
    statement = ("MERGE INTO tgt AS t USING src AS s ON t.id = s.id AND t.p = 1 "
                 "WHEN MATCHED AND s.s = 'del' THEN DELETE "
                 "WHEN MATCHED THEN UPDATE SET v = s.v + t.v, s = s.s "
                 "WHEN NOT MATCHED AND s.s = 'ins' THEN INSERT (id, p, v) VALUES (s.id, s.p, s.v) "
                 "WHEN NOT MATCHED BY SOURCE AND t.p = 2 AND t.v > 200 THEN UPDATE SET v = 0 "
                 "WHEN NOT MATCHED BY SOURCE AND t.p = 0 AND t.id > 20 THEN DELETE")
    row = sqlext_merge(spark, table_path, src, statement)

    expected = duckdb_merge(ROWS, src, statement)
    assert_readers_agree(spark, table_path, expected)
    tracking = statement.replace("s = s.s ", "s = s.s, upd = true ").replace(
        "UPDATE SET v = 0 ", "UPDATE SET v = 0, upd = true ")
    actions = action_counts(duckdb_changes(ROWS, src, tracking))
    assert (row.num_updated_rows, row.num_deleted_rows, row.num_inserted_rows) == (
        actions["UPDATE"], actions["DELETE"], actions["INSERT"])
    _, params, metrics = operation(table_path, 1)
    predicates = {k: json.loads(params[k]) for k in (
        "matchedPredicates", "notMatchedPredicates", "notMatchedBySourcePredicates")}
    assert [p["actionType"] for p in predicates["matchedPredicates"]] == ["delete", "update"]
    assert "predicate" not in predicates["matchedPredicates"][1]
    assert predicates["notMatchedPredicates"] == [{"predicate": "(s.s = 'ins')",
                                                   "actionType": "insert"}]
    assert [p["actionType"] for p in predicates["notMatchedBySourcePredicates"]] == [
        "update", "delete"]
    assert int(metrics["numTargetRowsMatchedDeleted"]) == 1
    assert int(metrics["numTargetRowsMatchedUpdated"]) == 1
    assert int(metrics["numTargetRowsNotMatchedBySourceUpdated"]) == sum(
        1 for r in ROWS if r[1] == 2 and r[3] > 200)
    assert int(metrics["numTargetRowsNotMatchedBySourceDeleted"]) == sum(
        1 for r in ROWS if r[1] == 0 and r[0] > 20)


def test_target_only_conjuncts_prune_by_partition(spark, table_path):
    spark_table(spark, table_path, ROWS, partition_by=["p"], files=2)
    p1 = {f["path"] for f in live_files(table_path) if f["partitionValues"]["p"] == "1"}
    src = [(i, 1, "u", -i) for i in range(0, 30, 2)]        # keys in every file
    (table(spark, table_path).merge(source(spark, src), "t.id = s.id AND t.p = 1")
     .whenMatchedUpdate(set={"v": "s.v"}).execute())
    _, _, metrics = operation(table_path, 1)
    assert int(metrics["numTargetFilesAfterSkipping"]) == len(p1)
    assert set(file_actions(table_path, 1)["remove"]) <= p1
    expected = [(i, p, s, -i if p == 1 and i % 2 == 0 else v) for i, p, s, v in ROWS]
    assert_readers_agree(spark, table_path, rows_table(expected))


def test_insert_only_merge_appends_and_removes_nothing(spark, table_path):
    spark_table(spark, table_path, ROWS, files=3,
                cdf=True)
    before = {f["path"] for f in live_files(table_path)}
    src = [(5, 9, "dup", 9), (200, 1, "n1", 1), (201, 1, "n2", 2)]

    row = (table(spark, table_path).merge(source(spark, src), "t.id = s.id")
           .whenNotMatchedInsertAll().execute().collect()[0])

    assert row.num_inserted_rows == 2 and row.num_affected_rows == 2
    actions = file_actions(table_path, 1)
    assert actions["remove"] == [] and actions["cdc"] == []
    assert before <= {f["path"] for f in live_files(table_path)}
    _, _, metrics = operation(table_path, 1)
    assert int(metrics["numTargetFilesRemoved"]) == 0
    assert int(metrics["numTargetRowsInserted"]) == 2
    # the change feed reads the added files as inserts
    assert actual_changes(changes_of(table_path, 1)) == Counter(
        {("insert", (200, 1, "n1", 1)): 1, ("insert", (201, 1, "n2", 2)): 1})
    assert_readers_agree(spark, table_path, rows_table(ROWS + src[1:]))


def test_insert_only_merge_works_on_an_append_only_table(spark, table_path):
    sqlext.write(spark.createDataFrame(ROWS[:3], SPARK_SCHEMA), str(table_path),
                 configuration={"delta.appendOnly": "true"})
    src = source(spark, [(1, 0, "x", 0), (7, 0, "y", 0)])
    table(spark, table_path).merge(src, "t.id = s.id").whenNotMatchedInsertAll().execute()
    assert latest_version(table_path) == 1
    with pytest.raises(UnsupportedOperationError, match="append-only"):
        table(spark, table_path).merge(src, "t.id = s.id").whenMatchedDelete().execute()
    assert latest_version(table_path) == 1
    assert_readers_agree(spark, table_path, rows_table(ROWS[:3] + [(7, 0, "y", 0)]))


def test_several_source_rows_modifying_one_target_row_fail_and_commit_nothing(spark, table_path):
    spark_table(spark, table_path, ROWS, files=2)
    on_disk = files_on_disk(table_path)
    src = source(spark, [(3, 0, "a", 1), (3, 0, "b", 2), (300, 0, "c", 3)])
    merge = (table(spark, table_path).merge(src, "t.id = s.id")
             .whenMatchedUpdate(set={"v": "s.v"}).whenNotMatchedInsertAll())
    with pytest.raises(MultipleSourceRowMatchError,
                       match="multiple source rows matched and attempted to modify the same "
                             "target row"):
        merge.execute()
    assert latest_version(table_path) == 0
    assert files_on_disk(table_path) == on_disk


def test_duplicate_matches_that_do_not_conflict(spark, table_path, merge_mode):
    spark_table(spark, table_path, ROWS[:10], files=1)
    src = [(3, 0, "keep", 1), (3, 0, "use", 500), (4, 0, "x", 1), (4, 0, "y", 2)]
    expected = ROWS[:10]
    # an unconditional DELETE as the only matched clause may match several times (delta-spark)
    row = (table(spark, table_path).merge(source(spark, src), "t.id = s.id")
           .whenMatchedDelete().execute().collect()[0])
    assert row.num_deleted_rows == 2
    assert_same_rows(read_deltalake(table_path), rows_table([r for r in expected
                                                             if r[0] not in (3, 4)]))
    assert actual_changes(changes_of(table_path, 1)) == Counter(
        {("delete", (3, 0, "a", 30)): 1, ("delete", (4, 1, "b", 40)): 1})
    # the one-file fast path wrote, saw the duplicate matches, and deleted what it wrote
    committed = {p for v in (0, 1) for kind in ("add", "cdc")
                 for p in file_actions(table_path, v)[kind]}
    assert files_on_disk(table_path) == committed


def test_unconditional_insert_of_duplicate_source_rows_inserts_all(spark, table_path):
    spark_table(spark, table_path, ROWS[:5], files=1)
    src = [(50, 1, "d", 1), (50, 1, "d", 1), (None, 1, "n", 2), (None, 1, "n", 2), (2, 0, "m", 0)]
    row = (table(spark, table_path).merge(source(spark, src), "t.id = s.id")
           .whenMatchedDelete().whenNotMatchedInsertAll().execute().collect()[0])
    assert (row.num_inserted_rows, row.num_deleted_rows) == (4, 1)
    expected = duckdb_merge(ROWS[:5], src, "MERGE INTO tgt AS t USING src AS s ON t.id = s.id "
                                              "WHEN MATCHED THEN DELETE "
                                              "WHEN NOT MATCHED THEN INSERT *")
    assert_readers_agree(spark, table_path, expected)


def test_schema_evolution_adds_source_columns(spark, table_path):
    spark_table(spark, table_path, ROWS[:6], files=2)
    src = spark.createDataFrame([(1, 5, "u", 11, "one", 1.5), (9, 0, "i", 99, "nine", None)],
                                "id long, p int, s string, v long, note string, w double")
    merge = (table(spark, table_path).merge(src.alias("s"), "t.id = s.id")
             .whenMatchedUpdateAll().whenNotMatchedInsertAll())
    merge.withSchemaEvolution().execute()

    schema = DeltaTable.forPath(spark, str(table_path)).toDF().schema
    assert [(f.name, f.dataType.simpleString()) for f in schema.fields] == [
        ("id", "bigint"), ("p", "int"), ("s", "string"), ("v", "bigint"), ("note", "string"),
        ("w", "double")]
    expected = [(*r, None, None) for r in ROWS[:6] if r[0] != 1] + [
        (1, 5, "u", 11, "one", 1.5), (9, 0, "i", 99, "nine", None)]
    got = assert_readers_agree(spark, table_path)
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == sorted(
        [dict(zip(["id", "p", "s", "v", "note", "w"], r)) for r in expected],
        key=lambda r: r["id"])


def test_merge_into_a_delta_spark_table_with_change_feed(spark, fixture_table):
    path = fixture_table("cdf-table")
    before = read_deltalake(path)
    version = latest_version(path)
    src = spark.createDataFrame([(1, "Renamed", None), (99, "New", None)],
                                "id int, name string, birthday date").alias("s")
    (table(spark, path).merge(src, "t.id = s.id")
     .whenMatchedUpdate(set={"name": "s.name"})
     .whenNotMatchedInsert(values={"id": "s.id", "name": "s.name",
                                   "birthday": "DATE'2024-01-01'"})
     .whenNotMatchedBySourceDelete("t.id > 8").execute())
    old = before.to_pylist()
    expected = ([{**r, "name": "Renamed"} if r["id"] == 1 else r for r in old if r["id"] <= 8]
                + [{"id": 99, "name": "New", "birthday": __import__("datetime").date(2024, 1, 1)}])
    got = assert_readers_agree(spark, path)
    key = lambda r: r["id"]  # noqa: E731
    assert sorted(got.to_pylist(), key=key) == sorted(expected, key=key)
    kinds = Counter(changes_of(path, version + 1).column("_change_type").to_pylist())
    assert kinds == Counter({"update_preimage": 1, "update_postimage": 1, "insert": 1,
                             "delete": sum(1 for r in old if r["id"] > 8)})
