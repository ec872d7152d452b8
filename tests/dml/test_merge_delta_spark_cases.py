"""MERGE outcomes taken from delta-spark's own suites (MergeIntoSuiteBase,
MergeIntoNotMatchedBySourceSuite), through ``sqlext.sql`` and the ``DeltaTable`` builder:

- several source rows matching one target row are an error whatever the clause conditions say;
  one unconditional WHEN MATCHED DELETE is the only exception (``testMergeErrorOnMultipleMatches``
  and the "with multiple matches" ``testExtendedMerge`` cases);
- window functions, aggregates and generators in assignments are refused at analysis;
- ``UPDATE SET *`` / ``INSERT *`` ignore source columns the target lacks without schema evolution
  ("star syntax - multiples columns and extra columns in source");
- a MERGE that changes nothing commits nothing (as delta-spark 4.4 does, measured).
"""

from __future__ import annotations

import uuid

import pytest

import sqlext
from sqlext import DeltaTable
from sqlext.errors import AnalysisException, MultipleSourceRowMatchError
from tests.support.table_checks import latest_version
from tests.support import read_deltalake

KV = "key int, value int"


def _kv_table(spark, path, rows) -> str:
    sqlext.write(spark.createDataFrame(rows, KV), str(path))
    return str(path)


def _rows(path) -> list[tuple]:
    return sorted(tuple(r.values()) for r in read_deltalake(path).to_pylist())


def _view(spark, rows, schema: str = KV) -> str:
    name = f"src_{uuid.uuid4().hex[:8]}"
    spark.createDataFrame(rows, schema).createOrReplaceTempView(name)
    return name


# (name, source, target, clauses) of delta-spark's testMergeErrorOnMultipleMatches, plus a
# MERGE whose only clause is NOT MATCHED BY SOURCE (delta-spark's findTouchedFiles counts the
# matches of every target row and allows duplicates only for one unconditional matched DELETE)
MULTIPLE_MATCHES = [
    ("only update", [(0, 0), (1, 10), (1, 11), (2, 20)],
     "WHEN MATCHED THEN UPDATE SET key = s.key, value = s.value"),
    ("only conditional update", [(0, 0), (1, 10), (1, 11), (2, 20)],
     "WHEN MATCHED AND s.value = 10 THEN UPDATE SET key = s.key, value = s.value"),
    ("only conditional delete", [(0, 0), (1, 10), (1, 100), (2, 20)],
     "WHEN MATCHED AND s.value = 10 THEN DELETE"),
    ("conditional update + delete", [(0, 0), (1, 10), (2, 20), (2, 200)],
     "WHEN MATCHED AND s.value = 20 THEN UPDATE SET key = s.key, value = s.value "
     "WHEN MATCHED THEN DELETE"),
    ("conditional update + conditional delete", [(0, 0), (1, 10), (1, 100), (2, 20), (2, 200)],
     "WHEN MATCHED AND s.value = 20 THEN UPDATE SET key = s.key, value = s.value "
     "WHEN MATCHED AND s.value = 10 THEN DELETE"),
    ("conditional update + conditional delete + conditional insert",
     [(0, 0), (1, 10), (1, 100), (2, 20), (2, 200)],
     "WHEN MATCHED AND s.value = 20 THEN UPDATE SET key = s.key, value = s.value "
     "WHEN MATCHED AND s.value = 10 THEN DELETE "
     "WHEN NOT MATCHED AND s.value = 0 THEN INSERT (key, value) VALUES (s.key, s.value)"),
    ("not matched by source delete only", [(1, 10), (1, 11)],
     "WHEN NOT MATCHED BY SOURCE THEN DELETE"),
]


def test_several_source_rows_for_one_target_row_fail_whatever_the_conditions(spark, tmp_path):
    path = _kv_table(spark, tmp_path / "t", [(1, 1), (2, 2)])
    for name, source, clauses in MULTIPLE_MATCHES:
        view = _view(spark, source)
        with pytest.raises(MultipleSourceRowMatchError, match="multiple source rows matched") \
                as raised:
            sqlext.sql(spark, f"MERGE INTO delta.`{path}` t USING {view} s ON s.key = t.key "
                              f"{clauses}")
        assert f"table {path}" in str(raised.value), name
        assert latest_version(path) == 0, name
    assert _rows(path) == [(1, 1), (2, 2)]


def test_several_source_rows_fail_through_the_builder(spark, tmp_path):
    path = _kv_table(spark, tmp_path / "t", [(1, 1), (2, 2)])
    source = spark.createDataFrame([(0, 0), (1, 10), (1, 11), (2, 20)], KV).alias("s")
    table = DeltaTable.forPath(spark, path).alias("t")
    with pytest.raises(MultipleSourceRowMatchError):
        (table.merge(source, "s.key = t.key")
         .whenMatchedUpdate("s.value = 10", {"key": "s.key", "value": "s.value"}).execute())
    with pytest.raises(MultipleSourceRowMatchError):
        (table.merge(source, "s.key = t.key").whenMatchedDelete("s.value = 11")
         .whenMatchedUpdate(set={"value": "s.value"}).execute())
    assert latest_version(path) == 0


def test_one_unconditional_delete_may_match_several_times(spark, tmp_path):
    # "only delete with multiple matches" and "delete + insert with multiple matches for both"
    path = _kv_table(spark, tmp_path / "t", [(1, 1), (2, 2)])
    view = _view(spark, [(0, 0), (1, 10), (1, 100), (3, 30)])
    sqlext.sql(spark, f"MERGE INTO delta.`{path}` t USING {view} s ON s.key = t.key "
                      "WHEN MATCHED THEN DELETE")
    assert _rows(path) == [(2, 2)]
    path = _kv_table(spark, tmp_path / "t2", [(1, 1), (2, 2)])
    source = spark.createDataFrame([(1, 10), (1, 100), (3, 30), (3, 300)], KV).alias("s")
    (DeltaTable.forPath(spark, path).alias("t").merge(source, "s.key = t.key")
     .whenMatchedDelete().whenNotMatchedInsert(values={"key": "s.key", "value": "s.value"})
     .execute())
    assert _rows(path) == [(2, 2), (3, 30), (3, 300)]


UNSUPPORTED = [
    # (what, statement suffix) as in UpdateSuiteBase's testUnsupportedExpression and
    # MergeIntoSuiteBase's analysis-error cases
    ("window in SET", "WHEN MATCHED THEN UPDATE SET value = row_number() OVER (ORDER BY s.key)"),
    ("aggregate in SET", "WHEN MATCHED THEN UPDATE SET value = max(s.value)"),
    ("generator in SET", "WHEN MATCHED THEN UPDATE SET value = explode(array(1, 2))"),
    ("window in INSERT", "WHEN NOT MATCHED THEN INSERT (key, value) "
                         "VALUES (s.key, rank() OVER (ORDER BY s.key))"),
    ("aggregate in INSERT", "WHEN NOT MATCHED THEN INSERT (key, value) VALUES (s.key, sum(s.value))"),
    ("window in NOT MATCHED BY SOURCE SET",
     "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET value = lag(value) OVER (ORDER BY key)"),
    ("window in a condition", "WHEN MATCHED AND row_number() OVER (ORDER BY s.key) > 1 THEN DELETE"),
    ("aggregate in a condition", "WHEN MATCHED AND max(s.value) > 0 THEN DELETE"),
    ("generator in a condition", "WHEN MATCHED AND explode(array(true)) THEN DELETE"),
]


def test_window_aggregate_and_generator_expressions_are_refused(spark, tmp_path):
    path = _kv_table(spark, tmp_path / "t", [(1, 1), (2, 2)])
    view = _view(spark, [(1, 10), (5, 50)])
    for what, clause in UNSUPPORTED:
        with pytest.raises(AnalysisException) as raised:
            sqlext.sql(spark, f"MERGE INTO delta.`{path}` t USING {view} s ON s.key = t.key "
                              f"{clause}")
        assert f"table {path}, version 0" in str(raised.value), what
    source = spark.table(view).alias("s")
    table = DeltaTable.forPath(spark, path).alias("t")
    with pytest.raises(AnalysisException, match="window functions, aggregate functions and gen"):
        (table.merge(source, "s.key = t.key")
         .whenMatchedUpdate(set={"value": "row_number() OVER (ORDER BY s.key)"}).execute())
    assert latest_version(path) == 0
    assert _rows(path) == [(1, 1), (2, 2)]


def test_star_clauses_ignore_source_columns_the_target_lacks(spark, tmp_path):
    # "star syntax - multiples columns and extra columns in source"
    path = tmp_path / "t"
    sqlext.write(spark.createDataFrame([("a", 1, 1), ("b", 2, 2)],
                                       "key string, value int, value2 int"), str(path))
    view = _view(spark, [("a", 10, 100, 1000), ("c", 30, 300, 3000)],
                 "key string, value int, value2 int, value3 int")
    sqlext.sql(spark, f"MERGE INTO delta.`{path}` t USING {view} s ON s.key = t.key "
                      "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    assert _rows(path) == [("a", 10, 100), ("b", 2, 2), ("c", 30, 300)]
    assert [f.name for f in DeltaTable.forPath(spark, str(path)).toDF().schema] == [
        "key", "value", "value2"]
    # the builder alike; with schema evolution the extra column is added
    source = spark.createDataFrame([("b", 20, 200, 2000)],
                                   "key string, value int, value2 int, value3 int").alias("s")
    (DeltaTable.forPath(spark, str(path)).alias("t").merge(source, "s.key = t.key")
     .whenMatchedUpdateAll().execute())
    assert _rows(path) == [("a", 10, 100), ("b", 20, 200), ("c", 30, 300)]
    (DeltaTable.forPath(spark, str(path)).alias("t").merge(source, "s.key = t.key")
     .whenMatchedUpdateAll().withSchemaEvolution().execute())
    assert _rows(path) == [("a", 10, 100, None), ("b", 20, 200, 2000), ("c", 30, 300, None)]


def test_a_merge_that_changes_nothing_commits_nothing(spark, tmp_path):
    # measured with delta-spark 4.4 (tests/deltaspark, case merge_changes_nothing): no commit
    path = _kv_table(spark, tmp_path / "t", [(1, 1), (2, 2)])
    view = _view(spark, [(7, 70), (8, 80)])
    result = sqlext.sql(spark, f"MERGE INTO delta.`{path}` t USING {view} s ON s.key = t.key "
                               "WHEN MATCHED THEN UPDATE SET value = s.value").collect()[0]
    assert tuple(result) == (0, 0, 0, 0)
    source = spark.createDataFrame([(9, 9)], KV).alias("s")
    (DeltaTable.forPath(spark, path).alias("t").merge(source, "s.key = t.key")
     .whenMatchedDelete().execute())
    assert latest_version(path) == 0
    assert _rows(path) == [(1, 1), (2, 2)]
