"""Tables written by other engines: sqlext reads each exactly as deltalake does, at every version,
and after sqlext appends to a copy, deltalake still reads every version and sqlext agrees."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable as RsTable
from deltalake import write_deltalake

import sqlext
from sqlext.errors import DeletionVectorError, SqlextError, UnsupportedTableFeatureError
from sqlext.log.table import DeltaLog
from tests.support.table_checks import actions_of, read_sqlext, table_state
from tests.support import (assert_same_rows, deltalake_add_paths, deltalake_cdf, fixture_names,
                           read_deltalake, read_duckdb)
from tests.support.fixtures import fixture_path

DV_TABLE = "table-with-dv-small"
LOG_ONLY = ("latest_not_checkpointed", "with_checkpoint_no_last_checkpoint")
READABLE = [n for n in fixture_names() if n not in (DV_TABLE, *LOG_ONLY)]


def _versions(path) -> list[int]:
    """The versions deltalake can load (a log may start at a checkpoint)."""
    latest = RsTable(str(path)).version()
    out = []
    for v in range(latest + 1):
        try:
            RsTable(str(path), version=v)
        except Exception:  # noqa: BLE001 - deltalake cannot rebuild this version
            continue
        out.append(v)
    return out


def test_the_fixtures_are_there():
    assert DV_TABLE in fixture_names() and set(LOG_ONLY) <= set(fixture_names())
    assert len(READABLE) >= 15


@pytest.mark.parametrize("name", READABLE)
def test_fixture_reads_like_deltalake_at_every_version(spark, name):
    path = fixture_path(name)
    versions = _versions(path)
    assert versions
    for version in versions:
        assert_same_rows(read_sqlext(spark, path, version), read_deltalake(path, version))


def test_deletion_vector_table_reads_the_rows_not_deleted(spark, fixture_table):
    """Databricks deleted values 0 and 9 with a deletion vector (a ``u`` file at offset 1): every
    sqlext read path returns the other 8 rows, as DuckDB and delta-rs do; CLONE is refused."""
    path = fixture_table(DV_TABLE)
    before = table_state(path)
    latest = sqlext.read(spark, str(path))
    assert sorted(r.value for r in latest.collect()) == list(range(1, 9))
    assert_same_rows(latest, read_duckdb(path))
    assert_same_rows(latest, read_deltalake(path))
    assert_same_rows(sqlext.DeltaTable.forPath(spark, str(path)).toDF(), read_duckdb(path))
    assert_same_rows(sqlext.sql(spark, f"SELECT * FROM delta.`{path}`"), read_duckdb(path))
    assert sqlext.sql(spark, f"SELECT count(*) AS n FROM delta.`{path}` VERSION AS OF 1"
                      ).collect()[0].n == 8
    assert_same_rows(sqlext.read(spark, str(path), versionAsOf=0), read_duckdb(path, 0))
    assert sqlext.read(spark, str(path), versionAsOf=0).count() == 10
    assert sqlext.read(spark, str(path), filter="value > 5").count() == 3
    assert DeltaLog(str(path)).snapshot().num_records == 8
    with pytest.raises(UnsupportedTableFeatureError, match="deletionVectors"):
        sqlext.sql(spark, f"CREATE TABLE delta.`{path}_clone` SHALLOW CLONE delta.`{path}`")
    assert not Path(f"{path}_clone").exists()
    assert table_state(path) == before


def test_a_corrupt_or_missing_deletion_vector_file_fails_the_read(spark, fixture_table):
    path = fixture_table(DV_TABLE)
    (dv_file,) = path.glob("deletion_vector_*.bin")
    data = bytearray(dv_file.read_bytes())
    data[20] ^= 0xFF
    dv_file.write_bytes(bytes(data))
    with pytest.raises(DeletionVectorError, match="checksum") as raised:
        sqlext.read(spark, str(path)).collect()
    assert str(path) in str(raised.value) and "version 1" in str(raised.value)
    assert sqlext.read(spark, str(path), versionAsOf=0).count() == 10   # no vector there
    dv_file.unlink()
    with pytest.raises(DeletionVectorError, match="cannot be read"):
        sqlext.read(spark, str(path)).collect()


@pytest.mark.parametrize("name", LOG_ONLY)
def test_log_only_fixtures_load_their_snapshot(name):
    path = fixture_path(name)
    snapshot = DeltaLog(str(path)).snapshot()
    assert snapshot.version == RsTable(str(path)).version()
    assert {f.path for f in snapshot.files} == deltalake_add_paths(path)


# --- appending to copies of tables other engines wrote ---------------------------------------

APPEND_TO = ["simple_table", "delta-0.8.0-partitioned", "delta-0.8.0-special-partition",
             "delta-0.8.0-null-partition", "delta-2.2.0-partitioned-types", "cdf-table",
             "simple_table_with_checkpoint", "delta-1.2.1-only-struct-stats"]


def _append_some_rows(spark, path) -> tuple[int, pa.Table]:
    """Append (again) up to three rows the table already holds; returns (version, rows)."""
    current = sqlext.read(spark, str(path))
    rows = current.limit(3).collect()
    df = spark.createDataFrame(rows, current.schema)
    return sqlext.write(df, str(path)), df.toArrow()


def _check_after_append(spark, path, old_versions, version, appended):
    assert RsTable(str(path)).version() == version
    for v in old_versions + [version]:
        expected = read_deltalake(path, v)
        assert_same_rows(read_sqlext(spark, path, v), expected)
    before = read_deltalake(path, old_versions[-1])
    after = read_deltalake(path, version)
    assert_same_rows(after, pa.concat_tables([before, appended.select(before.column_names)
                                              .cast(before.schema)]))
    assert_same_rows(read_duckdb(path), after)


@pytest.mark.parametrize("name", APPEND_TO)
def test_append_to_a_copied_fixture(spark, fixture_table, name):
    path = fixture_table(name)
    old_versions = _versions(path)
    version, appended = _append_some_rows(spark, path)
    assert version == old_versions[-1] + 1
    _check_after_append(spark, path, old_versions, version, appended)
    info = actions_of(path, version, "commitInfo")[0]
    assert info["operation"] == "WRITE" and info["readVersion"] == old_versions[-1]
    if name == "cdf-table":
        feed = deltalake_cdf(path, version, version)
        assert set(feed.column("_change_type").to_pylist()) == {"insert"}
        assert feed.num_rows == appended.num_rows


def test_append_to_a_table_written_by_delta_rs(spark, tmp_path):
    path = tmp_path / "rs"
    first = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "", None],
                      "day": [dt.date(2024, 1, 1), dt.date(2024, 1, 2), None],
                      "at": pa.array([dt.datetime(2024, 1, 1, 12, 0, 0, 5)] * 3,
                                     pa.timestamp("us", "UTC"))})
    write_deltalake(str(path), first, partition_by=["day", "name"])
    write_deltalake(str(path), first.slice(0, 1), mode="append")
    old_versions = _versions(path)
    assert old_versions == [0, 1]
    version, appended = _append_some_rows(spark, path)
    assert version == 2
    _check_after_append(spark, path, old_versions, version, appended)
    # and delta-rs can keep writing after sqlext
    write_deltalake(str(path), first.slice(1, 1), mode="append")
    assert_same_rows(read_sqlext(spark, path), read_deltalake(path))


def test_fixture_errors_are_sqlext_errors(spark):
    with pytest.raises(SqlextError):
        sqlext.read(spark, str(fixture_path("simple_table")), versionAsOf=99)
