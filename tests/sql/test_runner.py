"""``sqlext.sql``: scripts, results, planning without Spark jobs, rewritten SQL that keeps the
user's literals and identifiers, views from a new SparkSession, errors and no partial commits.

(The statement forms themselves are covered by the corpus, ``test_runner_corpus.py``.)
"""

from __future__ import annotations

import pytest

import sqlext
from sqlext.catalog import Catalog
from sqlext.errors import AnalysisException, ParseError, SqlextError, TableNotFoundError
from sqlext.log.table import DeltaLog
from sqlext.sql.parse import parse_statements
from sqlext.sql.plan_read import VIEW_PREFIX
from sqlext.sql.resolve import Resolver
from sqlext.sql.runner import plan_statement
from tests.support.compare import assert_same_rows, rows
from tests.support.readers import read_deltalake
from tests.support.spark import jobs_run, spark_conf


@pytest.fixture
def schema(spark, request):
    """A fresh schema, current for the test."""
    name = "rt_" + request.node.name.replace("[", "_").replace("]", "").replace("-", "_").lower()
    Catalog(spark).create_schema(name)
    spark.catalog.setCurrentDatabase(name)
    yield name
    spark.catalog.setCurrentDatabase("default")


def version(spark, name: str) -> int:
    return DeltaLog(Catalog(spark).resolve(name).location).listing().latest_version


def test_script_returns_the_last_result_and_empty_frames(spark, schema):
    result = sqlext.sql(spark, """
        -- a comment first; with a semicolon
        CREATE TABLE t (id INT, s STRING) USING delta;
        INSERT INTO t VALUES (1, 'a;b'), (2, '-- not a comment');  /* trailing */
        SELECT s FROM t WHERE id = 2;
    """)
    assert rows(result) == [("-- not a comment",)]
    empty = sqlext.sql(spark, "INSERT INTO t VALUES (3, 'c');")
    assert empty.columns == [] and empty.count() == 0
    assert sqlext.sql(spark, " ; -- nothing\n").columns == []
    assert rows(sqlext.sql(spark, "SELECT count(*) FROM t")) == [(3,)]


def test_a_syntax_error_anywhere_runs_nothing(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT) USING delta")
    with pytest.raises(ParseError) as info:
        sqlext.sql(spark, "INSERT INTO t VALUES (1);\nSELECT * FROM t WHERE id = = 1")
    assert (info.value.line, info.value.column) == (2, 28)
    assert version(spark, "t") == 0


def test_planning_runs_no_spark_job(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT, p STRING) USING delta PARTITIONED BY (p);"
                      "INSERT INTO t VALUES (1, 'x'), (2, 'y')")

    def plan_all():
        resolver = Resolver(spark)
        kinds = []
        for sql in ("SELECT * FROM t VERSION AS OF 1 a JOIN t b ON a.id = b.id",
                    "SELECT * FROM t CHANGES FROM VERSION 1",
                    "INSERT INTO t SELECT id + 1, p FROM t",
                    "DELETE FROM t WHERE id IN (1, 2)",
                    "MERGE INTO t USING (SELECT 1 AS id, 'x' AS p) s ON t.id = s.id "
                    "WHEN MATCHED THEN DELETE",
                    "DESCRIBE HISTORY t", "CREATE TABLE u USING delta AS SELECT * FROM t"):
            (stmt,) = parse_statements(sql)
            kinds.append(type(plan_statement(resolver, stmt)).__name__)
        return kinds

    kinds, jobs = jobs_run(spark, plan_all)
    assert jobs == 0
    assert kinds[2:5] == ["InsertPlan", "DeletePlan", "MergeIntoPlan"]
    assert version(spark, "t") == 1


def test_rewritten_sql_keeps_literals_identifiers_and_comments(spark, schema):
    sqlext.sql(spark, "CREATE TABLE `we``ird;t` (`a b` INT, `c--d` STRING) USING delta;"
                      "INSERT INTO `we``ird;t` VALUES (1, 'x'), (2, 'y')")
    sql = ("SELECT `a b` AS `x;y`, 'it\\'s; -- no /* comment */' AS lit, \"dq;\" AS d "
           "FROM `we``ird;t` AS `al ias` /* a comment; */ WHERE `c--d` = 'x' -- trailing")
    (stmt,) = parse_statements(sql)
    plan = plan_statement(Resolver(spark), stmt)
    assert VIEW_PREFIX in plan.sql and "we``ird;t" not in plan.sql
    for kept in ("`x;y`", "'it\\'s; -- no /* comment */'", "`al ias`", "`c--d` = 'x'"):
        assert kept in plan.sql, plan.sql
    result = sqlext.sql(spark, sql)
    assert result.columns == ["x;y", "lit", "d"]
    assert rows(result) == [(1, "it's; -- no /* comment */", "dq;")]


def test_reads_in_every_position(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT, v STRING) USING delta;"
                      "INSERT INTO t VALUES (1, 'a'), (2, 'b');"
                      "INSERT INTO t VALUES (3, 'c')")
    result = sqlext.sql(spark, """
        WITH c AS (SELECT id FROM t VERSION AS OF 1)
        SELECT x.id, (SELECT max(id) FROM t) AS top FROM t AS x
        WHERE x.id IN (SELECT id FROM c) AND EXISTS (SELECT 1 FROM t@v2 y WHERE y.id = x.id)
        UNION ALL SELECT _commit_version, 0 FROM t CHANGES FROM VERSION 2
    """)
    assert sorted(rows(result)) == [(1, 3), (2, 0), (2, 3)]


def test_where_conjuncts_skip_files_only_where_that_is_safe(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT, p STRING) USING delta PARTITIONED BY (p);"
                      "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z');"
                      "CREATE TABLE a (id INT) USING delta; INSERT INTO a VALUES (1), (2), (4)")
    # the file scan, whose input files show what was skipped
    with spark_conf(spark, {"spark.sqlext.execution.local": "off"}):
        one = sqlext.sql(spark, "SELECT id FROM t WHERE p = 'x' AND id > 0")
        assert rows(one) == [(1,)] and len(one.inputFiles()) == 1
        joined = sqlext.sql(spark, "SELECT a.id FROM a JOIN t AS b ON a.id = b.id WHERE b.p <> 'x'")
        assert rows(joined) == [(2,)] and len([f for f in joined.inputFiles() if "p=" in f]) == 2
        # the NULL-extended side of an outer join is read whole: `b.p IS NULL` keeps unmatched rows
        outer = sqlext.sql(spark, "SELECT a.id FROM a LEFT JOIN t AS b ON a.id = b.id WHERE b.p IS NULL")
        assert rows(outer) == [(4,)]
        assert len([f for f in outer.inputFiles() if "p=" in f]) == 3


def test_no_partial_commit_when_a_write_fails_at_run_time(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (n INT) USING delta; INSERT INTO t VALUES (1)")
    # bigint -> int is allowed by store assignment; the overflow fails while writing (ANSI)
    with pytest.raises(SqlextError, match="(?i)overflow|CAST_OVERFLOW"):
        sqlext.sql(spark, "INSERT INTO t SELECT id * 3000000000 FROM range(3)")
    assert version(spark, "t") == 1
    assert rows(read_deltalake(Catalog(spark).resolve("t").location)) == [(1,)]


def test_views_from_a_new_session_show_current_data(spark, schema):
    sqlext.sql(spark, f"""
        CREATE TABLE t (id INT) USING delta;
        INSERT INTO t VALUES (1);
        CREATE VIEW v AS SELECT id * 10 AS tens FROM t;
        CREATE TEMPORARY VIEW tv AS SELECT id FROM t
    """)
    other = spark.newSession()
    other.catalog.setCurrentDatabase(schema)
    sqlext.sql(other, "INSERT INTO t VALUES (2)")
    assert sorted(rows(sqlext.sql(other, f"SELECT * FROM {schema}.v"))) == [(10,), (20,)]
    assert sorted(rows(sqlext.sql(spark, "SELECT * FROM tv"))) == [(1,), (2,)]
    with pytest.raises(AnalysisException, match="tv"):
        sqlext.sql(other, "SELECT * FROM tv")
    sqlext.sql(spark, "DROP VIEW tv")


def test_unknown_names_say_which(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT) USING delta")
    with pytest.raises(AnalysisException, match="`nope`") as info:
        sqlext.sql(spark, "SELECT nope FROM t")
    assert VIEW_PREFIX not in str(info.value)
    with pytest.raises(AnalysisException, match="`missing_table`"):
        sqlext.sql(spark, "SELECT * FROM t JOIN missing_table m ON t.id = m.id")
    with pytest.raises(TableNotFoundError, match="'nope'"):
        sqlext.sql(spark, "SELECT * FROM table_changes('nope', 0)")


def test_plain_spark_statements_pass_through_as_written(spark, schema):
    resolver = Resolver(spark)
    for sql in ("SELECT 1 AS `a;b` -- comment", "SET spark.sql.ansi.enabled",
                "SHOW FUNCTIONS LIKE 'upp*'"):
        (stmt,) = parse_statements(sql)
        assert plan_statement(resolver, stmt).sql == sql
    assert_same_rows(sqlext.sql(spark, "SELECT 1 AS `a;b` -- comment"),
                     spark.sql("SELECT 1 AS `a;b`"))
