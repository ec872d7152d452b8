"""Bad MERGE input: a clear SqlextError subclass naming table and version, and the table unchanged
(no commit, no data file left in the table)."""

from __future__ import annotations

import pytest

import sqlext
from sqlext import DeltaTable
from sqlext.errors import AnalysisException, InvariantViolationError, ParseError, SqlextError
from tests.support.dml_cases import SPARK_SCHEMA, latest_version, rows_table, spark_table
from tests.support.table_checks import assert_readers_agree

ROWS = [(i, i % 2, "s", i) for i in range(6)]
SRC = [(1, 0, "x", 10), (9, 1, "y", 90)]


def _builder(spark, path, aliased=True):
    target = DeltaTable.forPath(spark, str(path))
    src = spark.createDataFrame(SRC, SPARK_SCHEMA)
    return (target.alias("t"), src.alias("s")) if aliased else (target, src)


CASES = {
    "unknown column in ON": (
        AnalysisException, "nope",
        lambda t, s: t.merge(s, "t.id = s.nope").whenMatchedDelete()),
    "unknown column in a condition": (
        AnalysisException, "nope",
        lambda t, s: t.merge(s, "t.id = s.id").whenMatchedDelete("t.nope > 1")),
    "unknown target column in SET": (
        AnalysisException, "nope",
        lambda t, s: t.merge(s, "t.id = s.id").whenMatchedUpdate(set={"nope": "s.v"})),
    "unknown column in a value": (
        AnalysisException, "nope",
        lambda t, s: t.merge(s, "t.id = s.id").whenMatchedUpdate(set={"v": "s.nope"})),
    "target column in an INSERT value": (
        AnalysisException, "v",
        lambda t, s: t.merge(s, "t.id = s.id").whenNotMatchedInsert(
            values={"id": "s.id", "v": "t.v"})),
    "source column in a NOT MATCHED BY SOURCE value": (
        AnalysisException, "v",
        lambda t, s: t.merge(s, "t.id = s.id").whenNotMatchedBySourceUpdate(set={"v": "s.v"})),
    "non-boolean ON": (
        AnalysisException, "boolean|BOOLEAN",
        lambda t, s: t.merge(s, "t.id + s.id").whenMatchedDelete()),
    "non-boolean clause condition": (
        AnalysisException, "boolean|BOOLEAN",
        lambda t, s: t.merge(s, "t.id = s.id").whenMatchedDelete("s.v")),
    "condition missing on a clause that is not the last of its kind": (
        AnalysisException, "only the last one may omit its condition",
        lambda t, s: t.merge(s, "t.id = s.id").whenMatchedDelete()
        .whenMatchedUpdate("s.v > 1", {"v": "s.v"})),
    "array value for a bigint column (no ANSI cast)": (
        AnalysisException, "cannot assign",
        lambda t, s: t.merge(s, "t.id = s.id").whenMatchedUpdate(set={"v": "array(s.v)"})),
    "no clause": (
        AnalysisException, "at least one WHEN clause",
        lambda t, s: t.merge(s, "t.id = s.id")),
    "syntax error in a condition": (
        (ParseError, AnalysisException), "(?i)syntax error",
        lambda t, s: t.merge(s, "t.id = = s.id").whenMatchedDelete()),
}


@pytest.fixture(scope="module")
def shared_table(spark, tmp_path_factory):
    """One table for the cases that must leave it unchanged."""
    path = tmp_path_factory.mktemp("merge_errors") / "t"
    spark_table(spark, path, ROWS, files=1)
    return path


def _files(path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_merge_is_refused_and_the_table_is_unchanged(spark, shared_table, case):
    table_path = shared_table
    on_disk = _files(table_path)
    error, message, build = CASES[case]
    target, src = _builder(spark, table_path)
    with pytest.raises(error, match=message) as raised:
        build(target, src).execute()
    assert isinstance(raised.value, SqlextError)
    assert f"table {table_path}" in str(raised.value)
    assert latest_version(table_path) == 0
    assert _files(table_path) == on_disk


def test_the_shared_table_is_intact(spark, shared_table):
    assert_readers_agree(spark, shared_table, rows_table(ROWS))


def test_ambiguous_column_reference(spark, shared_table):
    table_path = shared_table
    target, src = _builder(spark, table_path, aliased=False)
    with pytest.raises(AnalysisException, match="(?i)ambiguous") as raised:
        target.merge(src, "id = id").whenMatchedDelete().execute()
    assert "version 0" in str(raised.value)
    assert latest_version(table_path) == 0


def test_value_overflowing_its_column_fails_the_job_and_commits_nothing(spark, table_path):
    spark_table(spark, table_path, ROWS, files=1)
    on_disk = sorted(p.name for p in table_path.rglob("*.parquet"))
    target, src = _builder(spark, table_path)
    with pytest.raises(InvariantViolationError, match="does not fit column 'p'"):
        (target.merge(src, "t.id = s.id")
         .whenMatchedUpdate(set={"p": "s.v * 1000000000000"}).execute())
    assert latest_version(table_path) == 0
    assert sorted(p.name for p in table_path.rglob("*.parquet")) == on_disk


def test_wrong_number_of_insert_values(spark, shared_table):
    statement = (f"MERGE INTO delta.`{shared_table}` AS t USING (SELECT 1 AS id, 2 AS v) AS s "
                 "ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id)")
    with pytest.raises(AnalysisException, match="2 column.* but 1 value"):
        sqlext.sql(spark, statement)
    assert latest_version(shared_table) == 0
