"""Reading a DataFrame's columns on the driver when it is only a scan of local parquet files, and
refusing every other shape (so that the caller asks Spark)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from sqlext.engine.io.plain_parquet import local_parquet_files, read_columns


@pytest.fixture
def parquet_dir(tmp_path):
    """Two files with columns ID (int32), name (string), x (double); one NULL ID."""
    root = tmp_path / "src dir%"
    root.mkdir()
    pq.write_table(pa.table({"ID": pa.array([1, 2, None], pa.int32()),
                             "name": ["a", "b", "c"], "x": [0.5, 1.5, 2.5]}), root / "one.parquet")
    pq.write_table(pa.table({"ID": pa.array([7], pa.int32()), "name": ["z"], "x": [9.0]}),
                   root / "two.parquet")
    return root


def test_a_plain_scan_is_read_from_its_files(spark, parquet_dir):
    df = spark.read.parquet(str(parquet_dir)).alias("s")
    files = local_parquet_files(df)
    assert sorted(files) == sorted(str(p) for p in parquet_dir.glob("*.parquet"))
    ids, names = read_columns(sorted(files), ["id", "NAME"])
    assert ids.to_pylist() == [1, 2, None, 7] and names.to_pylist() == ["a", "b", "c", "z"]
    assert ids.to_pylist() == [r[0] for r in df.select("ID").collect()]
    # a selection of columns is still a plain scan
    assert local_parquet_files(df.select("name", "ID")) == files


@pytest.mark.parametrize("shape", ["filter", "computed column", "renamed column", "local rows",
                                   "union", "json"])
def test_other_shapes_are_refused(spark, parquet_dir, tmp_path, shape):
    df = spark.read.parquet(str(parquet_dir))
    if shape == "filter":
        df = df.filter("x > 1")
    elif shape == "computed column":
        df = df.select((F.col("ID") + 1).alias("ID"))
    elif shape == "renamed column":
        df = df.select(F.col("name").alias("ID"))
    elif shape == "local rows":
        df = spark.createDataFrame([(1, "a")], "ID int, name string")
    elif shape == "union":
        df = df.unionByName(df)
    else:
        df.write.json(str(tmp_path / "j"))
        df = spark.read.json(str(tmp_path / "j"))
    assert local_parquet_files(df) is None


def test_files_that_lack_a_column_or_disagree_on_its_type_are_refused(tmp_path):
    pq.write_table(pa.table({"id": [1, 2]}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"other": [3]}), tmp_path / "b.parquet")
    pq.write_table(pa.table({"id": ["3"]}), tmp_path / "c.parquet")
    pq.write_table(pa.table({"id": [4], "ID": [5]}), tmp_path / "d.parquet")
    a, b, c, d = (str(tmp_path / f"{n}.parquet") for n in "abcd")
    assert read_columns([a], ["id"])[0].to_pylist() == [1, 2]
    assert read_columns([a, b], ["id"]) is None
    assert read_columns([a, c], ["id"]) is None
    assert read_columns([d], ["id"]) is None
    assert read_columns([], ["id"]) is None
    assert read_columns([str(tmp_path / "missing.parquet")], ["id"]) is None
