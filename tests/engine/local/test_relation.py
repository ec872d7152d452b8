"""Arrow rows as a Spark LocalRelation and back (sqlext.engine.local.relation): every Delta type
round-trips exactly, NULLs included, and a projection and a filter over the relation are
evaluated by Spark without a job."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal

import pyarrow as pa
import pytest
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from sqlext.engine.local.relation import collect_arrow, frame_from_arrow, is_local
from tests.support.spark import jobs_run

UTC = dt.timezone.utc

SCHEMA = T.StructType([
    T.StructField("b", T.ByteType()), T.StructField("s", T.ShortType()),
    T.StructField("i", T.IntegerType()), T.StructField("l", T.LongType()),
    T.StructField("f", T.FloatType()), T.StructField("d", T.DoubleType()),
    T.StructField("dec", T.DecimalType(10, 2)), T.StructField("wide", T.DecimalType(38, 18)),
    T.StructField("str", T.StringType()), T.StructField("bin", T.BinaryType()),
    T.StructField("flag", T.BooleanType()), T.StructField("day", T.DateType()),
    T.StructField("ts", T.TimestampType()), T.StructField("ntz", T.TimestampNTZType()),
    T.StructField("arr", T.ArrayType(T.IntegerType())),
    T.StructField("m", T.MapType(T.StringType(), T.LongType())),
    T.StructField("st", T.StructType([T.StructField("x", T.IntegerType()),
                                      T.StructField("y", T.StringType())])),
    T.StructField("deep", T.ArrayType(T.StructType([
        T.StructField("k", T.StringType()),
        T.StructField("vals", T.MapType(T.StringType(), T.ArrayType(T.DoubleType())))]))),
])

ROW = {
    "b": -128, "s": 32767, "i": -2147483648, "l": 9223372036854775807, "f": 1.5,
    "d": float("nan"), "dec": Decimal("-12345678.90"),
    "wide": Decimal("12345678901234567890.123456789012345678"),
    "str": "héllo \u2603", "bin": b"\x00\xff\x10", "flag": True, "day": dt.date(1, 1, 1),
    "ts": dt.datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC),
    "ntz": dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    "arr": [1, None, 3], "m": [("a", 1), ("b", None)], "st": {"x": None, "y": "why"},
    "deep": [{"k": "p", "vals": [("q", [1.0, None])]}, None],
}


def _table() -> pa.Table:
    nulls = {name: None for name in ROW}
    return pa.Table.from_pylist([ROW, nulls, {**ROW, "ts": dt.datetime(1900, 1, 1, tzinfo=UTC)}],
                                schema=to_arrow_schema(SCHEMA, timezone="UTC"))


def test_every_type_round_trips_exactly(spark):
    table = _table()
    df = frame_from_arrow(spark, table, SCHEMA)
    assert df._jdf.queryExecution().logical().nodeName() == "LocalRelation"
    assert df.schema == SCHEMA
    back = collect_arrow(df)
    assert back is not None
    assert back.schema.equals(table.schema)
    assert back.drop_columns(["d"]).equals(table.drop_columns(["d"]))
    assert back.drop_columns(["d"]).to_pylist() == table.drop_columns(["d"]).to_pylist()
    assert [str(v) for v in back.column("d").to_pylist()] == ["nan", "None", "nan"]


def test_spark_reads_the_values_as_written(spark):
    """The JVM sees the same instants, decimals and nested values (not just a byte copy)."""
    df = frame_from_arrow(spark, _table(), SCHEMA)
    row = df.selectExpr("cast(ts as string)", "cast(ntz as string)", "cast(dec as string)",
                        "cast(wide as string)", "m['a']", "st.y", "deep[0].vals['q'][0]",
                        "hex(bin)", "cast(day as string)").collect()[0]
    assert list(row) == ["2024-02-29 23:59:59.999999", "9999-12-31 23:59:59.999999",
                         "-12345678.90", "12345678901234567890.123456789012345678", 1, "why",
                         1.0, "00FF10", "0001-01-01"]


def test_schema_defaults_to_sparks_reading_of_arrow(spark):
    table = pa.table({"id": pa.array([1, None], pa.int32()),
                      "ts": pa.array([0, 1], pa.timestamp("us")),
                      "name": pa.array(["a", "b"], pa.large_string())})
    df = frame_from_arrow(spark, table)
    assert [f.dataType for f in df.schema.fields] == [T.IntegerType(), T.TimestampNTZType(),
                                                     T.StringType()]
    assert collect_arrow(df).column("name").to_pylist() == ["a", "b"]


def test_projection_and_filter_run_no_job(spark):
    table = pa.table({"id": pa.array(range(100), pa.int64()),
                      "v": pa.array([f"v{i}" if i % 7 else None for i in range(100)])})

    def statement():
        df = frame_from_arrow(spark, table)
        out = df.where("id % 3 = 0 AND v IS NOT NULL").selectExpr(
            "id * 2 AS twice", "upper(v) AS up", "CASE WHEN id > 50 THEN 'hi' END AS tag")
        return collect_arrow(out)

    result, jobs = jobs_run(spark, statement)
    assert jobs == 0
    expected = [i for i in range(0, 100, 3) if i % 7]
    assert result.column("twice").to_pylist() == [2 * i for i in expected]
    assert result.column("up").to_pylist() == [f"V{i}" for i in expected]
    assert result.column("tag").to_pylist() == ["hi" if i > 50 else None for i in expected]


def test_empty_result_keeps_its_schema(spark):
    df = frame_from_arrow(spark, pa.table({"id": pa.array([1, 2], pa.int64())})).where("id > 5")
    result, jobs = jobs_run(spark, lambda: collect_arrow(df))
    assert jobs == 0
    assert result.num_rows == 0 and result.schema.names == ["id"]


def test_plans_that_need_a_job_answer_none(spark):
    df = frame_from_arrow(spark, pa.table({"id": pa.array([1, 2, 2], pa.int64())}))
    grouped = df.groupBy("id").count()
    assert not is_local(grouped)
    assert collect_arrow(grouped) is None
    assert is_local(df.selectExpr("id + 1"))


def test_ansi_errors_surface_from_the_local_evaluation(spark):
    df = frame_from_arrow(spark, pa.table({"v": pa.array(["1", "x"])}))
    with pytest.raises(Exception, match="CAST_INVALID_INPUT"):
        collect_arrow(df.selectExpr("CAST(v AS INT)"))


def test_milliseconds_per_call(spark):
    """Measured, not asserted tightly (the machine is shared): a round trip of a few rows with a
    projection and a filter stays well under one Spark job's 80-200 ms."""
    table = pa.table({"id": pa.array(range(10), pa.int64()), "v": pa.array(["x"] * 10)})
    for _ in range(3):
        collect_arrow(frame_from_arrow(spark, table).where("id > 2").selectExpr("id + 1", "v"))
    started, runs = time.perf_counter(), 20
    for _ in range(runs):
        collect_arrow(frame_from_arrow(spark, table).where("id > 2").selectExpr("id + 1", "v"))
    ms = (time.perf_counter() - started) * 1000 / runs
    print(f"frame_from_arrow + filter/projection + collect_arrow: {ms:.1f} ms per call")
    assert ms < 1000
