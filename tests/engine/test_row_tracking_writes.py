"""Row tracking on sqlext's own write paths (checked in the log; delta-spark reads the ids in
tests/deltaspark/test_deltaspark_row_tracking.py): the session default turns it on for new
tables, every path that adds files (DataFrame write, overwrite, OPTIMIZE, RESTORE) gives fresh,
non-overlapping ids and records the mark, and DuckDB and delta-rs read the table the same."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

import sqlext
from sqlext.log import row_tracking
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows, read_deltalake, read_duckdb
from tests.support.kernel_tables import clear_caches
from tests.support.spark import spark_conf

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's


def _ranges(path) -> list[tuple[int, int]]:
    """(first, last) fresh row id of each live file, sorted; checks they never overlap and stay
    within the high-water mark."""
    clear_caches()
    snap = DeltaLog(str(path)).snapshot()
    spans = sorted((f.extra["baseRowId"], f.extra["baseRowId"] + f.parsed_stats()["numRecords"] - 1)
                   for f in snap.files)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:])), spans
    assert not spans or spans[-1][1] <= row_tracking.high_water_mark(snap.domains)
    return spans


def test_every_write_path_assigns_ids(spark, tmp_path):
    path = tmp_path / "t"
    with spark_conf(spark, {"spark.databricks.delta.properties.defaults.enableRowTracking":
                            "true"}):
        sqlext.write(spark.range(0, 100, 1, 3).selectExpr("id", "id % 2 AS p"), str(path),
                     partitionBy=["p"])
    snap = DeltaLog(str(path)).snapshot()
    assert snap.configuration["delta.enableRowTracking"] == "true"
    assert {"rowTracking", "domainMetadata"} <= set(snap.protocol.writer_features)
    assert row_tracking.ROW_ID_COLUMN_KEY in snap.configuration
    assert sum(b - a + 1 for a, b in _ranges(path)) == 100
    sqlext.write(spark.range(100, 150).selectExpr("id", "id % 2 AS p"), str(path), mode="append")
    assert sum(b - a + 1 for a, b in _ranges(path)) == 150
    sqlext.sql(spark, f"OPTIMIZE delta.`{path}`")
    spans = _ranges(path)
    assert len(spans) == 2 and spans[0][0] >= 150          # compaction: fresh ids above the mark
    # ... and the rows keep their stable ids (0-149, as the appends gave them) materialized
    clear_caches()
    snap = DeltaLog(str(path)).snapshot()
    id_col = snap.configuration[row_tracking.ROW_ID_COLUMN_KEY]
    kept = spark.read.parquet(*[str(path / f.path) for f in snap.files]).select(f"`{id_col}`")
    assert sorted(r[0] for r in kept.collect()) == list(range(150))
    sqlext.write(spark.range(0, 10).selectExpr("id * 2 AS id", "0L AS p"), str(path),
                 mode="overwrite", replaceWhere="p = 0")
    _ranges(path)
    sqlext.DeltaTable.forPath(spark, str(path)).restoreToVersion(1)
    _ranges(path)
    mine = sqlext.read(spark, str(path))
    assert mine.count() == 150
    assert_same_rows(mine, read_duckdb(path), sort_by=["id"])


def test_materialized_columns_stay_hidden(spark, tmp_path):
    """Files DELETE and UPDATE rewrite carry the materialized row id / commit version columns;
    sqlext, DuckDB and delta-rs read only the table's columns, the same rows."""
    path = tmp_path / "t"
    name = f"delta.`{path}`"
    sqlext.sql(spark, f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta "
                      "TBLPROPERTIES ('delta.enableRowTracking' = 'true')")
    sqlext.sql(spark, f"INSERT INTO {name} SELECT id, concat('v', id) FROM range(0, 50)")
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id % 4 = 0")
    sqlext.sql(spark, f"UPDATE {name} SET v = 'u' WHERE id % 5 = 0")
    snap = DeltaLog(str(path)).snapshot()
    columns = set()
    for f in snap.files:
        columns |= set(pq.read_schema(path / f.path).names)
    assert snap.configuration[row_tracking.ROW_ID_COLUMN_KEY] in columns
    mine = sqlext.read(spark, str(path))
    assert mine.columns == ["id", "v"]
    assert mine.count() == 37
    assert_same_rows(mine, read_duckdb(path), sort_by=["id"])
    assert_same_rows(mine, read_deltalake(path), sort_by=["id"])
