"""Reads and change feeds of small tables on the driver path (sqlext.engine.local.read) against
the Spark scan: the same rows and schema at every version with ``spark.sqlext.execution.local``
``force`` and ``off`` (partitioned, column-mapped, deletion-vector, widened-type tables, change
feeds of inserts, updates and deletes); a small time-travel SELECT, a small change feed and
DESCRIBE HISTORY run no Spark job, with the scan's meaning; a read over ``localReadMaxBytes``
scans."""

from __future__ import annotations

import pytest

import sqlext
from sqlext.engine.local import policy
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows
from tests.support.spark import jobs_run, spark_conf

TABLES = {
    "plain": ("(id BIGINT, s STRING, v DOUBLE)", "", ""),
    "partitioned": ("(id BIGINT, s STRING, v DOUBLE)", "PARTITIONED BY (s)", ""),
    "column mapping name": ("(id BIGINT, s STRING, v DOUBLE)", "PARTITIONED BY (s)",
                            "'delta.columnMapping.mode' = 'name'"),
    "deletion vectors": ("(id BIGINT, s STRING, v DOUBLE)", "",
                         "'delta.enableDeletionVectors' = 'true'"),
    "widened": ("(id INT, s STRING, v FLOAT)", "", "'delta.enableTypeWidening' = 'true'"),
}


def _build(spark, path, kind: str) -> str:
    """A table of ``kind`` with five versions: inserts, a DELETE, an UPDATE, a schema change
    (RENAME COLUMN under column mapping, a widening, else an added column) and an insert after
    it. Returns its SQL name."""
    columns, parts, props = TABLES[kind]
    cdf = "'delta.enableChangeDataFeed' = 'true'"
    name = f"delta.`{path}`"
    with spark_conf(spark, {policy.MODE_CONF: "off"}):
        sqlext.sql(spark, f"CREATE TABLE {name} {columns} USING delta {parts} "
                          f"TBLPROPERTIES ({', '.join(p for p in (cdf, props) if p)})")
        sqlext.sql(spark, f"INSERT INTO {name} SELECT id, CAST(id % 3 AS STRING), id / 4 "
                          "FROM range(12)")
        sqlext.sql(spark, f"INSERT INTO {name} VALUES (100, 'x', NULL), (101, NULL, 2.5)")
        sqlext.sql(spark, f"DELETE FROM {name} WHERE id IN (2, 7)")
        sqlext.sql(spark, f"UPDATE {name} SET v = -1 WHERE id = 4")
        if kind.startswith("column mapping"):
            sqlext.sql(spark, f"ALTER TABLE {name} RENAME COLUMN v TO w")
        elif kind == "widened":
            sqlext.sql(spark, f"ALTER TABLE {name} ALTER COLUMN id TYPE BIGINT")
            sqlext.sql(spark, f"ALTER TABLE {name} ALTER COLUMN v TYPE DOUBLE")
        else:
            sqlext.sql(spark, f"ALTER TABLE {name} ADD COLUMNS (extra STRING)")
        sqlext.sql(spark, f"INSERT INTO {name} (id, s) VALUES ({2 ** 40}, 'big')")
    return name


def _both(spark, fn):
    """``fn()`` collected on the driver path and on the scan: (rows, schema) of each."""
    out = {}
    for mode in ("force", "off"):
        with spark_conf(spark, {policy.MODE_CONF: mode}):
            df = fn()
            out[mode] = (df.toArrow(), df.schema)
    return out["force"], out["off"]


@pytest.mark.parametrize("kind", list(TABLES))
def test_reads_match_the_scan_at_every_version(spark, tmp_path, kind):
    path = tmp_path / "t"
    name = _build(spark, path, kind)
    latest = DeltaLog(str(path)).snapshot().version
    if kind == "deletion vectors":
        assert any(f.deletion_vector for f in DeltaLog(str(path)).snapshot().files)
    for version in range(1, latest + 1):
        (local, local_schema), (scanned, scan_schema) = _both(
            spark, lambda: sqlext.sql(spark, f"SELECT * FROM delta.`{path}` VERSION AS OF {version}"))
        assert local_schema == scan_schema, (kind, version)
        assert local.num_rows > 0
        assert_same_rows(local, scanned, sort_by=["id"])
    (local, local_schema), (scanned, scan_schema) = _both(
        spark, lambda: sqlext.sql(spark, f"SELECT * FROM {name} VERSION AS OF 3 WHERE id > 3"))
    assert local_schema == scan_schema
    assert local.num_rows == scanned.num_rows > 0
    assert_same_rows(local, scanned, sort_by=["id"])


@pytest.mark.parametrize("kind", ["plain", "partitioned", "column mapping name",
                                  "deletion vectors"])
def test_change_feed_matches_the_scan(spark, tmp_path, kind):
    path = tmp_path / "t"
    _build(spark, path, kind)
    end = DeltaLog(str(path)).snapshot().version
    for start, stop in ((0, 4), (2, 4), (3, 3), (5, end)):
        (local, local_schema), (scanned, scan_schema) = _both(
            spark, lambda: sqlext.sql(spark, f"SELECT * FROM table_changes_by_path("
                                             f"'{path}', {start}, {stop})"))
        assert local_schema == scan_schema, (kind, start, stop)
        assert local.num_rows == scanned.num_rows > 0
        assert_same_rows(local, scanned, sort_by=["id", "_commit_version", "_change_type"])


def test_small_time_travel_select_change_feed_and_history_run_no_job(spark, tmp_path):
    path = tmp_path / "t"
    name = _build(spark, path, "partitioned")
    with spark_conf(spark, {policy.MODE_CONF: "force"}):
        rows, jobs = jobs_run(spark, lambda: sqlext.sql(
            spark, f"SELECT id, v * 2 AS w FROM {name} VERSION AS OF 2 WHERE id > 5").collect())
        assert sorted(r.id for r in rows) == [6, 7, 8, 9, 10, 11, 100, 101]
        assert jobs == 0
        rows, jobs = jobs_run(spark, lambda: sqlext.sql(
            spark, f"SELECT * FROM table_changes_by_path('{path}', 3, 4)").collect())
        assert sorted((r.id, r._change_type) for r in rows) == [
            (2, "delete"), (4, "update_postimage"), (4, "update_preimage"), (7, "delete")]
        assert jobs == 0
        rows, jobs = jobs_run(spark, lambda: sqlext.sql(
            spark, f"DESCRIBE HISTORY {name}").collect())
        assert [r.version for r in rows][:2] == [6, 5]
        assert jobs == 0
        rows, jobs = jobs_run(spark, lambda: sqlext.sql(
            spark, f"DESCRIBE DETAIL {name}").collect())
        assert rows[0].partitionColumns == ["s"] and rows[0].numFiles > 0
        assert jobs == 0


def _maps_as_dicts(table) -> list[dict]:
    """Rows with map values as dicts (the order of a map's entries is no part of its value)."""
    return [{k: dict(v) if isinstance(v, list) and v and isinstance(v[0], tuple) else v
             for k, v in row.items()} for row in table.to_pylist()]


def test_history_and_detail_match_create_data_frame(spark, tmp_path):
    path = tmp_path / "t"
    name = _build(spark, path, "partitioned")
    for statement in (f"DESCRIBE HISTORY {name}", f"DESCRIBE DETAIL {name}"):
        (local, local_schema), (created, created_schema) = _both(
            spark, lambda: sqlext.sql(spark, statement))
        assert local_schema == created_schema
        assert _maps_as_dicts(local) == _maps_as_dicts(created)
        assert local.num_rows > 0


@pytest.mark.parametrize("mode", ["auto", "force", "off"])
def test_reads_keep_spark_s_meaning_on_every_path(spark, tmp_path, mode):
    """A small table read runs no job under ``auto`` and ``force`` and means what the scan
    means: Spark folds a constant that cannot be cast (or divides by zero) and fails also when
    no row passes the filter, and pushes a filter below a subquery's projection that would fail
    on other rows (directly over a local relation Spark filters and projects before either:
    the first returned no row, the second failed; sqlext.engine.local.read._as_scan)."""
    path = tmp_path / "t"
    name = _build(spark, path, "plain")
    with spark_conf(spark, {policy.MODE_CONF: mode}):
        rows, jobs = jobs_run(spark, lambda: sqlext.sql(
            spark, f"SELECT id FROM {name} VERSION AS OF 2").collect())
        assert len(rows) == 14
        assert (jobs == 0) if mode != "off" else (jobs >= 1)
        with pytest.raises(Exception, match="CAST_INVALID_INPUT"):
            sqlext.sql(spark, f"SELECT CAST('x' AS INT) AS c FROM {name} WHERE id % 1000 = 999").collect()
        with pytest.raises(Exception, match="DIVIDE_BY_ZERO"):
            sqlext.sql(spark, f"SELECT 1 / 0 AS c FROM {name} WHERE id % 1000 = 999").collect()
        rows = sqlext.sql(spark, f"SELECT * FROM (SELECT CAST(s AS INT) AS c, id FROM {name}) "
                                 "WHERE id = 4").collect()
        assert [(r.c, r.id) for r in rows] == [(1, 4)]      # s is 'x' or 'big' on other rows
        rows = sqlext.sql(spark, f"SELECT input_file_name() AS f FROM {name}").collect()
        assert rows and all(r.f.endswith(".parquet") for r in rows)   # such a statement scans
        rows, jobs = jobs_run(spark, lambda: sqlext.sql(spark, f"DESCRIBE HISTORY {name}").collect())
        assert rows and jobs == 0
    if mode == "auto":
        with spark_conf(spark, {policy.MODE_CONF: mode, policy.READ_MAX_BYTES_CONF: "1"}):
            rows, jobs = jobs_run(spark, lambda: sqlext.sql(
                spark, f"SELECT id FROM {name} VERSION AS OF 2").collect())
            assert len(rows) == 14 and jobs >= 1      # over localReadMaxBytes: the scan


def test_a_dataframe_of_the_api_stays_the_file_scan(spark, tmp_path):
    """sqlext.read / DeltaTable.toDF give lazy DataFrames users keep and ask inputFiles() of,
    as in delta-spark: they stay the scan whatever the size; SQL statements take the driver path."""
    path = tmp_path / "t"
    _build(spark, path, "plain")
    with spark_conf(spark, {policy.MODE_CONF: "force"}):
        files = sqlext.read(spark, str(path), versionAsOf=2).inputFiles()
        assert files and all(f.endswith(".parquet") for f in files)
        assert sqlext.DeltaTable.forPath(spark, str(path)).toDF().inputFiles()
        assert sqlext.sql(spark, f"SELECT * FROM delta.`{path}` VERSION AS OF 2").inputFiles() == []


@pytest.mark.parametrize("mode", ["auto", "force"])
def test_auto_reads_on_the_driver_only_what_runs_without_a_job(spark, tmp_path, mode):
    """Under ``auto`` a query that runs a Spark job over the rows anyway (an aggregate, a join,
    a sort, a subquery) reads by the scan, which costs less than the driver path there
    (bench/local_reads.py); a projection with a filter and a LIMIT reads on the driver.
    ``force`` reads every one on the driver. The rows are the same."""
    path = tmp_path / "t"
    name = _build(spark, path, "plain")
    simple = f"SELECT id, v FROM {name} WHERE id > 3 LIMIT 5"
    needing_jobs = [f"SELECT count(*) AS n FROM {name}",
                    f"SELECT a.id FROM {name} a JOIN {name} b ON a.id = b.id + 1 ORDER BY a.id",
                    f"SELECT id FROM {name} ORDER BY id",
                    f"SELECT * FROM {name} WHERE id IN (SELECT id FROM {name} WHERE id < 3)"]
    with spark_conf(spark, {policy.MODE_CONF: mode}):
        assert sqlext.sql(spark, simple).inputFiles() == []
        for query in needing_jobs:
            df = sqlext.sql(spark, query)
            assert (df.inputFiles() != []) == (mode == "auto"), query
            local_rows = sorted(map(tuple, df.collect()))
            with spark_conf(spark, {policy.MODE_CONF: "off"}):
                assert local_rows == sorted(map(tuple, sqlext.sql(spark, query).collect()))
