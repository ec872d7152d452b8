"""DELETE's three cases, observable from outside: which files are read, which are removed and
added, which change files are written, and what the commit records.

Data files are "spoiled" (overwritten with garbage) in copies of a table to prove that a case
reads no data file: any read of one would fail.
"""

from __future__ import annotations

import json
import shutil

import pytest
from pyspark.sql import functions as F

from sqlext import DeltaTable
from tests.support.dml_cases import (changes_of, duckdb_after, duckdb_select, expected_changes,
                               file_actions, latest_version, live_files, operation, read_deltalake,
                               spark_table, spoil_data_files)
from tests.support.table_checks import assert_readers_agree, table_state
from tests.support import assert_same_rows

ROWS = [(i, None if i % 7 == 0 else i % 3, None if i % 5 == 0 else f"s{i % 4}",
         None if i % 6 == 0 else i * 10) for i in range(40)]
TIMES = ("executionTimeMs", "scanTimeMs", "rewriteTimeMs")


@pytest.fixture
def partitioned(spark, tmp_path):
    """Two copies of one table partitioned by p (nulls included), 2 files per partition: the
    first intact, the second with every data file spoiled."""
    intact = tmp_path / "intact"
    spark_table(spark, intact, ROWS, partition_by=["p"], files=2)
    spoiled = tmp_path / "spoiled"
    shutil.copytree(intact, spoiled)
    assert spoil_data_files(spoiled) == len(live_files(spoiled))
    return intact, spoiled


def test_delete_without_condition_removes_every_file_reading_none(spark, partitioned):
    intact, spoiled = partitioned
    before = {f["path"] for f in live_files(intact)}
    for path in (intact, spoiled):
        DeltaTable.forPath(spark, str(path)).delete()
        assert latest_version(path) == 1
        assert file_actions(path, 1) == {"remove": sorted(before), "add": [], "cdc": []}
        op, params, metrics = operation(path, 1)
        assert (op, params) == ("DELETE", {"predicate": "[]"})
        assert {k: metrics[k] for k in ("numRemovedFiles", "numDeletedRows", "numAddedFiles",
                                        "numCopiedRows", "numAddedChangeFiles")} == {
            "numRemovedFiles": str(len(before)), "numDeletedRows": str(len(ROWS)),
            "numAddedFiles": "0", "numCopiedRows": "0", "numAddedChangeFiles": "0"}
        assert set(TIMES) <= set(metrics)
    assert not (intact / "_change_data").exists()
    assert read_deltalake(intact).num_rows == 0
    cdf = changes_of(intact, 1)      # derived from the removes
    assert set(cdf.column("_change_type").to_pylist()) == {"delete"}
    assert_same_rows(cdf.drop_columns(["_change_type"]), read_deltalake(intact, 0))


@pytest.mark.parametrize("condition, sql, doomed", [
    ("p = 1", "p = 1", lambda p: p == "1"),
    (lambda: F.col("p").isNull() | (F.col("p") == 2), "p IS NULL OR p = 2",
     lambda p: p in (None, "2")),
])
def test_partition_delete_removes_matching_files_reading_none(spark, partitioned, condition, sql,
                                                              doomed):
    intact, spoiled = partitioned
    files = live_files(intact)
    removed = sorted(f["path"] for f in files if doomed(f["partitionValues"]["p"]))
    assert removed and len(removed) < len(files)
    before = read_deltalake(intact)
    expected = duckdb_after(before, f"DELETE FROM {{t}} WHERE {sql}")
    for path in (intact, spoiled):
        DeltaTable.forPath(spark, str(path)).delete(condition if isinstance(condition, str)
                                                    else condition())
        assert file_actions(path, 1) == {"remove": removed, "add": [], "cdc": []}
        _, _, metrics = operation(path, 1)
        assert metrics["numRemovedFiles"] == str(len(removed))
        assert metrics["numDeletedRows"] == str(before.num_rows - expected.num_rows)
    assert_readers_agree(spark, intact, expected)
    cdf = changes_of(intact, 1)
    assert set(cdf.column("_change_type").to_pylist()) == {"delete"}
    assert_same_rows(cdf.drop_columns(["_change_type"]),
                     duckdb_select(before, f"SELECT * FROM {{t}} WHERE {sql}"))


@pytest.fixture
def ranged(spark, tmp_path):
    """An unpartitioned table of ids 0..39 in 4 files of 10 consecutive ids each."""
    path = tmp_path / "ranged"
    spark_table(spark, path, ROWS, files=4)
    files = sorted(live_files(path), key=lambda f: f["stats"]["minValues"]["id"])
    assert [(f["stats"]["minValues"]["id"], f["stats"]["maxValues"]["id"]) for f in files] == [
        (0, 9), (10, 19), (20, 29), (30, 39)]
    return path, files


def test_data_delete_rewrites_only_files_with_matching_rows(spark, ranged):
    path, files = ranged
    # statistics leave files 0 and 1 as candidates (id < 15); only file 0 holds a match (id 5)
    for f in files[2:]:
        (path / f["path"]).write_bytes(b"pruned: never read")
    DeltaTable.forPath(spark, str(path)).delete("id % 10 = 5 AND id < 15")
    actions = file_actions(path, 1)
    assert actions["remove"] == [files[0]["path"]]
    assert len(actions["add"]) == 1 and actions["cdc"]
    assert all(c.startswith("_change_data/") for c in actions["cdc"])
    op, params, metrics = operation(path, 1)
    assert json.loads(params["predicate"]) == ["(((id % CAST(10 AS BIGINT)) = CAST(5 AS BIGINT)) "
                                               "AND (id < CAST(15 AS BIGINT)))"]
    assert {k: metrics[k] for k in ("numRemovedFiles", "numAddedFiles", "numDeletedRows",
                                    "numCopiedRows", "numFilesAfterSkipping")} == {
        "numRemovedFiles": "1", "numAddedFiles": "1", "numDeletedRows": "1",
        "numCopiedRows": "9", "numFilesAfterSkipping": "2"}
    assert metrics["numAddedChangeFiles"] == str(len(actions["cdc"]))
    cdf = changes_of(path, 1)            # read from the change files alone
    assert cdf.column("_change_type").to_pylist() == ["delete"]
    assert cdf.column("id").to_pylist() == [5]
    assert {f["path"] for f in live_files(path)} == (
        {f["path"] for f in files[1:]} | set(actions["add"]))


def test_data_delete_keeps_null_rows_and_matches_duckdb(spark, ranged):
    path, _ = ranged
    before = read_deltalake(path)
    DeltaTable.forPath(spark, str(path)).delete(F.col("v") > 200)
    ours = assert_readers_agree(spark, path, duckdb_after(before, "DELETE FROM {t} WHERE v > 200"))
    assert ours.column("v").null_count == before.column("v").null_count > 0
    assert_same_rows(changes_of(path, 1), expected_changes(before, ours, "v > 200", deleted=True))


@pytest.mark.parametrize("condition", ["v > 100000", "p = 99", "s = 'none'"])
def test_delete_matching_nothing_commits_nothing(spark, partitioned, condition):
    intact, _ = partitioned
    DeltaTable.forPath(spark, str(intact)).delete(condition)
    assert latest_version(intact) == 0


def test_delete_with_alias_and_column_condition(spark, ranged):
    path, _ = ranged
    before = read_deltalake(path)
    DeltaTable.forPath(spark, str(path)).alias("t").delete(F.col("t.id") >= 35)
    assert_readers_agree(spark, path, duckdb_after(before, "DELETE FROM {t} WHERE id >= 35"))
    history = DeltaTable.forPath(spark, str(path)).history(1).collect()[0]
    assert history.operation == "DELETE"
    assert history.operationMetrics["numDeletedRows"] == "5"
    assert json.loads(history.operationParameters["predicate"]) == ["(t.id >= CAST(35 AS BIGINT))"]


@pytest.mark.parametrize("statement", ["delete", "update"])
def test_one_candidate_without_matching_rows_leaves_no_trace(spark, ranged, statement):
    # statistics leave one candidate (ids 0..9, v 10..90); no row has id 5 and v 51. A single
    # candidate is rewritten before its matches are known: the new files must be discarded
    path, _ = ranged
    state = table_state(path)
    dt = DeltaTable.forPath(spark, str(path))
    if statement == "delete":
        dt.delete("id = 5 AND v = 51")
    else:
        dt.update("id = 5 AND v = 51", {"v": "0"})
    assert table_state(path) == state
