"""VACUUM through ``DeltaTable.vacuum`` on Spark-written tables: the files deleted are exactly the
ones delta-rs's own VACUUM would delete, the latest version still reads everywhere, and a vacuumed
version gives a clear error."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlext
from sqlext import DeltaTable
from sqlext.errors import DeltaFileNotFoundError, UnsupportedOperationError
from tests.support.table_checks import assert_readers_agree, commit_info
from tests.support.spark import NO_RETENTION_CHECK, spark_conf
from tests.support import read_deltalake


def _table(spark, path) -> None:
    df = spark.range(0, 30).selectExpr("id", "cast(id % 3 as string) as part")
    sqlext.write(df, str(path), partitionBy=["part"],
                 configuration={"delta.enableChangeDataFeed": "false"})          # version 0
    sqlext.write(df.where("id >= 10"), str(path), mode="overwrite")              # version 1
    sqlext.write(df.where("id < 5"), str(path))                                  # version 2


def test_vacuum_deletes_what_deltalake_would(spark, table_path):
    from deltalake import DeltaTable as RsTable
    _table(spark, table_path)
    orphan = table_path / "part=1" / f"part-00000-{uuid.uuid4()}.c000.snappy.parquet"
    pq.write_table(pa.table({"id": [999]}), orphan)
    expected = {Path(p).as_posix() for p in RsTable(str(table_path)).vacuum(
        retention_hours=0, dry_run=True, enforce_retention_duration=False, full=True)}
    assert f"part=1/{orphan.name}" in expected
    live = assert_readers_agree(spark, table_path)
    with spark_conf(spark, NO_RETENTION_CHECK):
        deleted = DeltaTable.forPath(spark, str(table_path)).vacuum(0)
    files = {Path(r.path).relative_to(table_path).as_posix() for r in deleted.collect()
             if Path(r.path).suffix == ".parquet"}
    assert files == expected
    assert not orphan.exists()
    assert_readers_agree(spark, table_path, expected=live)
    with pytest.raises(DeltaFileNotFoundError, match="version 0") as err:
        sqlext.read(spark, str(table_path), versionAsOf=0).collect()
    assert "VACUUM" in str(err.value)
    history = DeltaTable.forPath(spark, str(table_path)).history(2).collect()
    assert [h.operation for h in history] == ["VACUUM END", "VACUUM START"]
    assert history[0].operationParameters == {"status": "COMPLETED"}
    assert commit_info(table_path, 3)["operationParameters"]["specifiedRetentionMillis"] == "0"


def test_vacuum_refuses_a_short_retention_by_default(spark, table_path):
    _table(spark, table_path)
    before = sorted(p.as_posix() for p in table_path.rglob("*"))
    with pytest.raises(UnsupportedOperationError, match="retentionDurationCheck"):
        DeltaTable.forPath(spark, str(table_path)).vacuum(1)
    assert sorted(p.as_posix() for p in table_path.rglob("*")) == before
    # the default retention (7 days) keeps everything written just now, but logs the run
    assert DeltaTable.forPath(spark, str(table_path)).vacuum().count() == 0
    assert len(read_deltalake(table_path, 0)) == 30


def test_vacuum_without_logging(spark, table_path):
    _table(spark, table_path)
    settings = {**NO_RETENTION_CHECK, "spark.databricks.delta.vacuum.logging.enabled": "false"}
    with spark_conf(spark, settings):
        assert DeltaTable.forPath(spark, str(table_path)).vacuum(0).count() > 0
    assert sorted(p.name for p in (table_path / "_delta_log").glob("*.json"))[-1] == \
        f"{2:020d}.json"
