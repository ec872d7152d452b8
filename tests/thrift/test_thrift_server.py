"""sqlext's tables seen over JDBC through ``sqlext-thriftserver`` (issue 17: tools reading Spark's
catalog over Thrift).

The server runs in its own process (``python -m sqlext.thrift``, local[1]) on the test session's
warehouse; the tables are made and changed by sqlext in the test process, and read over JDBC by
beeline, Hive's JDBC client from pyspark's jars (:mod:`tests.support.thrift_server`). The server
refreshes its catalog entries every 2 seconds here (the warehouse is the whole test run's).
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

import sqlext
from tests.support.thrift_server import BeelineError, ThriftServer, beeline, listening_addresses

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="beeline needs java")

SCHEMA = "thrift_jdbc"


@pytest.fixture(scope="module")
def server(spark, tmp_path_factory):
    """The server, started after the module's tables exist: a partitioned table in ``default``,
    and in schema ``thrift_jdbc`` a table with deletion vectors and column mapping (a DELETE
    and a column rename already committed)."""
    sqlext.sql(spark, f"""
        CREATE TABLE thrift_events (id BIGINT, v STRING, day DATE) USING delta PARTITIONED BY (day);
        INSERT INTO thrift_events VALUES (1, 'a', DATE'2024-01-01'), (2, 'b', DATE'2024-01-02'),
                                         (3, 'c', DATE'2024-01-02');
        CREATE SCHEMA IF NOT EXISTS {SCHEMA};
        CREATE TABLE {SCHEMA}.mapped (id INT, s STRUCT<x: INT, y: STRING>, ts TIMESTAMP)
          USING delta TBLPROPERTIES ('delta.enableDeletionVectors' = 'true',
                                     'delta.columnMapping.mode' = 'name');
        INSERT INTO {SCHEMA}.mapped VALUES
          (1, named_struct('x', 1, 'y', 'p'), TIMESTAMP'2024-01-01 10:00:00'),
          (2, named_struct('x', 2, 'y', 'q'), NULL), (3, NULL, NULL);
        DELETE FROM {SCHEMA}.mapped WHERE id = 2;
        ALTER TABLE {SCHEMA}.mapped RENAME COLUMN s TO st;
    """)
    workdir = tmp_path_factory.mktemp("thrift")
    running = ThriftServer(spark.conf.get("spark.sql.warehouse.dir"), workdir)
    yield running
    running.stop()
    sqlext.sql(spark, f"DROP TABLE IF EXISTS thrift_events; DROP TABLE IF EXISTS {SCHEMA}.mapped; "
                      f"DROP TABLE IF EXISTS {SCHEMA}.later")


def until(check, timeout: float = 30.0):
    """``check()``'s first result that is not an exception, retried until ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except (AssertionError, BeelineError):
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def ids(url: str, table: str) -> list[str]:
    return [row["id"] for row in beeline(url, f"SELECT id FROM {table} ORDER BY id")]


def test_tables_and_columns_are_listed(server):
    tables = beeline(server.url, f"SHOW TABLES IN {SCHEMA}")
    assert [(t["namespace"], t["tableName"]) for t in tables] == [(SCHEMA, "mapped")]
    assert "thrift_events" in {t["tableName"] for t in beeline(server.url, "SHOW TABLES")}
    columns = beeline(server.url, f"DESCRIBE {SCHEMA}.mapped")
    assert [(c["col_name"], c["data_type"]) for c in columns] == [
        ("id", "int"), ("st", "struct<x:int,y:string>"), ("ts", "timestamp")]


def test_select_reads_partitions_deletion_vectors_and_mapped_columns(server):
    rows = beeline(server.url, "SELECT id, v, day FROM thrift_events ORDER BY id")
    assert [(r["id"], r["v"], r["day"]) for r in rows] == [
        ("1", "a", "2024-01-01"), ("2", "b", "2024-01-02"), ("3", "c", "2024-01-02")]
    rows = beeline(server.url, "SELECT id FROM thrift_events WHERE day = DATE'2024-01-02' "
                               "ORDER BY id")          # a filter pushed to the source
    assert [r["id"] for r in rows] == ["2", "3"]
    rows = beeline(server.url, f"SELECT id, st.y AS y, ts FROM {SCHEMA}.mapped ORDER BY id")
    # row 2 is deleted by a deletion vector; st is stored under its physical name
    assert [(r["id"], r["y"], r["ts"]) for r in rows] == [
        ("1", "p", "2024-01-01 10:00:00.0"), ("3", "NULL", "NULL")]


def test_a_delete_committed_after_the_server_started_is_seen(spark, server):
    assert ids(server.url, "thrift_events") == ["1", "2", "3"]
    sqlext.sql(spark, "DELETE FROM thrift_events WHERE day = DATE'2024-01-02'")
    sqlext.sql(spark, "INSERT INTO thrift_events VALUES (4, 'd', DATE'2024-01-03')")
    # the next query plans on the log's new version: no catalog refresh needed
    assert ids(server.url, "thrift_events") == ["1", "4"]


def test_tables_created_or_dropped_later_follow_the_catalog(spark, server):
    sqlext.sql(spark, f"CREATE TABLE {SCHEMA}.later USING delta AS SELECT 7L AS id, 'x' AS v")
    assert until(lambda: ids(server.url, f"{SCHEMA}.later")) == ["7"]
    sqlext.sql(spark, f"DROP TABLE {SCHEMA}.later")

    def gone():
        tables = {t["tableName"] for t in beeline(server.url, f"SHOW TABLES IN {SCHEMA}")}
        assert tables == {"mapped"}
        return tables
    until(gone)


def test_the_server_listens_on_this_machine_only_by_default(server):
    """No --host (the fixture gives none): 127.0.0.1, as the server says."""
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    if os.path.exists("/proc/net/tcp"):
        assert listening_addresses(port) == {"127.0.0.1"}
    assert f"listening on 127.0.0.1:{port}" in server.log.read_text()


def test_changes_over_jdbc_fail_and_change_nothing(spark, server):
    before = sorted(tuple(r) for r in sqlext.read(spark, f"{SCHEMA}.mapped").collect())
    version = sqlext.DeltaTable.forName(spark, f"{SCHEMA}.mapped").history(1).collect()[0][0]
    table = f"`{SCHEMA}`.`mapped`"
    read_only = f"{table} (a sqlext table, read-only here: change it with sqlext)"
    # the client's line names the table as the client knows it and says to write with sqlext
    # (one line: see the test of one-line errors below); UPDATE and MERGE in the words the
    # server gives Spark's error (sqlext.thrift.messages)
    rewritten = "here: a sqlext table is read-only over JDBC (sqlext-thriftserver). Change it " \
                "with sqlext"
    for statement, says in (
            (f"DELETE FROM {SCHEMA}.mapped WHERE id = 1", f"does not support deletes: {read_only}"),
            (f"UPDATE {SCHEMA}.mapped SET id = 5",
             f"{table} does not support UPDATE TABLE {rewritten}"),
            (f"MERGE INTO {SCHEMA}.mapped t USING (SELECT 1 AS id) s ON t.id = s.id "
             "WHEN MATCHED THEN DELETE", f"{table} does not support MERGE INTO TABLE {rewritten}"),
            (f"INSERT INTO {SCHEMA}.mapped SELECT id, st, ts FROM {SCHEMA}.mapped",
             f"UnsupportedOperationError: {table} is a sqlext table, read-only here "
             "(sqlext-thriftserver): nothing was written. Change it with sqlext"),
            (f"TRUNCATE TABLE {SCHEMA}.mapped", f"does not support truncates: {read_only}")):
        with pytest.raises(BeelineError) as failed:
            beeline(server.url, statement)
        first = str(failed.value).splitlines()[0]
        assert says in first, str(failed.value)
        assert "Traceback" not in str(failed.value)
    # dropping the entry over JDBC leaves the table's files; the next refresh makes it again
    location = sqlext.DeltaTable.forName(spark, f"{SCHEMA}.mapped").detail().collect()[0]["location"]
    beeline(server.url, f"DROP TABLE {SCHEMA}.mapped")
    assert os.path.isdir(os.path.join(location.removeprefix("file:"), "_delta_log"))
    assert until(lambda: ids(server.url, f"{SCHEMA}.mapped")) == ["1", "3"]
    # so does dropping the schema: Spark's databases live apart from sqlext's warehouse
    beeline(server.url, f"DROP DATABASE {SCHEMA} CASCADE")
    assert os.path.isdir(os.path.join(location.removeprefix("file:"), "_delta_log"))
    assert until(lambda: ids(server.url, f"{SCHEMA}.mapped")) == ["1", "3"]
    assert sorted(tuple(r) for r in sqlext.read(spark, f"{SCHEMA}.mapped").collect()) == before
    assert sqlext.DeltaTable.forName(spark, f"{SCHEMA}.mapped").history(1).collect()[0][0] == version


def jdbc(spark, url: str):
    """A connection of Hive's JDBC driver (``hive-jdbc`` in pyspark's jars), in the test JVM:
    a client that runs statements asynchronously, as BI tools do, and can cancel them."""
    jvm = spark.sparkContext._jvm
    properties = jvm.java.util.Properties()
    properties.setProperty("user", "sqlext")
    return jvm.org.apache.hive.jdbc.HiveDriver().connect(url, properties)


def jdbc_error(connection, statement: str) -> str:
    """The message of the ``SQLException`` the JDBC client raises for ``statement``."""
    from py4j.protocol import Py4JJavaError

    executing = connection.createStatement()
    try:
        with pytest.raises(Py4JJavaError) as failed:
            executing.execute(statement)
    finally:
        executing.close()
    return failed.value.java_exception.getMessage()


def assert_one_line(message: str) -> None:
    assert "\n" not in message.strip(), message
    assert "\tat " not in message and "Caused by" not in message, message
    assert message.startswith("Error running query: "), message   # no Java class name first


def test_errors_over_jdbc_are_one_line_and_the_server_log_keeps_the_stack(spark, server):
    """Spark runs JDBC statements in the background and would answer the status poll with the
    whole Java stack (sqlext.thrift.one_line): the client gets the first line only."""
    connection = jdbc(spark, server.url)
    table = f"`{SCHEMA}`.`mapped`"
    logged = len(server.log.read_text())
    try:
        until(lambda: ids(server.url, f"{SCHEMA}.mapped"))    # an earlier test may drop it
        for statement in (f"UPDATE {SCHEMA}.mapped SET id = 5",
                          f"MERGE INTO {SCHEMA}.mapped t USING (SELECT 1 AS id) s "
                          "ON t.id = s.id WHEN MATCHED THEN DELETE",
                          f"DELETE FROM {SCHEMA}.mapped WHERE id = 1",
                          f"INSERT INTO {SCHEMA}.mapped SELECT id, st, ts FROM {SCHEMA}.mapped"):
            message = jdbc_error(connection, statement)
            assert_one_line(message)
            assert table in message and "change it with sqlext" in message.lower(), message
        # a statement on no sqlext table: Spark's own words, on one line too
        message = jdbc_error(connection, "SELECT * FROM thrift_nowhere")
        assert_one_line(message)
        assert "[TABLE_OR_VIEW_NOT_FOUND]" in message and "`thrift_nowhere`" in message, message
        assert message.endswith("line 1 pos 14"), message      # no query plan after it
        message = jdbc_error(connection, "SELEC 1")   # Spark puts this message on line 2
        assert_one_line(message)
        assert "Syntax error at or near 'SELEC'" in message and "(line 1, pos 0)" in message
    finally:
        connection.close()
    # the server's own log has each failure with its stack
    log = server.log.read_text()[logged:]
    assert log.count("Error executing query") >= 5, log[-3000:]
    assert f"does not support deletes: {table}" in log and "\tat org.apache.spark." in log


def test_a_long_query_is_cancelled_over_jdbc(spark, server):
    """Statements still run in the background: a JDBC client's cancel stops a long query, and
    the connection (and the server's one executor core) serves the next statement."""
    import threading

    from py4j.protocol import Py4JJavaError

    connection = jdbc(spark, server.url)
    running = connection.createStatement()
    outcome = {}

    def run():
        try:
            running.executeQuery("SELECT max(id) FROM range(0, 1000000000000, 1, 1)")
            outcome["finished"] = True
        except Py4JJavaError as exc:
            outcome["error"] = exc.java_exception.getMessage()
        except Exception as exc:  # noqa: BLE001 - shown by the assertion below
            outcome["other"] = repr(exc)

    try:
        worker = threading.Thread(target=run)
        worker.start()
        time.sleep(8)
        assert worker.is_alive(), outcome
        started = time.monotonic()
        running.cancel()
        worker.join(60)
        assert not worker.is_alive()
        assert "cancel" in outcome.get("error", "").lower(), outcome
        result = connection.createStatement().executeQuery("SELECT count(*) FROM range(10)")
        assert result.next() and result.getLong(1) == 10
        assert time.monotonic() - started < 60
    finally:
        connection.close()


def test_the_handler_keeps_the_message_lines_before_the_stack(spark):
    """The error text cut by the handler compiled in the JVM (here the test session's)."""
    from sqlext.thrift.one_line import OneLineErrors

    handler = OneLineErrors(spark)
    assert handler.problem is None
    one_line = handler.method("oneLine")
    gateway = spark.sparkContext._gateway

    def cut(text: str) -> str:
        args = gateway.new_array(gateway.jvm.java.lang.Object, 1)
        args[0] = text
        return one_line.invoke(None, args)

    stack = ("org.apache.hive.service.cli.HiveSQLException: Error running query: [X] "
             "org.apache.spark.sql.AnalysisException: [X] The table `t` is read-only.\n"
             "\tat org.apache.spark.A.b(A.scala:1)\n\t... 22 more\n"
             "Caused by: org.apache.spark.sql.AnalysisException: [X] The table `t` is read-only.\n"
             "\tat org.apache.spark.C.d(C.scala:2)\n")
    assert cut(stack) == ("Error running query: [X] org.apache.spark.sql.AnalysisException: [X] "
                          "The table `t` is read-only.")
    parse = ("org.apache.hive.service.cli.HiveSQLException: Error running query: [P] "
             "org.apache.spark.sql.catalyst.parser.ParseException: \r\n"
             "[P] Syntax error at or near 'SELEC'. SQLSTATE: 42601 (line 1, pos 0)\n\n"
             "== SQL ==\nSELEC 1\n^^^\n\n\tat org.apache.spark.A.b(A.scala:1)\n")
    assert cut(parse) == ("Error running query: [P] org.apache.spark.sql.catalyst.parser."
                          "ParseException: [P] Syntax error at or near 'SELEC'. SQLSTATE: 42601 "
                          "(line 1, pos 0)")
    plan = ("org.apache.hive.service.cli.HiveSQLException: Error running query: [T] "
            "org.apache.spark.sql.AnalysisException: [T] The table or view `nope` cannot be "
            "found. SQLSTATE: 42P01; line 1 pos 14;\n'Project [*]\n+- 'UnresolvedRelation "
            "[nope], [], false\n\n\tat org.apache.spark.A.b(A.scala:1)\n")
    assert cut(plan) == ("Error running query: [T] org.apache.spark.sql.AnalysisException: [T] "
                         "The table or view `nope` cannot be found. SQLSTATE: 42P01; line 1 pos 14")
    assert cut("one line") == "one line"


def test_address_and_port_settings(tmp_path):
    """--host, then the setting (Spark's or Hive's name), then Hive's environment variable,
    then 127.0.0.1; the same order for the port (default 10000)."""
    from sqlext.thrift.server import HOST_CONF, PORT_CONF, parse_args, server_settings

    def settings(*argv, environ=None):
        conf = server_settings(parse_args(["--warehouse", str(tmp_path), *argv]), environ or {})
        return conf[HOST_CONF], conf[PORT_CONF]

    assert settings() == ("127.0.0.1", "10000")
    assert settings("--host", "0.0.0.0", "--port", "10001") == ("0.0.0.0", "10001")
    assert settings("--conf", f"{HOST_CONF}=10.0.0.1") == ("10.0.0.1", "10000")
    assert settings("--conf", "hive.server2.thrift.bind.host=10.0.0.2",
                    "--conf", "hive.server2.thrift.port=10002") == ("10.0.0.2", "10002")
    env = {"HIVE_SERVER2_THRIFT_BIND_HOST": "10.0.0.3", "HIVE_SERVER2_THRIFT_PORT": "10003"}
    assert settings(environ=env) == ("10.0.0.3", "10003")
    assert settings("--host", "localhost", environ=env) == ("localhost", "10003")


def test_error_messages_are_spark_own_but_one(tmp_path):
    """The resource the server puts first on its class path is the running Spark's
    error-conditions.json with only UPDATE / MERGE's refusal reworded (its parameters kept)."""
    import json

    from sqlext.thrift.messages import (CLASSPATH_CONF, MESSAGE, RESOURCE, spark_error_conditions,
                                        with_messages)

    conf = with_messages({CLASSPATH_CONF: "/opt/x.jar", "k": "v"}, str(tmp_path))
    assert conf == {CLASSPATH_CONF: f"{tmp_path}{os.pathsep}/opt/x.jar", "k": "v"}
    written = json.loads((tmp_path / RESOURCE).read_text())
    spark = spark_error_conditions()
    assert written["UNSUPPORTED_FEATURE"]["subClass"]["TABLE_OPERATION"]["message"] == [MESSAGE]
    assert "<tableName>" in MESSAGE and "<operation>" in MESSAGE
    spark["UNSUPPORTED_FEATURE"]["subClass"]["TABLE_OPERATION"]["message"] = [MESSAGE]
    assert written == spark
