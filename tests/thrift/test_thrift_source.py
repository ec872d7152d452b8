"""The Python data source behind ``sqlext-thriftserver``'s catalog entries
(:mod:`sqlext.thrift.source`), read in the test session: it must give the rows ``sqlext.read``
gives, for the current version, whatever the table's layout."""

from __future__ import annotations

import pytest

import sqlext
from sqlext.thrift.source import PUSHDOWN_CONF, DeltaTableSource, source_for, source_name
from tests.support.spark import spark_conf


@pytest.fixture(scope="module")
def source(spark):
    spark.dataSource.register(DeltaTableSource)
    return "sqlext_delta"


def rows(df):
    return sorted((tuple(r) for r in df.collect()), key=repr)


def test_reads_what_sqlext_reads_across_layouts(spark, source, tmp_path):
    path = str(tmp_path / "t")
    sqlext.sql(spark, f"""
        CREATE TABLE delta.`{path}` (id INT, amount DECIMAL(10, 2), tag STRING, at TIMESTAMP,
                                     items ARRAY<STRUCT<k: STRING, n: INT>>,
                                     attrs MAP<STRING, STRUCT<a: INT>>)
          USING delta PARTITIONED BY (tag, at)
          TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.columnMapping.mode' = 'name');
        INSERT INTO delta.`{path}` VALUES
          (1, 1.50, 'x', TIMESTAMP'2024-01-01 10:00:00', array(named_struct('k', 'a', 'n', 1)),
           map('m', named_struct('a', 1))),
          (2, 2.25, NULL, TIMESTAMP'2024-01-02 00:00:00.123456', NULL, NULL),
          (3, NULL, 'x', TIMESTAMP'2024-01-01 10:00:00', array(), map());
        DELETE FROM delta.`{path}` WHERE id = 3;
        ALTER TABLE delta.`{path}` ADD COLUMNS (extra STRING);
        ALTER TABLE delta.`{path}` RENAME COLUMN amount TO price;
        INSERT INTO delta.`{path}` VALUES (4, 4.00, 'y', NULL, NULL, NULL, 'e');
    """)
    expected = rows(sqlext.read(spark, path))
    got = spark.read.format(source).load(path)
    assert got.columns == ["id", "price", "tag", "at", "items", "attrs", "extra"]
    assert rows(got.select(*sqlext.read(spark, path).columns)) == expected
    assert [r[0] for r in sorted(expected)] == [1, 2, 4]


def test_each_query_reads_the_current_version(spark, source, tmp_path):
    path = str(tmp_path / "t")
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (id INT) USING delta")

    def read():     # a new query each time, as each JDBC statement is
        return rows(spark.read.format(source).load(path))
    assert read() == []                                # no files: an empty table
    sqlext.sql(spark, f"INSERT INTO delta.`{path}` VALUES (1), (2)")
    assert read() == [(1,), (2,)]
    sqlext.sql(spark, f"DELETE FROM delta.`{path}` WHERE id = 1")
    assert read() == [(2,)]
    with pytest.raises(Exception, match="read-only"):
        spark.range(1).selectExpr("CAST(id AS INT) AS id").write.format(source).mode(
            "append").save(path)
    assert read() == [(2,)]


def test_filters_skip_files_and_rows_stay_spark_s(spark, tmp_path):
    """A table's own source (as catalog entries use) reads only the files a filter may match,
    by partition values and statistics; Spark still applies every filter to the rows."""
    path = str(tmp_path / "t")
    sqlext.sql(spark, f"""
        CREATE TABLE delta.`{path}` (id INT, tag STRING, day DATE) USING delta PARTITIONED BY (tag);
        INSERT INTO delta.`{path}` VALUES (1, 'x', DATE'2024-01-01');
        INSERT INTO delta.`{path}` VALUES (2, 'x', DATE'2024-01-02');
        INSERT INTO delta.`{path}` VALUES (3, 'y', DATE'2024-01-03');
        INSERT INTO delta.`{path}` VALUES (4, NULL, DATE'2024-01-04');
    """)
    spark.dataSource.register(source_for(path))
    assert source_name(path) != source_name(path + "2")
    with spark_conf(spark, {PUSHDOWN_CONF: "true"}):
        # one file per INSERT; NULL <> 'x' is not true, so NOT (tag = 'x') skips the NULL file;
        # Spark pushes no OR and no expression of a column
        for condition, files in (("true", 4), ("tag = 'x'", 2), ("tag IS NULL", 1),
                                 ("NOT (tag = 'x')", 1), ("tag IN ('y', 'z')", 1), ("id > 2", 2),
                                 ("day >= '2024-01-03'", 2), ("tag = 'x' AND id = 2", 1),
                                 ("id = 1 OR tag = 'y'", 4), ("id + 1 = 2", 4)):
            df = spark.read.format(source_name(path)).load().where(condition)
            assert df.rdd.getNumPartitions() == files, condition
            assert rows(df) == rows(sqlext.read(spark, path).where(condition)), condition
