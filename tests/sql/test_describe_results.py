"""DESCRIBE, SHOW TABLES, SHOW TBLPROPERTIES and SHOW CREATE TABLE results are local relations
(fetching one runs no Spark job), and DESCRIBE of a view finds its columns without listing or
reading the files of the tables under it - dbt describes every relation it builds."""

from __future__ import annotations

import os

import pytest

import sqlext
from sqlext.catalog import Catalog
from sqlext.errors import DeltaFileNotFoundError
from sqlext.log.table import DeltaLog
from tests.support.spark import jobs_run

STATEMENTS = ["DESCRIBE t", "DESCRIBE EXTENDED t", "DESCRIBE EXTENDED v", "SHOW TABLES",
              "SHOW TBLPROPERTIES t", "SHOW CREATE TABLE t"]


@pytest.fixture
def table_and_view(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT COMMENT 'the id', name STRING, day DATE) "
                      "USING delta PARTITIONED BY (day)")
    sqlext.sql(spark, "INSERT INTO t VALUES (1, 'a', DATE'2024-01-01'), (2, 'b', DATE'2024-01-02')")
    sqlext.sql(spark, "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT id, name, day, "
                      "cast(id AS BIGINT) * 2 AS twice FROM t WHERE id > (SELECT min(id) FROM t)")
    return Catalog(spark).resolve("t").location


@pytest.mark.parametrize("statement", STATEMENTS)
def test_fetching_a_result_runs_no_spark_job(spark, table_and_view, statement):
    result = sqlext.sql(spark, statement)
    fetched, jobs = jobs_run(spark, result.collect)
    assert fetched
    assert jobs == 0


def test_a_view_is_described_with_the_columns_its_query_gives(spark, table_and_view):
    described = {r[0]: (r[1], r[2]) for r in sqlext.sql(spark, "DESCRIBE v").collect()}
    queried = sqlext.sql(spark, "SELECT * FROM v").schema
    assert list(described) == queried.names == ["id", "name", "day", "twice"]
    assert [d[0] for d in described.values()] == [f.dataType.simpleString() for f in queried]
    # the table column's comment comes through the view, as a full read of it gives
    assert described["id"] == ("int", "the id")
    assert (queried["id"].metadata or {}).get("comment") == "the id"


def test_a_view_is_described_without_reading_the_table(spark, table_and_view):
    # a data file gone: reading the view fails, describing it needs no file
    snapshot = DeltaLog(table_and_view).snapshot()
    os.remove(os.path.join(table_and_view, snapshot.files[0].path))
    with pytest.raises(DeltaFileNotFoundError):
        sqlext.sql(spark, "SELECT * FROM v").collect()
    (rows, jobs) = jobs_run(spark, lambda: sqlext.sql(spark, "DESCRIBE EXTENDED v").collect())
    assert [r[0] for r in rows[:4]] == ["id", "name", "day", "twice"]
    assert jobs == 0


def test_a_view_is_created_without_reading_the_table_and_still_checked(spark, table_and_view):
    snapshot = DeltaLog(table_and_view).snapshot()
    os.remove(os.path.join(table_and_view, snapshot.files[0].path))
    _, jobs = jobs_run(spark, lambda: sqlext.sql(
        spark, "CREATE OR REPLACE TEMPORARY VIEW w AS SELECT name FROM t WHERE id > 1"))
    assert jobs == 0
    assert [r[0] for r in sqlext.sql(spark, "DESCRIBE w").collect()] == ["name"]
    # the query is still analysed when the view is created
    with pytest.raises(sqlext.AnalysisException, match="no_such_column"):
        sqlext.sql(spark, "CREATE OR REPLACE TEMPORARY VIEW w AS SELECT no_such_column FROM t")


def _analyses(monkeypatch) -> list[str]:
    """The statements sqlext hands to Spark to analyse or run, recorded from now on."""
    from sqlext.sql import plan

    seen: list[str] = []
    run = plan.spark_sql

    def recording(spark, sql, *args, **kwargs):
        seen.append(sql)
        return run(spark, sql, *args, **kwargs)

    monkeypatch.setattr(plan, "spark_sql", recording)
    return seen


def test_describe_right_after_create_view_does_not_analyse_the_query_again(
        spark, table_and_view, monkeypatch):
    analysed = _analyses(monkeypatch)
    sqlext.sql(spark, "CREATE OR REPLACE TEMPORARY VIEW w (ident COMMENT 'renamed', label) AS "
                      "SELECT id, upper(name) FROM t WHERE id > (SELECT min(id) FROM t)")
    assert len(analysed) == 1                  # CREATE VIEW checks the query
    described = sqlext.sql(spark, "DESCRIBE w").collect()
    assert len(analysed) == 1                  # DESCRIBE knows its columns already
    assert [tuple(r) for r in described] == [("ident", "int", "renamed"),
                                             ("label", "string", None)]
    assert sqlext.sql(spark, "SELECT * FROM w").schema.names == ["ident", "label"]


def test_a_view_is_described_with_its_tables_current_columns(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT, name STRING) USING delta")
    sqlext.sql(spark, "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT * FROM t")
    assert [r[0] for r in sqlext.sql(spark, "DESCRIBE v").collect()] == ["id", "name"]
    sqlext.sql(spark, "ALTER TABLE t ADD COLUMNS (score DOUBLE)")
    described = [tuple(r)[:2] for r in sqlext.sql(spark, "DESCRIBE v").collect()]
    assert described == [("id", "int"), ("name", "string"), ("score", "double")]
    assert sqlext.sql(spark, "SELECT * FROM v").schema.names == ["id", "name", "score"]


def test_a_view_over_a_spark_view_is_described_as_the_spark_view_is_now(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT, name STRING) USING delta")
    spark.createDataFrame([(1, "x")], "k INT, s STRING").createOrReplaceTempView("sp")
    sqlext.sql(spark, "CREATE OR REPLACE TEMPORARY VIEW v AS "
                      "SELECT t.name, sp.* FROM t JOIN sp ON t.id = sp.k")
    assert [r[0] for r in sqlext.sql(spark, "DESCRIBE v").collect()] == ["name", "k", "s"]
    # the Spark view changes while the sqlext table does not: its columns are asked for again
    spark.createDataFrame([(1, "x", 2.5)], "k INT, s STRING, z DOUBLE") \
        .createOrReplaceTempView("sp")
    try:
        described = [tuple(r)[:2] for r in sqlext.sql(spark, "DESCRIBE v").collect()]
        assert described == [("name", "string"), ("k", "int"), ("s", "string"), ("z", "double")]
    finally:
        spark.catalog.dropTempView("sp")


def test_a_view_with_ctes_over_a_view_with_ctes_is_described_without_analysis(
        spark, table_and_view, monkeypatch):
    # the inner view's CTE is renamed apart each time it is expanded: still the same query
    sqlext.sql(spark, "CREATE OR REPLACE TEMPORARY VIEW inner_v AS WITH c AS (SELECT id, name "
                      "FROM t) SELECT * FROM c")
    analysed = _analyses(monkeypatch)
    sqlext.sql(spark, "CREATE OR REPLACE TEMPORARY VIEW outer_v AS WITH c AS (SELECT id FROM t) "
                      "SELECT i.name, c.id FROM inner_v i JOIN c ON i.id = c.id")
    described = [tuple(r)[:2] for r in sqlext.sql(spark, "DESCRIBE outer_v").collect()]
    assert described == [("name", "string"), ("id", "int")]
    assert len(analysed) == 1
