"""A small INSERT and a one-row UPDATE on the driver path cost few py4j round trips (issue 30:
a statement's fixed cost), and the shortcuts that save them mean what the long way means.

Measured on a warm session (the session's constants known) at a table version below the first
checkpoint: an INSERT of 3 rows took 121 round trips before (a cast to a ``DataType`` is nine, a
renaming ``toDF`` eight, a projection of the data already in the table's shape eight), a
one-row UPDATE 144 (a reference per column where one ``*`` does, the condition's own
projection).
"""

from __future__ import annotations

import gc
import threading

import py4j.clientserver
import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

import sqlext
from sqlext.engine.schemas import cast, plan_write, sql_type
from tests.support.compare import rows

RENDERED = [T.BooleanType(), T.ByteType(), T.ShortType(), T.IntegerType(), T.LongType(),
            T.FloatType(), T.DoubleType(), T.DecimalType(10, 2), T.DecimalType(38, 0),
            T.DateType(), T.TimestampType(), T.TimestampNTZType(), T.BinaryType(), T.StringType()]
NOT_RENDERED = [T.StringType("UTF8_LCASE"), T.CharType(3), T.VarcharType(5),
                T.ArrayType(T.LongType()), T.MapType(T.StringType(), T.LongType()),
                T.StructType([T.StructField("a", T.LongType())]), T.DayTimeIntervalType(),
                T.NullType()]


@pytest.mark.parametrize("data_type", RENDERED, ids=lambda t: t.simpleString())
def test_a_cast_to_the_sql_text_is_the_cast_to_the_type(spark, data_type):
    text = "2024-01-02" if isinstance(data_type, (T.DateType, T.TimestampType,
                                                  T.TimestampNTZType)) else "1"
    frame = spark.sql(f"SELECT '{text}' AS x")
    short = frame.select(cast(F.col("x"), data_type).alias("y"))
    long = frame.select(F.col("x").cast(data_type).alias("y"))
    assert sql_type(data_type) is not None
    assert short.schema == long.schema and short.schema["y"].dataType == data_type
    assert str(cast(F.col("x"), data_type)) == str(F.col("x").cast(data_type))
    assert short.collect() == long.collect()


@pytest.mark.parametrize("data_type", NOT_RENDERED, ids=lambda t: t.simpleString())
def test_other_types_are_cast_to_the_type_itself(spark, data_type):
    assert sql_type(data_type) is None
    frame = spark.sql("SELECT NULL AS x")
    assert frame.select(cast(F.col("x"), data_type).alias("y")).schema["y"].dataType \
        == frame.select(F.col("x").cast(data_type).alias("y")).schema["y"].dataType


def test_data_in_the_table_shape_is_written_without_a_projection(spark):
    table = T.StructType([T.StructField("id", T.LongType()), T.StructField("v", T.StringType())])
    same = spark.sql("SELECT CAST(1 AS BIGINT) AS id, 'a' AS v")
    assert plan_write(same, table, False, "t").columns is None
    # another case, order or type, or a struct (rebuilt field by field): projected as before
    for sql in ("SELECT CAST(1 AS BIGINT) AS ID, 'a' AS v", "SELECT 'a' AS v, CAST(1 AS BIGINT) AS id",
                "SELECT 1 AS id, 'a' AS v", "SELECT CAST(1 AS BIGINT) AS id"):
        written = plan_write(spark.sql(sql), table, False, "t")
        assert written.columns is not None and len(written.columns) == 2, sql
    nested = T.StructType([T.StructField("s", T.StructType([T.StructField("a", T.LongType())]))])
    assert plan_write(spark.sql("SELECT named_struct('a', CAST(1 AS BIGINT)) AS s"), nested,
                      False, "t").columns is not None


def _round_trips(spark, sql: str) -> int:
    """The py4j commands running ``sql`` sends from this thread (py4j's finalizer thread sends
    its own, for JVM objects Python freed, whenever it runs: not counted)."""
    connection = py4j.clientserver.ClientServerConnection
    original, me, count = connection.send_command, threading.get_ident(), [0]

    def send_command(conn, command):
        count[0] += threading.get_ident() == me
        return original(conn, command)

    gc.collect()
    connection.send_command = send_command
    try:
        sqlext.sql(spark, sql)
    finally:
        connection.send_command = original
    return count[0]


def _table(spark):
    sqlext.sql(spark, "CREATE TABLE t (id BIGINT, v STRING, n BIGINT) USING delta")
    for k in range(3):       # the session's constants and Spark's cast rules known from here on
        sqlext.sql(spark, f"INSERT INTO t VALUES ({k}, 'w{k}', 0)")
        sqlext.sql(spark, f"UPDATE t SET n = n + 1 WHERE id = {k}")


def test_an_insert_of_a_few_rows_costs_few_round_trips(spark, schema):
    _table(spark)
    count = _round_trips(spark, "INSERT INTO t VALUES (10, 'a', 7), (11, 'b', 8), (12, 'c', 9)")
    assert count <= 88, count                   # 121 before (83 measured)
    count = _round_trips(spark, "INSERT INTO t (v, id) VALUES ('d', 13)")     # n: NULL
    assert count <= 88, count                   # 119 before (82 measured)
    assert rows(sqlext.sql(spark, "SELECT * FROM t WHERE id >= 10 ORDER BY id")) == [
        (10, "a", 7), (11, "b", 8), (12, "c", 9), (13, "d", None)]


def test_an_insert_of_columns_named_alike_is_by_position(spark, schema):
    _table(spark)
    # the names differ only in case: the columns are renamed before they are referenced
    sqlext.sql(spark, "INSERT INTO t SELECT 20 AS a, 'x' AS A, 21 AS n")
    sqlext.sql(spark, "INSERT INTO t SELECT n, v, id FROM VALUES (22, 'y', 23) AS s(id, v, n)")
    assert rows(sqlext.sql(spark, "SELECT * FROM t WHERE id >= 20 ORDER BY id")) == [
        (20, "x", 21), (23, "y", 22)]


def test_a_one_row_update_costs_few_round_trips(spark, schema):
    _table(spark)
    count = _round_trips(spark, "UPDATE t SET n = n + 10 WHERE id = 1")
    assert count <= 118, count                  # 144 before (114 measured)
    assert rows(sqlext.sql(spark, "SELECT * FROM t ORDER BY id")) == [
        (0, "w0", 1), (1, "w1", 11), (2, "w2", 1)]
