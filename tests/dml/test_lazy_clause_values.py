"""A clause's expressions are evaluated only for the rows the clause takes (issue 31, item 1), on
sqlext alone: every case of :mod:`tests.support.lazy_clause_cases` succeeds or fails as
delta-spark 4.4 does (``tests/deltaspark/test_deltaspark_lazy_clause_values.py`` compares the
rows with delta-spark's), in ANSI mode.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

import sqlext
from sqlext.errors import SqlextError
from tests.support.deltaspark import delta_path
from tests.support.lazy_clause_cases import CASES, base_statements, properties
from tests.support.spark import spark_conf


def _latest(path) -> int:
    return max(int(p.stem) for p in (path / "_delta_log").glob("*.json"))


def _table(spark, path, case) -> str:
    table = delta_path(path)
    for statement in base_statements(table, properties(case), case.split):
        sqlext.sql(spark, statement).collect()
    return table


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fails_only_where_delta_spark_fails(spark, tmp_path, case):
    table = _table(spark, tmp_path / "t", case)
    before = _latest(tmp_path / "t")
    with spark_conf(spark, {"spark.sql.ansi.enabled": "true"}):
        if case.succeeds:
            sqlext.sql(spark, case.sql.format(t=table)).collect()
        else:
            with pytest.raises(SqlextError) as failed:
                sqlext.sql(spark, case.sql.format(t=table)).collect()
            assert _latest(tmp_path / "t") == before
            assert case.error is None or case.error in str(failed.value), failed.value


def test_issue_example_updates_the_matched_row(spark, tmp_path):
    """The MERGE of issue 31: the INSERT clause's overflowing cast is not evaluated for the
    matched row, which is updated."""
    path = tmp_path / "t"
    table = delta_path(path)
    sqlext.sql(spark, f"CREATE TABLE {table} (id BIGINT, b BIGINT, d DECIMAL(10,2)) "
                      "USING DELTA").collect()
    sqlext.sql(spark, f"INSERT INTO {table} VALUES (1, 1, 1.00)").collect()
    with spark_conf(spark, {"spark.sql.ansi.enabled": "true"}):
        sqlext.sql(spark, f"MERGE INTO {table} t USING (SELECT 1L AS id, 1000000000009L AS b) s "
                          "ON t.id = s.id WHEN MATCHED THEN UPDATE SET b = s.b "
                          "WHEN NOT MATCHED THEN INSERT (id, b, d) "
                          "VALUES (s.id, s.b, CAST(s.b AS DECIMAL(10,2)))").collect()
    assert [tuple(r) for r in sqlext.read(spark, str(path)).collect()] == [
        (1, 1000000000009, Decimal("1.00"))]
    assert _latest(path) == 2


def test_python_api_values_are_lazy_too(spark, tmp_path):
    """DeltaTable.merge with Column values: the same rule."""
    from pyspark.sql import functions as F

    path = tmp_path / "t"
    table = _table(spark, path, CASES[0])
    source = spark.sql("SELECT 3L AS id, 5L AS b").alias("s")
    with spark_conf(spark, {"spark.sql.ansi.enabled": "true"}):
        (sqlext.DeltaTable.forPath(spark, str(path)).alias("t")
         .merge(source, "t.id = s.id")
         .whenMatchedUpdate(set={"b": F.col("s.b")})
         .whenNotMatchedBySourceUpdate(condition="t.b < 100",
                                       set={"d": F.expr("CAST(t.b * 100 AS DECIMAL(10,2))")})
         .whenNotMatchedInsert(values={"id": "s.id",
                                       "d": F.expr("CAST(s.b * 1000000000000 AS DECIMAL(10,2))")})
         .execute())
    assert table
    rows = sorted(tuple(r) for r in sqlext.read(spark, str(path)).collect())
    assert rows == [(1, 1, Decimal("100.00")), (2, 0, Decimal("0.00")),
                    (3, 5, Decimal("3.00"))]


def test_unqualified_names_both_sides_have_still_work(spark, tmp_path):
    """A WHEN NOT MATCHED value naming, unqualified, a column target and source both have cannot
    be told apart over the join: it is computed on the source before the join (for every source
    row), and means the source's column."""
    path = tmp_path / "t"
    table = _table(spark, path, CASES[0])
    sqlext.sql(spark, f"MERGE INTO {table} t USING (SELECT * FROM VALUES (1L, 7L), (8L, 9L) "
                      "AS s(id, b)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET b = s.b "
                      "WHEN NOT MATCHED THEN INSERT (id, b) VALUES (id, b + 1)").collect()
    rows = sorted((r["id"], r["b"]) for r in sqlext.read(spark, str(path)).collect())
    assert rows == [(1, 7), (2, 0), (3, 1000000000009), (8, 10)]
