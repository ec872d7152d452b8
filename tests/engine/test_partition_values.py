"""Partition values of every kind, written by sqlext and read back exactly by sqlext, deltalake
and DuckDB."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from deltalake import write_deltalake

import sqlext
from tests.support.table_checks import actions_of, arrow, assert_readers_agree
from tests.support import assert_same_rows

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's

UTC = dt.timezone.utc

STRINGS = [None, "", "a/b", "k=v", "100%", "50%25", "with space", " lead and trail ",
           "ünïcødé ✓ 日本", "a:b#c?d&e", "__HIVE_DEFAULT_PARTITION__x"]


def test_string_partition_values(spark, table_path):
    rows = [(i, v) for i, v in enumerate(STRINGS)]
    sqlext.write(spark.createDataFrame(rows, "id int, p string"), str(table_path),
                 partitionBy=["p"])
    # Spark semantics: the empty string is written as null, so all readers see NULL
    expected = [(i, None if v == "" else v) for i, v in rows]
    assert_readers_agree(spark, table_path, arrow(["id", "p"], expected))
    logged = {a["partitionValues"]["p"] for a in actions_of(table_path, 0, "add")}
    assert logged == {v for v in STRINGS if v != ""} | {None}
    # a filter on a value with special characters finds exactly its rows
    for value in ("a/b", "k=v", "100%", "ünïcødé ✓ 日本"):
        got = sqlext.read(spark, str(table_path), filter=f"p = '{value}'")
        assert_same_rows(got, arrow(["id", "p"], [r for r in expected if r[1] == value]))


def test_empty_string_partition_value_written_by_delta_rs_reads_as_null(spark, tmp_path):
    # delta-rs writes partitionValues {"p": ""} for an empty string; the protocol reads it as null
    path = tmp_path / "rs"
    write_deltalake(str(path), pa.table({"id": [1, 2, 3], "p": ["", None, "x"]}),
                    partition_by=["p"])
    assert "" in {a["partitionValues"]["p"] for a in actions_of(path, 0, "add")}
    assert_readers_agree(spark, path, arrow(["id", "p"], [(1, None), (2, None), (3, "x")]))
    assert sqlext.read(spark, str(path), filter="p IS NULL").count() == 2
    # overwriting the null partition replaces the "" files and the null ones alike
    sqlext.write(spark.createDataFrame([(9, None)], "id long, p string"), str(path),
                 mode="overwrite", partitionOverwriteMode="dynamic")
    assert_readers_agree(spark, path, arrow(["id", "p"], [(9, None), (3, "x")]))
    sqlext.write(spark.createDataFrame([(10, "x")], "id long, p string"), str(path),
                 mode="overwrite", replaceWhere="p IS NULL OR p = 'x'")
    assert_readers_agree(spark, path, arrow(["id", "p"], [(10, "x")]))


TYPED = {
    "date": [dt.date(2024, 1, 31), dt.date(1970, 1, 1), dt.date(1, 1, 1), None],
    "timestamp": [dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
                  dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
                  dt.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), None],
    "decimal(10,2)": [Decimal("1.50"), Decimal("-3.00"), Decimal("12345678.99"), None],
    "boolean": [True, False, None],
    "int": [0, -5, 2147483647, None],
    "bigint": [-9223372036854775808, 42, None],
    "double": [1.25, -0.5, None],
}


@pytest.mark.parametrize("type_name", list(TYPED))
def test_typed_partition_values(spark, table_path, type_name):
    rows = [(i, v) for i, v in enumerate(TYPED[type_name])]
    sqlext.write(spark.createDataFrame(rows, f"id int, p {type_name}"), str(table_path),
                 partitionBy=["p"])
    assert_readers_agree(spark, table_path, arrow(["id", "p"], rows))
    assert sqlext.read(spark, str(table_path)).schema["p"].dataType.simpleString() == type_name


def test_timestamp_partition_values_are_logged_in_utc(spark, table_path):
    """Spark names the directory in the session time zone; the log holds UTC, as readers expect."""
    value = dt.datetime(2024, 7, 1, 22, 30, 0, 250000, tzinfo=UTC)
    key = "spark.sql.session.timeZone"
    spark.conf.set(key, "America/New_York")
    try:
        sqlext.write(spark.createDataFrame([(1, value)], "id int, p timestamp"), str(table_path),
                     partitionBy=["p"])
    finally:
        spark.conf.set(key, "UTC")
    assert actions_of(table_path, 0, "add")[0]["partitionValues"]["p"] == \
        "2024-07-01 22:30:00.250000"
    assert_readers_agree(spark, table_path, arrow(["id", "p"], [(1, value)]))


def test_multiple_partition_columns(spark, table_path):
    rows = [(1, "a/b", dt.date(2024, 1, 1), True, 7),
            (2, None, dt.date(2024, 1, 1), False, None),
            (3, "a/b", None, None, 7),
            (4, "é x", dt.date(2023, 12, 31), True, -1),
            (5, "", dt.date(2023, 12, 31), True, -1)]
    cols = ["id", "s", "d", "b", "n"]
    df = spark.createDataFrame(rows, "id int, s string, d date, b boolean, n int")
    sqlext.write(df, str(table_path), partitionBy=["s", "d", "b", "n"])
    expected = [(i, None if s == "" else s, d, b, n) for i, s, d, b, n in rows]
    assert_readers_agree(spark, table_path, arrow(cols, expected))
    paths = {a["path"] for a in actions_of(table_path, 0, "add")}
    assert any(p.startswith("s=a%252Fb/d=2024-01-01/b=true/n=7/") for p in paths), paths
