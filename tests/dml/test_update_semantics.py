"""UPDATE: which files are rewritten, what the rows and the change feed hold afterwards (DuckDB
runs the same UPDATE on the same rows for the expected result), casting, partition moves."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql import functions as F

from sqlext import DeltaTable
from tests.support.dml_cases import (changes_of, duckdb_after, expected_changes, file_actions,
                               latest_version, live_files, operation, read_deltalake, spark_table)
from tests.support.table_checks import assert_readers_agree
from tests.support import assert_same_rows

ROWS = [(i, None if i % 7 == 0 else i % 3, None if i % 5 == 0 else f"s{i % 4}",
         None if i % 6 == 0 else i * 10) for i in range(40)]


def check_update(spark, path, condition_sql: str, set_sql: dict[str, str], condition=...,
                 set_values=None) -> tuple[pa.Table, pa.Table]:
    """Run the UPDATE with sqlext and with DuckDB; the rows (three readers) and deltalake's
    change feed of the new version must be what DuckDB says. ``condition`` / ``set_values``
    (default: the SQL texts) are what sqlext is given. Returns (before, after)."""
    before = read_deltalake(path)
    version = latest_version(path)
    DeltaTable.forPath(spark, str(path)).update(
        condition_sql if condition is ... else condition,
        set_values if set_values is not None else set_sql)
    assignments = ", ".join(f"{k} = {v}" for k, v in set_sql.items())
    expected = duckdb_after(before, f"UPDATE {{t}} SET {assignments} WHERE {condition_sql}")
    after = assert_readers_agree(spark, path, expected)
    assert latest_version(path) == version + 1
    assert_same_rows(changes_of(path, version + 1),
                     expected_changes(before, after, condition_sql, deleted=False),
                     sort_by=["id", "_change_type"])
    return before, after


@pytest.fixture
def ranged(spark, tmp_path):
    """An unpartitioned table of ids 0..39 in 4 files of 10 consecutive ids each."""
    path = tmp_path / "ranged"
    spark_table(spark, path, ROWS, files=4)
    return path, sorted(live_files(path), key=lambda f: f["stats"]["minValues"]["id"])


@pytest.fixture
def partitioned(spark, tmp_path):
    path = tmp_path / "partitioned"
    spark_table(spark, path, ROWS, partition_by=["p"], files=2)
    return path


def test_update_rewrites_only_files_with_matching_rows(spark, ranged):
    path, files = ranged
    # statistics leave the files of ids 10..29 as candidates; only 20..29 holds a match
    check_update(spark, path, "id > 15 AND id < 30 AND id % 10 = 5", {"v": "v + 1"})
    actions = file_actions(path, 1)
    assert actions["remove"] == [files[2]["path"]]
    assert len(actions["add"]) == 1 and actions["cdc"]
    op, params, metrics = operation(path, 1)
    assert op == "UPDATE"
    assert json.loads(params["predicate"]) == [
        "(((id > CAST(15 AS BIGINT)) AND (id < CAST(30 AS BIGINT))) AND "
        "((id % CAST(10 AS BIGINT)) = CAST(5 AS BIGINT)))"]
    assert {k: metrics[k] for k in ("numUpdatedRows", "numCopiedRows", "numRemovedFiles",
                                    "numAddedFiles", "numFilesAfterSkipping")} == {
        "numUpdatedRows": "1", "numCopiedRows": "9", "numRemovedFiles": "1",
        "numAddedFiles": "1", "numFilesAfterSkipping": "2"}
    assert metrics["numAddedChangeFiles"] == str(len(actions["cdc"]))
    assert {"executionTimeMs", "scanTimeMs", "rewriteTimeMs"} <= set(metrics)


def test_set_expressions_see_the_old_row_and_are_cast(spark, ranged):
    path, _ = ranged
    # v <- id, s <- old v (bigint -> string), and NULL-condition rows (v IS NULL) keep theirs
    check_update(spark, path, "v < 150", {"v": "id * 2", "s": "v"})


def test_update_without_condition_updates_every_row(spark, ranged):
    path, files = ranged
    check_update(spark, path, "TRUE", {"s": "s || '!'"}, condition=None)
    assert file_actions(path, 1)["remove"] == sorted(f["path"] for f in files)
    _, params, metrics = operation(path, 1)
    assert params["predicate"] == "[]"
    assert (metrics["numUpdatedRows"], metrics["numCopiedRows"]) == ("40", "0")


def test_partition_update_rewrites_whole_partitions(spark, partitioned):
    files = live_files(partitioned)
    check_update(spark, partitioned, "p = 1", {"v": "-v"}, condition=F.col("p") == 1)
    assert file_actions(partitioned, 1)["remove"] == sorted(
        f["path"] for f in files if f["partitionValues"]["p"] == "1")
    _, _, metrics = operation(partitioned, 1)
    assert metrics["numCopiedRows"] == "0"
    assert metrics["numUpdatedRows"] == str(sum(1 for r in ROWS if r[1] == 1))


def test_setting_the_partition_column_moves_rows(spark, partitioned):
    # p is INT and v BIGINT: the value is cast as Spark's store assignment does
    check_update(spark, partitioned, "id < 12 AND v IS NOT NULL", {"p": "v"},
                 set_values={"p": F.col("v")})
    moved = {f["partitionValues"]["p"] for f in live_files(partitioned)}
    assert {"10", "20", "110"} <= moved


def test_non_deterministic_values_agree_between_data_and_change_feed(spark, ranged):
    path, _ = ranged
    DeltaTable.forPath(spark, str(path)).update("id >= 30", {"v": "CAST(rand() * 1e9 AS BIGINT)"})
    after = read_deltalake(path)
    post = changes_of(path, 1)
    post = post.filter(pc.equal(post.column("_change_type"), "update_postimage"))
    assert post.num_rows == 10
    assert_same_rows(post.drop_columns(["_change_type"]),
                     after.filter(pc.greater_equal(after.column("id"), 30)))


def test_update_matching_nothing_commits_nothing(spark, ranged):
    path, _ = ranged
    DeltaTable.forPath(spark, str(path)).update("v > 100000 OR v = NULL", {"v": "0"})
    assert latest_version(path) == 0
