"""SET assignments of UPDATE and MERGE with delta-spark's meaning, from its suites (UpdateSuiteBase
"nested data support", "nested data resolution order", "nested data - negative case";
MergeIntoSuiteBase nested data and casts), through ``sqlext.sql`` and ``DeltaTable``:

- one nested struct field can be assigned (``a.c.d = ...``); the struct around it is rebuilt;
- a struct value is matched to the column's struct type by field name, not position;
- values are cast as Spark's ANSI store assignment (delta-spark's default) casts: ``'-1'`` into an
  int, ``'false'`` into a boolean; a value the cast rejects fails the statement, which then
  commits nothing.
"""

from __future__ import annotations

import json
import uuid

import pytest

import sqlext
from sqlext import DeltaTable
from sqlext.errors import AnalysisException, InvariantViolationError, SqlextError
from tests.support.table_checks import latest_version

NESTED = ['{"a": {"c": {"d": "random", "e": "str"}, "g": 1}, "z": 10}',
          '{"a": {"c": {"d": "random2", "e": "str2"}, "g": 2}, "z": 20}']
NESTED_SCHEMA = "a struct<c: struct<d: string, e: string>, g: bigint>, z bigint"


def _json_table(spark, path, lines: list[str], schema: str = NESTED_SCHEMA) -> str:
    df = spark.read.schema(schema).json(spark.sparkContext.parallelize(lines))
    sqlext.write(df, str(path))
    return str(path)


def _rows(spark, path) -> list[dict]:
    """The table's rows as dicts, sorted."""
    rows = [r.asDict(recursive=True) for r in sqlext.read(spark, str(path)).collect()]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def _expected(lines: list[str]) -> list[dict]:
    return sorted((json.loads(line) for line in lines),
                  key=lambda r: json.dumps(r, sort_keys=True))


def test_update_nested_fields(spark, tmp_path):
    path = _json_table(spark, tmp_path / "t", NESTED)
    sqlext.sql(spark, f"UPDATE delta.`{path}` SET a.c.d = 'RANDOM' WHERE z = 10")
    assert _rows(spark, path) == _expected([
        '{"a": {"c": {"d": "RANDOM", "e": "str"}, "g": 1}, "z": 10}', NESTED[1]])
    # several fields at different levels, through the Python API
    DeltaTable.forPath(spark, path).update(
        "z = 20", {"a.c.d": "'RANDOM2'", "a.c.e": "'STR2'", "a.g": "-2", "z": "-20"})
    assert _rows(spark, path) == _expected([
        '{"a": {"c": {"d": "RANDOM", "e": "str"}, "g": 1}, "z": 10}',
        '{"a": {"c": {"d": "RANDOM2", "e": "STR2"}, "g": -2}, "z": -20}'])
    # a struct field set from a named_struct, qualified by the table's alias
    sqlext.sql(spark, f"UPDATE delta.`{path}` t SET t.a.c = named_struct('d', 'x', 'e', 'y') "
                      "WHERE a.g = -2")
    assert _rows(spark, path) == _expected([
        '{"a": {"c": {"d": "RANDOM", "e": "str"}, "g": 1}, "z": 10}',
        '{"a": {"c": {"d": "x", "e": "y"}, "g": -2}, "z": -20}'])
    assert latest_version(path) == 3


def test_update_nested_field_of_a_null_struct_builds_the_struct(spark, tmp_path):
    # delta-spark rebuilds the struct with named_struct: the other fields of a NULL struct are NULL
    path = _json_table(spark, tmp_path / "t", ['{"a": null, "z": 30}'])
    sqlext.sql(spark, f"UPDATE delta.`{path}` SET a.g = 5")
    assert _rows(spark, path) == [{"a": {"c": None, "g": 5}, "z": 30}]


def test_struct_values_are_matched_by_field_name(spark, tmp_path):
    # "nested data resolution order": by name, at every level
    path = _json_table(spark, tmp_path / "t", NESTED)
    sqlext.sql(spark, f"UPDATE delta.`{path}` SET a = named_struct('g', 20, 'c', "
                      "named_struct('e', 'str0', 'd', 'randomNew')) WHERE a.g = 2")
    DeltaTable.forPath(spark, path).update(
        "a.g = 1", {"a.c": "named_struct('e', 'str1', 'd', 'random1')"})
    assert _rows(spark, path) == _expected([
        '{"a": {"c": {"d": "random1", "e": "str1"}, "g": 1}, "z": 10}',
        '{"a": {"c": {"d": "randomNew", "e": "str0"}, "g": 20}, "z": 20}'])


@pytest.mark.parametrize("assignment, fragment", [
    ("a.c = 'RANDOM2'", "cannot assign"),                       # string into a struct
    ("a.c.z = 'RANDOM2'", "does not have"),                      # no such field
    ("a.c = named_struct('d', 'rand', 'e', 'str'), a.c.d = 'RANDOM2'", "one inside the other"),
    ("a = named_struct('c', named_struct('d', 'rand', 'e', 'str')), a.c.d = 'R'",
     "one inside the other"),
    ("z.x = 1", "does not have"),                                # not a struct
    ("a = named_struct('g', 1)", "matched by name"),             # a field missing
    ("a = named_struct('g', 1, 'c', named_struct('d', 'x', 'e', 'y'), 'q', 2)", "matched by name"),
])
def test_bad_nested_assignments_are_refused(spark, tmp_path, assignment, fragment):
    path = _json_table(spark, tmp_path / "t", NESTED)
    with pytest.raises(AnalysisException, match=fragment) as raised:
        sqlext.sql(spark, f"UPDATE delta.`{path}` SET {assignment} WHERE z = 10")
    assert f"table {path}, version 0" in str(raised.value)
    assert latest_version(path) == 0


def test_merge_assigns_nested_fields_and_matches_structs_by_name(spark, tmp_path):
    # MergeIntoSuiteBase's nested data, with one field assigned and a reordered struct
    schema = "key struct<x: string, y: bigint>, value struct<a: bigint, b: string>"
    path = _json_table(spark, tmp_path / "t", [
        '{"key": {"x": "X1", "y": 1}, "value": {"a": 1, "b": "B1"}}',
        '{"key": {"x": "X2", "y": 2}, "value": {"a": 2, "b": "B2"}}'], schema)
    view = f"src_{uuid.uuid4().hex[:8]}"
    spark.read.schema(schema).json(spark.sparkContext.parallelize([
        '{"key": {"x": "X1", "y": 1}, "value": {"a": 100, "b": "B100"}}',
        '{"key": {"x": "X2", "y": 2}, "value": {"a": 200, "b": "B200"}}',
        '{"key": {"x": "X3", "y": 3}, "value": {"a": 300, "b": "B300"}}'])
    ).createOrReplaceTempView(view)
    sqlext.sql(spark, f"MERGE INTO delta.`{path}` t USING {view} s ON s.key = t.key "
                      "WHEN MATCHED AND s.key.y = 1 THEN UPDATE SET value.b = s.value.b "
                      "WHEN NOT MATCHED THEN INSERT (key, value) VALUES "
                      "(s.key, named_struct('b', s.value.b, 'a', s.value.a))")
    assert _rows(spark, path) == _expected([
        '{"key": {"x": "X1", "y": 1}, "value": {"a": 1, "b": "B100"}}',
        '{"key": {"x": "X2", "y": 2}, "value": {"a": 2, "b": "B2"}}',
        '{"key": {"x": "X3", "y": 3}, "value": {"a": 300, "b": "B300"}}'])
    # the builder, without a target alias
    source = spark.table(view).selectExpr("key AS k", "value AS v").alias("s")
    (DeltaTable.forPath(spark, path).merge(source, "key = s.k AND s.k.y = 2")
     .whenMatchedUpdate(set={"value.a": "s.v.a", "key.x": "'x2'"}).execute())
    assert _rows(spark, path) == _expected([
        '{"key": {"x": "X1", "y": 1}, "value": {"a": 1, "b": "B100"}}',
        '{"key": {"x": "x2", "y": 2}, "value": {"a": 200, "b": "B2"}}',
        '{"key": {"x": "X3", "y": 3}, "value": {"a": 300, "b": "B300"}}'])
    assert latest_version(path) == 2


def test_store_assignment_casts_strings(spark, tmp_path):
    # UpdateSuiteBase: "set an integer nested field with a string that can be casted into an
    # integer"; and a boolean from 'false'
    path = _json_table(spark, tmp_path / "t", NESTED)
    sqlext.sql(spark, f"UPDATE delta.`{path}` SET a.g = '-1', z = '30' WHERE z = 10")
    assert _rows(spark, path) == _expected([
        '{"a": {"c": {"d": "random", "e": "str"}, "g": -1}, "z": 30}', NESTED[1]])
    flags = tmp_path / "flags"
    sqlext.write(spark.createDataFrame([(1, True, 1), (2, True, 2)], "id int, f boolean, n int"),
                 str(flags))
    DeltaTable.forPath(spark, str(flags)).update("id = 1", {"f": "'false'", "n": "' 7 '"})
    view = f"src_{uuid.uuid4().hex[:8]}"
    spark.createDataFrame([(2, "false", "5")], "id int, f string, n string") \
        .createOrReplaceTempView(view)
    sqlext.sql(spark, f"MERGE INTO delta.`{flags}` t USING {view} s ON s.id = t.id "
                      "WHEN MATCHED THEN UPDATE SET f = s.f, n = s.n")
    assert sorted(tuple(r) for r in sqlext.read(spark, str(flags)).collect()) == [
        (1, False, 7), (2, False, 5)]


@pytest.mark.parametrize("statement", [
    "UPDATE delta.`{path}` SET n = 'abc'",
    "UPDATE delta.`{path}` SET f = 'maybe' WHERE id = 2",
    "MERGE INTO delta.`{path}` t USING (SELECT 1 AS id, 'x1' AS n) s ON s.id = t.id "
    "WHEN MATCHED THEN UPDATE SET n = s.n",
])
def test_values_the_ansi_cast_rejects_fail_and_commit_nothing(spark, tmp_path, statement):
    path = tmp_path / "t"
    sqlext.write(spark.createDataFrame([(1, True, 1), (2, True, 2)], "id int, f boolean, n int"),
                 str(path))
    with pytest.raises(InvariantViolationError, match="ANSI cast fails") as raised:
        sqlext.sql(spark, statement.format(path=path))
    assert isinstance(raised.value, SqlextError)
    assert latest_version(path) == 0
    assert sorted(tuple(r) for r in sqlext.read(spark, str(path)).collect()) == [
        (1, True, 1), (2, True, 2)]


def test_window_aggregate_and_generator_values_are_refused_in_update(spark, tmp_path):
    # UpdateSuiteBase's testUnsupportedExpression (row_number, max) and a generator in SET
    path = tmp_path / "t"
    sqlext.write(spark.createDataFrame([(1, 2, 3)], "a int, b int, c int"), str(path))
    for assignment in ("b = row_number() over (order by c)", "b = max(c)",
                       "b = explode(array(1, 2))"):
        with pytest.raises(AnalysisException, match="window functions, aggregate functions"):
            sqlext.sql(spark, f"UPDATE delta.`{path}` SET {assignment} WHERE a = 1")
    for where in ("row_number() over (order by c) > 1", "b > max(c)"):
        with pytest.raises(AnalysisException):
            sqlext.sql(spark, f"UPDATE delta.`{path}` SET b = 4 WHERE {where}")
    with pytest.raises(AnalysisException, match="window functions"):
        DeltaTable.forPath(spark, str(path)).update("a = 1", {"b": "rank() over (order by c)"})
    assert latest_version(path) == 0
    assert [tuple(r) for r in sqlext.read(spark, str(path)).collect()] == [(1, 2, 3)]
