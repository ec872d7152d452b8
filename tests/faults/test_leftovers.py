"""No leftovers in the table root after writes (issue 12, section 3): the per-write staging
directory and its shared parent ``_sqlext_staging`` are gone once a write ends, unless another
write is still staging files there."""

from __future__ import annotations

import os

import sqlext
from sqlext import DeltaTable
from tests.support.dml_cases import SPARK_SCHEMA, rows_table
from tests.support.table_checks import assert_readers_agree

ROWS = [(i, i % 2, "r", i) for i in range(6)]


def _root(path) -> list[str]:
    return sorted(n for n in os.listdir(path) if n.startswith("_"))


def test_no_staging_directory_after_writes_and_dml(spark, table_path):
    sqlext.write(spark.createDataFrame(ROWS, SPARK_SCHEMA), str(table_path), partitionBy=["p"],
                 configuration={"delta.enableChangeDataFeed": "true"})
    assert _root(table_path) == ["_delta_log"]
    sqlext.write(spark.createDataFrame([(6, 0, "new", 6)], SPARK_SCHEMA), str(table_path))
    t = DeltaTable.forPath(spark, str(table_path))
    t.delete("id = 1")
    t.update("id = 2", {"s": "'u'"})
    (t.alias("t").merge(spark.createDataFrame([(3, 1, "m", 3)], SPARK_SCHEMA).alias("s"),
                        "t.id = s.id").whenMatchedUpdateAll().execute())
    assert _root(table_path) == ["_change_data", "_delta_log"]
    expected = [(0, 0, "r", 0), (2, 0, "u", 2), (3, 1, "m", 3), (4, 0, "r", 4), (5, 1, "r", 5),
                (6, 0, "new", 6)]
    assert_readers_agree(spark, table_path, rows_table(expected))


def test_another_writes_staging_files_are_left_alone(spark, table_path):
    sqlext.write(spark.createDataFrame(ROWS, SPARK_SCHEMA), str(table_path))
    busy = table_path / "_sqlext_staging" / "0123456789abcdef0123456789abcdef"
    busy.mkdir(parents=True)
    (busy / "part-00000.parquet").write_bytes(b"in progress")
    sqlext.write(spark.createDataFrame([(6, 0, "new", 6)], SPARK_SCHEMA), str(table_path))
    assert os.listdir(busy) == ["part-00000.parquet"]
    assert os.listdir(table_path / "_sqlext_staging") == [busy.name]


def test_a_write_failing_after_moving_files_deletes_them(spark, table_path, monkeypatch):
    """A write that fails while moving its files into the table (here: reading the second file's
    footer) leaves the table's directory exactly as it was: nothing will commit those files."""
    from sqlext.engine.io import files
    sqlext.write(spark.createDataFrame(ROWS, SPARK_SCHEMA), str(table_path), partitionBy=["p"])
    before = sorted(str(p.relative_to(table_path)) for p in table_path.rglob("*"))
    real, calls = files.file_stats, []

    def failing_stats(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk went away")
        return real(*args, **kwargs)

    monkeypatch.setattr(files, "file_stats", failing_stats)
    try:
        sqlext.write(spark.createDataFrame(ROWS, SPARK_SCHEMA), str(table_path), mode="append")
    except Exception as exc:   # noqa: BLE001 - the wrapping is tested elsewhere
        assert "disk went away" in str(exc) or isinstance(exc.__cause__, OSError)
    else:
        raise AssertionError("the write should have failed")
    assert len(calls) == 2
    assert sorted(str(p.relative_to(table_path)) for p in table_path.rglob("*")) == before
