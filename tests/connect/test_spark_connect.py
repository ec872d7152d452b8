"""sqlext on a Spark Connect session (``SparkSession.builder.remote(...)``, issue 17).

A local Spark Connect server runs in its own process (started once for tests/connect, with the
test session's settings: tests/connect/conftest.py), and the client session lives in the
test process: no JVM is used by sqlext here, the log is read and written by the client's Python
stores. Results are checked with delta-rs (``deltalake``) reading the tables sqlext wrote.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

deltalake = pytest.importorskip("deltalake")
pytest.importorskip("grpc")

def rows(table, order="id"):
    """The rows of a Delta table read by delta-rs, as sorted tuples."""
    data = deltalake.DeltaTable(str(table)).to_pyarrow_table().to_pylist()
    keys = sorted(data[0]) if data else []
    return sorted((tuple(r[k] for k in keys) for r in data), key=str)


def spark_rows(df):
    return sorted((tuple(r) for r in df.collect()), key=str)


def test_session_is_connect(connect):
    from sqlext.engine.session import is_connect
    assert is_connect(connect)
    assert type(connect).__module__.startswith("pyspark.sql.connect")


def test_write_modes_and_reads(connect, tmp_path):
    import sqlext
    path = str(tmp_path / "events")
    df = connect.createDataFrame([(1, "a", "d1"), (2, "b", "d2")], "id long, v string, day string")
    assert sqlext.write(df, path, partitionBy=["day"]) == 0
    more = connect.createDataFrame([(3, "c", "d3")], "id long, v string, day string")
    assert sqlext.write(more, path) == 1
    new = connect.createDataFrame([(10, "x", "d1")], "id long, v string, day string")
    assert sqlext.write(new, path, mode="overwrite", replaceWhere="day = 'd1'") == 2
    assert rows(path) == [("d1", 10, "x"), ("d2", 2, "b"), ("d3", 3, "c")]
    dt = deltalake.DeltaTable(path)
    assert dt.metadata().partition_columns == ["day"]
    assert [a["operation"] for a in dt.history()][:1] == ["WRITE"]

    assert spark_rows(sqlext.read(connect, path)) == [(10, "x", "d1"), (2, "b", "d2"),
                                                      (3, "c", "d3")]
    assert spark_rows(sqlext.read(connect, path, versionAsOf=0)) == [(1, "a", "d1"),
                                                                     (2, "b", "d2")]
    pruned = sqlext.read(connect, path, filter="day = 'd2'")
    assert spark_rows(pruned) == [(2, "b", "d2")]
    files = pruned.inputFiles()     # files pruned by the log before Spark reads: one partition
    assert len(files) == 1 and "day=d2" in files[0]

    assert sqlext.write(more, path, mode="overwrite") == 3
    assert rows(path) == [("d3", 3, "c")]
    with pytest.raises(sqlext.SqlextError):
        sqlext.write(df, path, mode="error")


def test_delete_update_merge_history_changes(connect, tmp_path):
    import sqlext
    from pyspark.sql import functions as F
    path = str(tmp_path / "t")
    df = connect.createDataFrame([(i, f"v{i}", f"d{i % 2}") for i in range(6)],
                                 "id long, v string, day string")
    sqlext.write(df, path, partitionBy=["day"])
    t = sqlext.DeltaTable.forPath(connect, path)
    t.delete("id = 1")                                  # v1: data predicate
    t.delete(F.col("day") == "d1")                      # v2: partition-only (a Column)
    t.update("id = 2", {"v": "upper(v)"})               # v3
    t.update(F.col("id") == 4, {"v": F.lit("four")})    # v4
    source = connect.createDataFrame([(0, "m", "d0"), (7, "n", "d1")],
                                     "id long, v string, day string")
    result = (t.alias("t").merge(source.alias("s"), "t.id = s.id")
              .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())   # v5
    assert result.collect()[0].asDict() == {"num_affected_rows": 2, "num_updated_rows": 1,
                                            "num_deleted_rows": 0, "num_inserted_rows": 1}
    assert rows(path) == [("d0", 0, "m"), ("d0", 2, "V2"), ("d0", 4, "four"), ("d1", 7, "n")]
    history = deltalake.DeltaTable(path).history()
    assert [h["operation"] for h in sorted(history, key=lambda h: h["version"])] == [
        "WRITE", "DELETE", "DELETE", "UPDATE", "UPDATE", "MERGE"]
    assert [r.operation for r in t.history().orderBy("version").collect()] == [
        "WRITE", "DELETE", "DELETE", "UPDATE", "UPDATE", "MERGE"]
    # the partition-only DELETE removed whole files (no rewrite)
    v2 = [h for h in history if h["version"] == 2][0]
    assert str(v2["operationMetrics"]["numAddedFiles"]) == "0"

    changes = sqlext.changes(connect, path, startingVersion=1)
    got = sorted((r["id"], r["_change_type"], r["_commit_version"]) for r in changes.collect())
    assert got == [(0, "update_postimage", 5), (0, "update_preimage", 5), (1, "delete", 1),
                   (2, "update_postimage", 3), (2, "update_preimage", 3), (3, "delete", 2),
                   (4, "update_postimage", 4), (4, "update_preimage", 4), (5, "delete", 2),
                   (7, "insert", 5)]


def test_sql_statements(connect):
    import sqlext
    sqlext.sql(connect, "CREATE TABLE cx (id BIGINT, v STRING, day DATE) USING delta "
                        "PARTITIONED BY (day)")
    sqlext.sql(connect, "INSERT INTO cx VALUES (1, 'a', DATE'2024-01-01'), "
                        "(2, 'b', DATE'2024-01-02')")
    assert sqlext.sql(connect, "UPDATE cx SET v = 'c' WHERE id = 2").first()[0] == 1
    sqlext.sql(connect, "MERGE INTO cx AS t USING (SELECT 3 AS id, 'n' AS v, "
                        "DATE'2024-01-03' AS day) AS s ON t.id = s.id "
                        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    assert sqlext.sql(connect, "DELETE FROM cx WHERE id = 1").first()[0] == 1
    assert spark_rows(sqlext.sql(connect, "SELECT id, v FROM cx")) == [(2, "c"), (3, "n")]
    assert spark_rows(sqlext.sql(connect, "SELECT id, v FROM cx VERSION AS OF 1")) == [
        (1, "a"), (2, "b")]
    # a query over sqlext tables is a lazy DataFrame: it still reads when collected later
    later = sqlext.sql(connect, "SELECT a.id FROM cx a JOIN cx VERSION AS OF 1 b ON a.id = b.id")
    sqlext.sql(connect, "SELECT 1").collect()
    assert spark_rows(later) == [(2,)]
    feed = sqlext.sql(connect, "SELECT id, _change_type FROM table_changes('cx', 2, 4)")
    assert spark_rows(feed) == [(1, "delete"), (2, "update_postimage"), (2, "update_preimage"),
                                (3, "insert")]
    history = sqlext.sql(connect, "DESCRIBE HISTORY cx").orderBy("version").collect()
    assert [r.operation for r in history] == ["CREATE TABLE", "WRITE", "UPDATE", "MERGE",
                                              "DELETE"]
    location = sqlext.DeltaTable.forName(connect, "cx").detail().first().location
    data = deltalake.DeltaTable(location).to_pyarrow_table().to_pylist()
    assert sorted((r["id"], r["v"]) for r in data) == [(2, "c"), (3, "n")]


def test_spark_temp_view_shadows_and_shell(connect, server):
    import sqlext
    sqlext.sql(connect, "CREATE TABLE sh (id BIGINT) USING delta")
    sqlext.sql(connect, "INSERT INTO sh VALUES (1), (2)")
    connect.createDataFrame([(9,)], "id long").createOrReplaceTempView("sh")
    try:    # a Spark temporary view shadows the table, as in Spark
        assert spark_rows(sqlext.sql(connect, "SELECT id FROM sh")) == [(9,)]
    finally:
        connect.catalog.dropTempView("sh")
    assert spark_rows(sqlext.sql(connect, "SELECT id FROM sh")) == [(1,), (2,)]
    # the sqlext-sql shell on the same server (its own Connect session, same warehouse)
    shell = subprocess.run([sys.executable, "-m", "sqlext.sql", "--remote", server.url, "-S",
                            "-e", "DELETE FROM sh WHERE id = 1; SELECT id * 10 AS x FROM sh"],
                           capture_output=True, text=True, timeout=300,
                           env={k: v for k, v in os.environ.items()
                                if k != "SPARK_CONNECT_MODE_ENABLED"})
    assert shell.returncode == 0, shell.stderr[-2000:]
    assert "20" in shell.stdout and "10" not in shell.stdout.replace("x", "")
    assert spark_rows(sqlext.sql(connect, "SELECT id FROM sh")) == [(2,)]


def test_install_drop_in(connect, tmp_path):
    import sqlext
    from sqlext import drop_in
    path = str(tmp_path / "d")
    df = connect.createDataFrame([(1, "a"), (2, "b")], "id long, v string")
    sqlext.install(connect)
    try:
        df.write.format("delta").mode("overwrite").save(path)
        connect.sql(f"DELETE FROM delta.`{path}` WHERE id = 1")
        assert spark_rows(connect.read.format("delta").load(path)) == [(2, "b")]
        assert spark_rows(connect.read.format("delta").option("versionAsOf", 0).load(path)) == [
            (1, "a"), (2, "b")]
        assert rows(path) == [(2, "b")]
        feed = connect.read.format("delta").option("readChangeFeed", "true") \
            .option("startingVersion", 1).load(path)
        assert [(r.id, r._change_type) for r in feed.collect()] == [(1, "delete")]
        df.writeTo("wt").using("delta").create()
        df.filter("id = 1").writeTo("wt").overwrite("id = 1")
        assert spark_rows(connect.table("wt")) == [(1, "a"), (2, "b")]
        assert sqlext.DeltaTable.forName(connect, "wt").history().count() == 2
        from pyspark.sql import functions as F
        with pytest.raises(sqlext.SqlextError, match="SQL string"):
            df.writeTo("wt").overwrite(F.col("id") == 1)
        # pyspark's own formats are untouched
        df.write.mode("overwrite").parquet(str(tmp_path / "plain"))
        assert connect.read.parquet(str(tmp_path / "plain")).count() == 2
    finally:
        drop_in.uninstall(connect)


def test_maintenance_and_ddl(connect, tmp_path):
    import sqlext
    path = str(tmp_path / "m")
    df = connect.createDataFrame([(1, "a", "d1"), (2, "b", "d2")], "id long, v string, day string")
    sqlext.write(df, path, partitionBy=["day"])
    sqlext.write(df, path)                                                      # v1: 4 files
    t = sqlext.DeltaTable.forPath(connect, path)
    metrics = t.optimize().executeCompaction().first().metrics                  # v2
    assert (metrics.numFilesRemoved, metrics.numFilesAdded) == (4, 2)
    assert len(deltalake.DeltaTable(path).file_uris()) == 2
    t.restoreToVersion(0)                                                       # v3
    assert rows(path) == [("d1", 1, "a"), ("d2", 2, "b")]
    sqlext.sql(connect, f"ALTER TABLE delta.`{path}` ADD COLUMNS (z INT)")      # v4
    assert "z" in deltalake.DeltaTable(path).schema().to_arrow().names
    sqlext.sql(connect, f"CREATE TABLE mc SHALLOW CLONE delta.`{path}`")
    assert spark_rows(sqlext.sql(connect, "SELECT id FROM mc")) == [(1,), (2,)]
    assert sqlext.sql(connect, f"VACUUM delta.`{path}` RETAIN 168 HOURS DRY RUN").count() == 0
    assert [r.operation for r in t.history().orderBy("version").collect()] == [
        "WRITE", "WRITE", "OPTIMIZE", "RESTORE", "ADD COLUMNS"]


def test_refusals_are_sqlext_errors(connect, tmp_path):
    import sqlext
    from sqlext.errors import AnalysisException, UnsupportedOperationError
    path = str(tmp_path / "r")
    sqlext.write(connect.createDataFrame([(1, "a")], "id long, v string"), path)
    t = sqlext.DeltaTable.forPath(connect, path)
    with pytest.raises(UnsupportedOperationError, match="subquer"):
        t.delete("id IN (SELECT 1)")
    with pytest.raises(AnalysisException, match="deterministic"):
        t.delete("rand() > 0.5")
    with pytest.raises(AnalysisException, match="nope"):
        t.update("nope = 1", {"v": "'x'"})
    with pytest.raises(AnalysisException, match="one row"):
        t.update("id = 1", {"v": "cast(count(*) as string)"})
    assert rows(path) == [(1, "a")]


def test_errors_are_pysparks_classes_and_syntax_errors_sparks(connect, tmp_path):
    # issue 27 on Spark Connect: pyspark's classes catch sqlext's errors; a syntax error is the
    # server parser's (asked with EXPLAIN, which runs nothing), placed in the user's script
    import pyspark.errors

    import sqlext
    from sqlext.errors import ParseError
    path = str(tmp_path / "e")
    sqlext.write(connect.createDataFrame([(1, "a")], "id long, v string"), path)
    with pytest.raises(pyspark.errors.AnalysisException) as err:
        sqlext.sql(connect, f"SELECT * FROM delta.`{path}` VERSION AS OF 9")
    assert err.value.getCondition() == "DELTA_VERSION_NOT_FOUND"
    with pytest.raises(ParseError) as err:
        sqlext.sql(connect, f"SELECT 1;\nDELETE FROM delta.`{path}` WHERE id = = 1")
    assert str(err.value).startswith("[PARSE_SYNTAX_ERROR] Syntax error at or near '='. "
                                     f"SQLSTATE: 42601 (line 2, pos {len(path) + 32})")
    assert isinstance(err.value, pyspark.errors.ParseException)
    assert rows(path) == [(1, "a")]
