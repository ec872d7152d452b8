"""``sqlext.install(spark)``: delta-spark code as written (``format("delta")``, ``spark.sql``,
``spark.table``, ``saveAsTable``, ``insertInto``, ``writeTo``) runs on sqlext; each result checked against
sqlext's own API and delta-rs."""

from __future__ import annotations

import uuid

import pytest
from pyspark.sql import functions as F

import sqlext
from sqlext.drop_in import uninstall
from sqlext.engine.session import native_sql
from sqlext.errors import (SqlextError, TableAlreadyExistsError, TableNotFoundError,
                           UnsupportedOperationError)
from tests.support import assert_same_rows, read_deltalake
from tests.support.table_checks import latest_version

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's

DDL = "id int, s string, p string"
ROWS = [(1, "a1", "a"), (2, "b1", "b"), (3, "c1", "c"), (4, "a2", "a")]



def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _executed_plan(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def test_format_delta_write_and_read_round_trip(drop_in, table_path):
    spark, path = drop_in, str(table_path)
    df = spark.createDataFrame(ROWS, DDL)
    df.write.format("delta").partitionBy("p").save(path)
    with pytest.raises(TableAlreadyExistsError):       # Spark's default mode: errorifexists
        df.write.format("delta").save(path)
    spark.createDataFrame([(5, "b2", "b")], DDL).write.format("delta").mode("append").save(path)
    (spark.createDataFrame([(9, "a9", "a")], DDL).write.format("delta").mode("overwrite")
     .option("replaceWhere", "p = 'a'").option("userMetadata", "fix a").save(path))
    assert latest_version(table_path) == 2

    expected = [(2, "b1", "b"), (3, "c1", "c"), (5, "b2", "b"), (9, "a9", "a")]
    latest = spark.read.format("delta").load(path)
    assert _rows(latest) == expected
    assert_same_rows(read_deltalake(table_path), latest.toArrow(), sort_by=["id"])
    assert _rows(spark.read.format("delta").option("versionAsOf", 0).load(path)) == ROWS
    assert _rows(spark.read.load(path, format="delta", versionAsOf="1")) == sorted(
        ROWS + [(5, "b2", "b")])
    assert sqlext.DeltaTable.forPath(spark, path).history(1).collect()[0][
        "userMetadata"] == "fix a"
    # the read is Spark's own parquet scan, pruned by partition: no rows through Python
    pruned = spark.read.format("delta").load(path).where("p = 'b'")
    plan = _executed_plan(pruned)
    assert "FileScan parquet" in plan and "Python" not in plan
    assert _rows(pruned) == [(2, "b1", "b"), (5, "b2", "b")]


def test_read_change_feed_option(drop_in, table_path):
    spark, path = drop_in, str(table_path)
    spark.createDataFrame(ROWS, DDL).write.format("delta").save(path)
    spark.sql(f"UPDATE delta.`{path}` SET s = 'x' WHERE id = 1")
    feed = (spark.read.format("delta").option("readChangeFeed", "true")
            .option("startingVersion", 1).load(path))
    expected = sqlext.changes(spark, path, startingVersion=1)
    assert _rows(feed) == _rows(expected)
    assert {r["_change_type"] for r in feed.collect()} == {"update_preimage", "update_postimage"}
    with pytest.raises(SqlextError, match="startingVersion"):
        spark.read.format("delta").option("readChangeFeed", "true").load(path)


def test_spark_sql_runs_dml_and_time_travel_through_sqlext(drop_in, table_path):
    spark, path = drop_in, str(table_path)
    spark.createDataFrame(ROWS, DDL).write.format("delta").save(path)
    deleted = spark.sql(f"DELETE FROM delta.`{path}` WHERE p = 'a'").collect()[0]
    assert deleted["num_affected_rows"] == 2
    spark.createDataFrame([(2, "B", "b"), (7, "g", "g")], DDL).createOrReplaceTempView("upd")
    merged = spark.sql(f"MERGE INTO delta.`{path}` t USING upd s ON t.id = s.id "
                       "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *").collect()[0]
    assert (merged["num_updated_rows"], merged["num_inserted_rows"]) == (1, 1)
    assert _rows(spark.sql(f"SELECT * FROM delta.`{path}` VERSION AS OF 0")) == ROWS
    assert _rows(spark.sql(f"SELECT * FROM delta.`{path}`")) == [
        (2, "B", "b"), (3, "c1", "c"), (7, "g", "g")]
    assert_same_rows(read_deltalake(table_path),
                     spark.sql(f"SELECT * FROM delta.`{path}`").toArrow(), sort_by=["id"])
    # statements sqlext does not plan reach Spark as written (Spark 4.0 reads 'o''neil' as two
    # adjacent literals, later releases as one with a quote), parameters included
    quoted = "SELECT 'o''neil' AS s"
    assert spark.sql(quoted).collect() == native_sql(spark, quoted).collect()
    assert spark.sql("SELECT :a + 1 AS x", args={"a": 41}).collect()[0]["x"] == 42


def test_save_as_table_then_spark_table_reads_the_snapshot(drop_in):
    spark = drop_in
    name = f"drop_in_{uuid.uuid4().hex[:8]}"
    spark.createDataFrame(ROWS, DDL).write.format("delta").saveAsTable(name)
    spark.sql(f"DELETE FROM {name} WHERE id = 1")
    spark.createDataFrame([(6, "c6", "c")], "a int, b string, c string").write.insertInto(name)
    expected = [(2, "b1", "b"), (3, "c1", "c"), (4, "a2", "a"), (6, "c6", "c")]
    assert _rows(spark.table(name)) == expected        # the removed file is not read
    assert _rows(spark.read.table(name)) == expected
    assert _rows(spark.sql(f"SELECT * FROM {name}")) == expected
    spark.createDataFrame([(8, "x", "x")], DDL).write.mode("overwrite").insertInto(name)
    assert _rows(spark.table(name)) == [(8, "x", "x")]
    sqlext.sql(spark, f"DROP TABLE {name}")


def test_write_to_v2_builder(drop_in):
    spark = drop_in
    name = f"drop_in_v2_{uuid.uuid4().hex[:8]}"
    df = spark.createDataFrame(ROWS, DDL)
    with pytest.raises(TableNotFoundError):
        df.writeTo(name).using("delta").append()
    (df.writeTo(name).using("delta").partitionedBy("p")
     .tableProperty("delta.appendOnly", "false").create())
    table = sqlext.DeltaTable.forName(spark, name)
    detail = table.detail().collect()[0]
    assert detail["partitionColumns"] == ["p"]
    assert detail["properties"]["delta.appendOnly"] == "false"
    with pytest.raises(TableAlreadyExistsError):
        df.writeTo(name).using("delta").create()
    spark.createDataFrame([(5, "b5", "b")], DDL).writeTo(name).append()
    spark.createDataFrame([(6, "a6", "a")], DDL).writeTo(name).overwrite(F.col("p") == "a")
    assert _rows(spark.table(name)) == [(2, "b1", "b"), (3, "c1", "c"), (5, "b5", "b"),
                                        (6, "a6", "a")]
    spark.createDataFrame([(7, "c7", "c")], DDL).writeTo(name).overwritePartitions()
    assert _rows(spark.table(name)) == [(2, "b1", "b"), (5, "b5", "b"), (6, "a6", "a"),
                                        (7, "c7", "c")]
    spark.createDataFrame([(1, 2.5)], "id int, x double").writeTo(name).createOrReplace()
    assert _rows(spark.table(name)) == [(1, 2.5)]
    assert table.detail().collect()[0]["partitionColumns"] == []
    assert [r["operation"] for r in table.history().collect()] == [
        "CREATE OR REPLACE TABLE AS SELECT", "WRITE", "WRITE", "WRITE", "CREATE TABLE AS SELECT"]
    assert_same_rows(read_deltalake(table.detail().collect()[0]["location"].removeprefix(
        "file:")), spark.table(name).toArrow())
    sqlext.sql(spark, f"DROP TABLE {name}")


def test_spark_catalog_lists_sqlext_tables(drop_in):
    spark = drop_in
    name = f"drop_in_cat_{uuid.uuid4().hex[:8]}"
    sqlext.sql(spark, f"CREATE TABLE {name} (id INT, p STRING) USING delta PARTITIONED BY (p) "
                      "COMMENT 'orders by day'")
    spark.createDataFrame([(1, "x")], "v int, w string").createOrReplaceTempView("tmp_view")
    listed = {t.name: t for t in spark.catalog.listTables()}
    assert listed[name].tableType == "MANAGED" and listed[name].description == "orders by day"
    assert listed[name].namespace == ["default"] and not listed[name].isTemporary
    assert listed["tmp_view"].isTemporary                  # Spark's own entries stay
    assert [t.name for t in spark.catalog.listTables(pattern="drop_in_cat_*")] == [name]
    assert spark.catalog.tableExists(name) and spark.catalog.tableExists(name, "default")
    assert spark.catalog.getTable(name).name == name
    # sqlext's own checks still ask Spark's catalog alone: a statement sqlext does not support
    # on a sqlext table is refused as before, not handed to Spark
    with pytest.raises(UnsupportedOperationError, match="not supported for sqlext tables"):
        spark.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS")
    columns = {c.name: c for c in spark.catalog.listColumns(name)}
    assert columns["id"].dataType == "int" and columns["p"].isPartition
    uninstall(spark)
    assert name not in {t.name for t in spark.catalog.listTables()}
    assert not spark.catalog.tableExists(name)
    sqlext.install(spark)
    sqlext.sql(spark, f"DROP TABLE {name}")
    assert name not in {t.name for t in spark.catalog.listTables()}
    spark.catalog.dropTempView("tmp_view")


def test_unknown_writer_option_is_refused_and_writes_nothing(drop_in, table_path):
    spark, path = drop_in, str(table_path)
    spark.createDataFrame(ROWS, DDL).write.format("delta").save(path)
    with pytest.raises(SqlextError, match="(?i)maxRecordsPerFile.*sqlext.write"):
        (spark.createDataFrame(ROWS, DDL).write.format("delta").mode("append")
         .option("maxRecordsPerFile", 1).save(path))
    assert latest_version(table_path) == 0


def test_table_property_options_keep_their_names(drop_in, table_path):
    """``.option("delta.enableChangeDataFeed", "false")`` is stored as written (it was stored
    lower-cased beside sqlext's default ``delta.enableChangeDataFeed=true``), and
    ``delta.appendOnly`` given as an option is enforced."""
    from sqlext.log.table import DeltaLog
    spark, path = drop_in, str(table_path)
    (spark.createDataFrame(ROWS, DDL).write.format("delta")
     .option("delta.enableChangeDataFeed", "false").options(**{"delta.appendOnly": "true"})
     .save(path))
    configuration = DeltaLog(path).snapshot().metadata.configuration
    assert configuration["delta.enableChangeDataFeed"] == "false"
    assert configuration["delta.appendOnly"] == "true"
    assert "delta.enablechangedatafeed" not in configuration
    with pytest.raises(SqlextError, match="(?i)append"):
        spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 1")
    assert latest_version(table_path) == 0


def test_sessions_without_install_are_untouched(spark, table_path):
    sqlext.install(spark)
    uninstall(spark)
    path = str(table_path)
    spark.createDataFrame(ROWS, DDL).write.parquet(path)    # other formats pass through
    assert _rows(spark.read.parquet(path)) == ROWS
    with pytest.raises(Exception, match="DATA_SOURCE_NOT_FOUND|delta"):
        spark.read.format("delta").load(path)
    assert "sql" not in spark.__dict__
