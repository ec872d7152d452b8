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
