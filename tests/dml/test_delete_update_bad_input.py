"""Bad DELETE / UPDATE input: a SqlextError subclass that names the table and the version, and
the table is left exactly as it was (log, data files, rows)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import write_deltalake

import sqlext
from sqlext import DeltaTable
from sqlext.errors import (AnalysisException, InvariantViolationError, ParseError, SqlextError,
                           UnsupportedOperationError)
from tests.support.dml_cases import spark_table
from tests.support.table_checks import table_state

ROWS = [(i, i % 3, f"s{i}", i * 10) for i in range(12)]


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("bad_input") / "t"
    spark_table(spark, path, ROWS, partition_by=["p"], files=2)
    return path


def _refused(spark, path, error: type, call, *fragments: str) -> None:
    state = table_state(path)
    with pytest.raises(error) as info:
        call(DeltaTable.forPath(spark, str(path)))
    message = str(info.value)
    assert str(path) in message and "version 0" in message, message
    for fragment in fragments:
        assert fragment in message, message
    assert table_state(path) == state


@pytest.mark.parametrize("condition, error, fragment", [
    ("nosuch > 1", AnalysisException, "nosuch"),
    ("v + 1", AnalysisException, "not a boolean"),
    ("id IN (SELECT 1)", UnsupportedOperationError, "subqueries are not supported"),
    ("EXISTS (SELECT 1) AND p = 1", UnsupportedOperationError, "subqueries are not supported"),
    ("count(*) > 1", AnalysisException, "count"),
    ("rand() < 0.5", AnalysisException, "not deterministic"),
    ("v >", ParseError, "v >"),
    (42, SqlextError, "a sqlglot expression or a pyspark Column"),
])
def test_bad_delete_conditions(spark, table, condition, error, fragment):
    _refused(spark, table, error, lambda dt: dt.delete(condition), fragment)


@pytest.mark.parametrize("condition, assignments, error, fragment", [
    ("id = 1", {"nosuch": "1"}, AnalysisException, "nosuch"),
    ("nosuch = 1", {"v": "1"}, AnalysisException, "nosuch"),
    ("id = 1", {"v": "nosuch + 1"}, AnalysisException, "nosuch"),
    ("v", {"v": "1"}, AnalysisException, "not a boolean"),
    ("id = 1", {"v": "array(id)"}, AnalysisException, "cannot assign"),
    ("id IN (SELECT 1)", {"v": "1"}, UnsupportedOperationError, "subqueries are not supported"),
    ("id = 1", {"v": "(SELECT 1)"}, UnsupportedOperationError, "subqueries are not supported"),
    ("id = 1", {"v": "max(v)"}, AnalysisException, "aggregate"),
    ("id = 1", {"v": "1", "V": "2"}, AnalysisException, "more than once"),
    ("id = 1", {"s.x": "1"}, AnalysisException, "does not have"),
    ("id = 1", {}, SqlextError, "non-empty dict"),
    ("id = 1", None, SqlextError, "non-empty dict"),
])
def test_bad_updates(spark, table, condition, assignments, error, fragment):
    _refused(spark, table, error, lambda dt: dt.update(condition, assignments), fragment)


def test_value_that_does_not_fit_its_column_fails_the_update(spark, table):
    # p is INT: v * 10^10 overflows it for every row but id 0 (ANSI store assignment)
    _refused(spark, table, InvariantViolationError,
             lambda dt: dt.update("id < 3", {"p": "v * 10000000000"}), "does not fit column 'p'")


def test_runtime_error_in_a_delete_condition(spark, table):
    # ANSI: 's1' is not an integer; the job fails, nothing is committed
    _refused(spark, table, SqlextError, lambda dt: dt.delete("CAST(s AS INT) = 1"), "DELETE failed")


def test_append_only_table_refuses_delete_and_update(spark, tmp_path):
    path = tmp_path / "append_only"
    sqlext.write(spark.createDataFrame([(1, "a")], "id long, s string"), str(path),
                 configuration={"delta.appendOnly": "true"})
    for call in (lambda dt: dt.delete("id = 1"), lambda dt: dt.update("id = 1", {"s": "'b'"})):
        _refused(spark, path, UnsupportedOperationError, call, "append-only")


def test_null_for_a_not_null_column_fails_the_update(spark, tmp_path):
    path = tmp_path / "not_null"
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.string())])
    write_deltalake(str(path), pa.table({"id": [1, 2, 3], "s": ["a", None, "c"]}, schema=schema))
    _refused(spark, path, InvariantViolationError,
             lambda dt: dt.update("s IS NULL", {"id": "CAST(NULL AS BIGINT)"}),
             "NOT NULL constraint violated for column: id", "'CAST(NULL AS BIGINT)' is NULL")
