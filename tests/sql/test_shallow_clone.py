"""Delta's shallow clone: ``CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t SHALLOW CLONE s [VERSION
AS OF n | TIMESTAMP AS OF ts] [LOCATION ...]`` and ``DeltaTable.clone*``: a new table whose log
points at the source's files by absolute path, read the same by sqlext, delta-rs and DuckDB;
writes and VACUUM of the clone never touch the source's files."""

from __future__ import annotations

import json
import os

import pytest

import sqlext
from sqlext import DeltaTable
from sqlext.catalog import Catalog
from sqlext.errors import TableAlreadyExistsError, UnsupportedOperationError
from sqlext.log.table import DeltaLog
from tests.support.compare import rows
from tests.support.readers import read_deltalake, read_duckdb


def _log(spark, name: str) -> DeltaLog:
    return DeltaLog(Catalog(spark).resolve(name).location)


def _commit(log: DeltaLog, version: int) -> list[dict]:
    with open(f"{log.location}/_delta_log/{version:020d}.json") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _sorted(table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: r["id"])


@pytest.fixture
def source(spark, schema):
    """``src``: partitioned by p, with properties and a comment; versions 0 (ids 1-2), 1 (+3)."""
    sqlext.sql(spark, "CREATE TABLE src (id INT, p STRING, v STRING) USING delta "
                      "PARTITIONED BY (p) COMMENT 'the source' "
                      "TBLPROPERTIES ('delta.appendOnly' = 'false', 'team' = 'a')")
    sqlext.sql(spark, "INSERT INTO src VALUES (1, 'x y', 'a'), (2, 'z', 'b')")
    sqlext.sql(spark, "INSERT INTO src VALUES (3, 'x y', 'c')")
    return _log(spark, "src")


def test_a_shallow_clone_points_at_the_sources_files(spark, schema, source):
    sqlext.sql(spark, f'/* {{"app": "dbt"}} */ create table {schema}.c shallow clone {schema}.src')
    clone = _log(spark, "c")
    snap, src = clone.snapshot(), source.snapshot()
    assert snap.version == 0
    assert snap.metadata.id != src.metadata.id
    assert snap.metadata.schema_string == src.metadata.schema_string
    assert snap.partition_columns == ["p"] and snap.metadata.description == "the source"
    assert snap.configuration == src.configuration
    assert snap.configuration["team"] == "a"
    assert (snap.protocol.min_reader_version, snap.protocol.min_writer_version) == \
        (src.protocol.min_reader_version, src.protocol.min_writer_version)
    paths = {f.path for f in snap.files}
    assert all(p.startswith(source.location + "/") for p in paths)
    assert {source.data_path(p) for p in paths} == {source.data_path(f.path) for f in src.files}
    assert set(os.listdir(clone.location)) == {"_delta_log"}
    info = next(a["commitInfo"] for a in _commit(clone, 0) if "commitInfo" in a)
    assert info["operation"] == "CLONE"
    assert info["operationParameters"] == {"source": f"{schema}.src", "sourceVersion": "2",
                                           "isShallow": "true"}
    assert info["operationMetrics"]["sourceNumOfFiles"] == str(len(src.files))
    assert info["operationMetrics"]["numCopiedFiles"] == "0"
    expected = _sorted(read_deltalake(source.location, engine="datafusion"))
    assert len(expected) == 3
    assert sorted(rows(sqlext.sql(spark, "SELECT id, p, v FROM c"))) == \
        [(r["id"], r["p"], r["v"]) for r in expected]
    assert _sorted(read_deltalake(clone.location, engine="datafusion")) == expected
    assert _sorted(read_duckdb(clone.location)) == expected


def test_clone_at_a_version_or_timestamp_and_replace(spark, schema, source):
    sqlext.sql(spark, "CREATE TABLE c SHALLOW CLONE src VERSION AS OF 1")
    assert sorted(r[0] for r in rows(sqlext.sql(spark, "SELECT id FROM c"))) == [1, 2]
    with pytest.raises(TableAlreadyExistsError, match="already exists"):
        sqlext.sql(spark, "CREATE TABLE c SHALLOW CLONE src")
    sqlext.sql(spark, "CREATE TABLE IF NOT EXISTS c SHALLOW CLONE src")
    assert _log(spark, "c").snapshot().version == 0
    sqlext.sql(spark, "CREATE OR REPLACE TABLE c SHALLOW CLONE src")
    snap = _log(spark, "c").snapshot()
    assert snap.version == 1 and sorted(r[0] for r in rows(sqlext.sql(spark, "SELECT id FROM c"))) \
        == [1, 2, 3]
    ts = source.commit_timestamps()[1]
    sqlext.sql(spark, f"CREATE TABLE c2 SHALLOW CLONE src TIMESTAMP AS OF "
                      f"timestamp_millis({ts}) TBLPROPERTIES ('team' = 'b')")
    assert sorted(r[0] for r in rows(sqlext.sql(spark, "SELECT id FROM c2"))) == [1, 2]
    assert _log(spark, "c2").snapshot().configuration["team"] == "b"
    with pytest.raises(UnsupportedOperationError, match="DEEP CLONE"):
        sqlext.sql(spark, "CREATE TABLE c3 DEEP CLONE src")
    assert not Catalog(spark).lookup(schema, "c3")


def test_writes_and_vacuum_of_the_clone_never_touch_the_source(spark, schema, source, tmp_path):
    location = tmp_path / "the clone"
    sqlext.sql(spark, f"CREATE TABLE c SHALLOW CLONE src LOCATION '{location}'")
    source_files = {source.data_path(f.path) for f in source.snapshot().files}
    sqlext.sql(spark, "DELETE FROM c WHERE id = 1")
    sqlext.sql(spark, "UPDATE c SET v = 'changed' WHERE id = 3")
    sqlext.sql(spark, "INSERT INTO c VALUES (4, 'w', 'd')")
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        sqlext.sql(spark, "VACUUM c RETAIN 0 HOURS")
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")
    assert all(os.path.exists(f) for f in source_files)
    assert sorted(rows(sqlext.sql(spark, "SELECT id, v FROM src"))) == \
        [(1, "a"), (2, "b"), (3, "c")]
    assert source.snapshot().version == 2
    expected = [(2, "b"), (3, "changed"), (4, "d")]
    assert sorted(rows(sqlext.sql(spark, "SELECT id, v FROM c"))) == expected
    assert sorted((r["id"], r["v"]) for r in
                  read_deltalake(str(location), engine="datafusion").to_pylist()) == expected
    assert sorted((r["id"], r["v"]) for r in read_duckdb(str(location)).to_pylist()) == expected


def test_deltatable_clone_api(spark, schema, source, tmp_path):
    table = DeltaTable.forName(spark, "src")
    cloned = table.cloneAtVersion(1, f"{schema}.c", isShallow=True)
    assert sorted(r["id"] for r in cloned.toDF().collect()) == [1, 2]
    path = str(tmp_path / "by_path")
    by_path = table.clone(path, isShallow=True, properties={"team": "c"})
    assert sorted(r["id"] for r in by_path.toDF().collect()) == [1, 2, 3]
    assert DeltaLog(path).snapshot().configuration["team"] == "c"
    replaced = table.clone(f"{schema}.c", isShallow=True, replace=True)
    assert sorted(r["id"] for r in replaced.toDF().collect()) == [1, 2, 3]
    history = replaced.history().select("version", "operation").collect()
    assert [tuple(r) for r in history] == [(1, "CLONE"), (0, "CLONE")]
    with pytest.raises(UnsupportedOperationError, match="DEEP CLONE"):
        table.clone(str(tmp_path / "deep"), isShallow=False)
    assert not (tmp_path / "deep").exists()
