"""``sqlext.read(filter=...)``: files pruned by partition values and min/max statistics before
Spark reads them (observed through ``DataFrame.inputFiles()``), and the filter applied to rows."""

from __future__ import annotations

import json
from urllib.parse import unquote

import pytest

import sqlext
from sqlext.errors import AnalysisException
from tests.support.spark import spark_conf
from tests.support.table_checks import actions_of
from tests.support import assert_same_rows, duckdb_query, duckdb_table, read_deltalake


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    """Partitioned by p (a, b); within each partition two files with disjoint id ranges:
    a: ids 0-9 and 10-19, b: ids 20-29 and 30-39 (plus a null-score row in the last file)."""
    path = tmp_path_factory.mktemp("filter") / "table"
    rows = [(i, "a" if i < 20 else "b", float(i) if i != 39 else None) for i in range(40)]
    rdd = spark.sparkContext.parallelize(rows, 4)
    sqlext.write(spark.createDataFrame(rdd, "id int, p string, score double"), str(path),
                 partitionBy=["p"])
    files = {}
    for add in actions_of(path, 0, "add"):
        stats = json.loads(add["stats"])
        files[stats["minValues"]["id"]] = str(path / unquote(add["path"]))
    assert sorted(files) == [0, 10, 20, 30]
    return path, files


def _input_files(df) -> set[str]:
    return {unquote(f.removeprefix("file://")) for f in df.inputFiles()}


@pytest.mark.parametrize("condition, file_keys", [
    ("p = 'a'", {0, 10}),
    ("id >= 25", {20, 30}),
    ("p = 'a' AND id < 5", {0}),
    ("id = 15 OR id = 31", {10, 30}),
    ("id BETWEEN 12 AND 22", {10, 20}),
    ("p IN ('b') AND id > 100", set()),
    ("score IS NULL", {30}),
    ("p = 'a' OR id > 35", {0, 10, 30}),
    ("upper(p) = 'A'", {0, 10, 20, 30}),          # not prunable: every file, rows still filtered
])
def test_filter_prunes_files_and_filters_rows(spark, table, condition, file_keys):
    path, files = table
    with spark_conf(spark, {"spark.sqlext.execution.local": "off"}):     # the file scan, whose input files show the pruning
        df = sqlext.read(spark, str(path), filter=condition)
    assert _input_files(df) == {files[k] for k in file_keys}
    all_rows = duckdb_table("filter_all", read_deltalake(path))
    expected = duckdb_query(f"SELECT * FROM {all_rows} WHERE {condition}")
    assert_same_rows(df, expected)


def test_filter_with_time_travel(spark, table):
    path, _ = table
    df = sqlext.read(spark, str(path), versionAsOf=0, filter="id < 3")
    assert sorted(r.id for r in df.collect()) == [0, 1, 2]


def test_invalid_filter_is_an_analysis_error(spark, table):
    path, _ = table
    with pytest.raises(AnalysisException, match="no_such_column"):
        sqlext.read(spark, str(path), filter="no_such_column = 1")
