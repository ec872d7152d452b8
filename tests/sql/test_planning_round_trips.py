"""Planning a statement costs few py4j round trips (issue 19: a statement's fixed cost).

Values fixed for a session's lifetime (the warehouse directory, the session's id and catalog
object, the Hadoop settings sqlext makes) are read once per session, and Spark's cast rules once
per process; what may change between statements (the current schema, Spark's temporary views,
tables) is still asked every time.
"""

from __future__ import annotations

import py4j.clientserver

import sqlext
from sqlext.engine.session import prepare, session_constant
from sqlext.sql.parse import parse_statements
from sqlext.sql.resolve import Resolver
from sqlext.sql.runner import empty, plan_statement
from tests.support.compare import rows


class RoundTrips:
    """Counts the py4j commands sent while active (the connection class is wrapped, not
    replaced: every command still reaches the JVM)."""

    def __init__(self):
        self.count = 0

    def __enter__(self):
        connection = py4j.clientserver.ClientServerConnection
        self._original = original = connection.send_command
        counter = self

        def send_command(conn, command):
            counter.count += 1
            return original(conn, command)

        connection.send_command = send_command
        return self

    def __exit__(self, *exc):
        py4j.clientserver.ClientServerConnection.send_command = self._original


def plan(spark, sql: str):
    prepare(spark)
    resolver = Resolver(spark)
    return [plan_statement(resolver, s) for s in parse_statements(sql)]


def test_planning_a_statement_asks_the_jvm_only_what_may_have_changed(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id BIGINT, v STRING) USING delta;"
                      "INSERT INTO t VALUES (1, 'a')")
    for sql in ("SELECT * FROM t WHERE id > 0", "INSERT INTO t VALUES (2, 'b')",
                "UPDATE t SET v = 'x' WHERE id = 1"):
        plan(spark, sql)                      # the session's constants are known from here on
        with RoundTrips() as trips:
            plan(spark, sql)
        # the current schema (1) and Spark's temporary view of that name (2); before the
        # session's constants were kept it took 11 for the SELECT
        assert trips.count <= 4, (sql, trips.count)
    # a temporary view Spark gets later still shadows the table, as in Spark
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW t AS SELECT 42 AS id")
    try:
        assert rows(sqlext.sql(spark, "SELECT * FROM t")) == [(42,)]
    finally:
        spark.catalog.dropTempView("t")
    assert rows(sqlext.sql(spark, "SELECT id FROM t ORDER BY id")) == [(1,)]


def test_session_constants_are_computed_once_per_session(spark):
    calls = []
    assert session_constant(spark, "test-constant", lambda: calls.append(1) or "v") == "v"
    assert session_constant(spark, "test-constant", lambda: calls.append(1) or "w") == "v"
    assert calls == [1]
    other = spark.newSession()
    assert session_constant(other, "test-constant", lambda: "w") == "w"
    # the empty result of a statement that returns nothing is built once per session
    assert empty(spark) is empty(spark)
    assert empty(spark).columns == [] and empty(spark).count() == 0
    hconf = spark.sparkContext._jsc.hadoopConfiguration()
    assert hconf.get("parquet.enable.summary-metadata") == "false"
