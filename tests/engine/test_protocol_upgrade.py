"""Protocol upgrades on sqlext tables: ``DeltaTable.upgradeTableProtocol``,
``addFeatureSupport``, and the properties ``delta.minReaderVersion`` / ``delta.minWriterVersion``
/ ``delta.feature.<name>`` in ``ALTER TABLE ... SET TBLPROPERTIES`` and ``CREATE TABLE``. The
upgraded tables stay writable by sqlext and readable by delta-rs and DuckDB."""

from __future__ import annotations

import pytest
from deltalake import DeltaTable as RsTable

import sqlext
from sqlext.errors import InvalidProtocolChangeError, UnsupportedTableFeatureError
from sqlext.log.actions import Protocol
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows, read_deltalake, read_duckdb


def _table(spark, path, properties=None):
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string")
    sqlext.write(df, str(path), configuration=properties or {})
    return sqlext.DeltaTable.forPath(spark, str(path))


def _snapshot(path):
    return DeltaLog(str(path)).snapshot()


def test_upgrade_table_protocol_adds_the_implied_features(spark, tmp_path):
    dt = _table(spark, tmp_path / "t", {"delta.enableChangeDataFeed": "false"})
    assert _snapshot(tmp_path / "t").protocol == Protocol(1, 2)
    dt.upgradeTableProtocol(1, 3)
    snap = _snapshot(tmp_path / "t")
    assert snap.protocol == Protocol(1, 3)
    assert "delta.minWriterVersion" not in snap.configuration
    dt.upgradeTableProtocol(1, 2)          # lower: nothing changes
    assert _snapshot(tmp_path / "t").protocol == Protocol(1, 3)
    dt.upgradeTableProtocol(1, 7)          # table features alone add nothing
    assert _snapshot(tmp_path / "t").protocol == Protocol(1, 3)
    assert RsTable(str(tmp_path / "t")).protocol().min_writer_version == 3


def test_add_feature_support_then_write(spark, tmp_path):
    path = tmp_path / "t"
    dt = _table(spark, path, {"delta.enableChangeDataFeed": "false"})
    dt.addFeatureSupport("deletionVectors")
    snap = _snapshot(path)
    assert snap.protocol == Protocol(3, 7, ["deletionVectors"],
                                     ["appendOnly", "deletionVectors", "invariants"])
    assert not any(k.startswith("delta.feature.") for k in snap.configuration)
    dt.delete("id = 1")
    sqlext.write(spark.createDataFrame([(3, "c")], "id long, v string"), str(path))
    assert_same_rows(dt.toDF(), read_deltalake(path))
    assert_same_rows(dt.toDF(), read_duckdb(path))
    assert sorted(r.id for r in dt.toDF().collect()) == [2, 3]


def test_sql_feature_and_version_properties(spark, tmp_path):
    path = tmp_path / "t"
    _table(spark, path, {"delta.enableChangeDataFeed": "false"})
    sqlext.sql(spark, f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES "
               "('delta.feature.changeDataFeed' = 'supported', 'delta.appendOnly' = 'false')")
    snap = _snapshot(path)
    assert snap.protocol == Protocol(1, 7, None, ["appendOnly", "changeDataFeed", "invariants"])
    assert snap.configuration.get("delta.appendOnly") == "false"
    sqlext.sql(spark, f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.minWriterVersion' = '4')")
    # the features of 1/4 exactly: written in the legacy form again
    assert _snapshot(path).protocol == Protocol(1, 4)


def test_create_table_with_protocol_properties(spark, tmp_path):
    path = tmp_path / "t"
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta TBLPROPERTIES "
               "('delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5', "
               "'delta.enableChangeDataFeed' = 'false')")
    snap = _snapshot(path)
    assert snap.protocol == Protocol(2, 5)
    assert not {"delta.minReaderVersion", "delta.minWriterVersion"} & set(snap.configuration)
    sqlext.sql(spark, f"INSERT INTO delta.`{path}` VALUES (7)")
    assert [r.id for r in sqlext.read(spark, str(path)).collect()] == [7]


@pytest.mark.parametrize("call, error, match", [
    (lambda dt: dt.upgradeTableProtocol(3, 5), InvalidProtocolChangeError, "writer version 7"),
    (lambda dt: dt.upgradeTableProtocol(4, 7), InvalidProtocolChangeError, "does not exist"),
    (lambda dt: dt.addFeatureSupport("bogus"), InvalidProtocolChangeError, "unknown table feat"),
    (lambda dt: dt.addFeatureSupport("clustering"), UnsupportedTableFeatureError,
     "cannot honour"),
])
def test_bad_requests_leave_the_table_unchanged(spark, tmp_path, call, error, match):
    path = tmp_path / "t"
    dt = _table(spark, path)
    before = _snapshot(path)
    with pytest.raises(error, match=match) as info:
        call(dt)
    assert str(path) in str(info.value) and "version 0" in str(info.value)
    after = _snapshot(path)
    assert (after.version, after.protocol) == (before.version, before.protocol)
