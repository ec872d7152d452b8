"""Symlink manifests (``GENERATE symlink_format_manifest``, ``DeltaTable.generate``) written by
sqlext and by delta-spark for copies of the same table: the same manifest files, listing the same
data files; stale partitions' manifests removed; refusals for deletion vectors."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest

import sqlext
from sqlext.errors import UnsupportedOperationError
from sqlext.log.manifest import MANIFEST_DIR, escape_path_name
from sqlext.log.table import DeltaLog
from tests.support.deltaspark import delta_path

DDL = "id int, p string, q int"
ROWS = [(1, "a", 1), (2, "a", 2), (3, "b c", 1), (4, "x/y=z", None), (5, None, 3)]


def _manifests(table: Path) -> dict[str, set[str]]:
    """Relative manifest path -> the data files it lists, relative to the table root."""
    root = str(table.resolve())
    out = {}
    for manifest in (table / MANIFEST_DIR).rglob("manifest"):
        lines = manifest.read_text().splitlines()
        out[str(manifest.relative_to(table))] = {
            line.removeprefix("file:").removeprefix("//").removeprefix(root).lstrip("/")
            for line in lines}
    return out


def _copy(table: Path, target: Path) -> Path:
    shutil.copytree(table, target)
    return target


def test_manifests_match_delta_spark(spark, delta_spark, tmp_path):
    table = tmp_path / "t"
    sqlext.write(spark.createDataFrame(ROWS, DDL), str(table), partitionBy=["p", "q"])
    sqlext.write(spark.createDataFrame([(6, "a", 1)], DDL), str(table))

    ours, theirs = _copy(table, tmp_path / "ours"), _copy(table, tmp_path / "theirs")
    sqlext.sql(spark, f"GENERATE symlink_format_manifest FOR TABLE delta.`{ours}`")
    delta_spark.sql(f"GENERATE symlink_format_manifest FOR TABLE {delta_path(theirs)}")
    expected = _manifests(theirs)
    assert _manifests(ours) == expected
    live = DeltaLog(str(ours)).snapshot().files
    assert len(expected) == 5 and sum(len(v) for v in expected.values()) == len(live)
    assert {f for files in expected.values() for f in files} == {
        unquote(f.path) for f in live}
    assert f"{MANIFEST_DIR}/p={escape_path_name('x/y=z')}/q=__HIVE_DEFAULT_PARTITION__/manifest" \
        in expected

    # a DELETE empties partition p=a: both engines drop its manifests on the next generate
    sqlext.sql(spark, f"DELETE FROM delta.`{ours}` WHERE p = 'a'")
    delta_spark.sql(f"DELETE FROM {delta_path(theirs)} WHERE p = 'a'")
    sqlext.DeltaTable.forPath(spark, str(ours)).generate("symlink_format_manifest")
    delta_spark.sql(f"GENERATE symlink_format_manifest FOR TABLE {delta_path(theirs)}")
    after = _manifests(ours)
    assert after.keys() == _manifests(theirs).keys()
    assert not any("/p=a/" in name for name in after)
    live = {f.name for f in ours.rglob("*.parquet") if "_delta_log" not in str(f)}
    assert all(Path(f).name in live for files in after.values() for f in files)


def test_manifest_property_regenerates_after_each_commit(spark, tmp_path):
    table = tmp_path / "auto"
    sqlext.write(spark.createDataFrame(ROWS, DDL), str(table), partitionBy=["p"],
                 configuration={"delta.compatibility.symlinkFormatManifest.enabled": "true"})
    assert len(_manifests(table)) == 4
    sqlext.sql(spark, f"DELETE FROM delta.`{table}` WHERE p = 'a'")
    listed = _manifests(table)
    assert len(listed) == 3 and not any("/p=a/" in name for name in listed)
    sqlext.write(spark.createDataFrame([(9, "new", 1)], DDL), str(table))
    listed = _manifests(table)
    assert f"{MANIFEST_DIR}/p=new/manifest" in listed
    assert {f for files in listed.values() for f in files} == {
        unquote(f.path) for f in DeltaLog(str(table)).snapshot().files}


def test_unpartitioned_table_has_one_manifest(spark, delta_spark, tmp_path):
    table = tmp_path / "flat"
    sqlext.write(spark.createDataFrame(ROWS, DDL).repartition(2), str(table))
    ours, theirs = _copy(table, tmp_path / "ours"), _copy(table, tmp_path / "theirs")
    sqlext.DeltaTable.forPath(spark, str(ours)).generate("symlink_format_manifest")
    delta_spark.sql(f"GENERATE symlink_format_manifest FOR TABLE {delta_path(theirs)}")
    assert _manifests(ours) == _manifests(theirs)
    assert list(_manifests(ours)) == [f"{MANIFEST_DIR}/manifest"]


def test_generate_refuses_deletion_vectors_and_unknown_modes(spark, delta_spark, tmp_path):
    table = tmp_path / "dv"
    delta_spark.sql(f"CREATE TABLE {delta_path(table)} (id INT) USING delta "
                    "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    delta_spark.sql(f"INSERT INTO {delta_path(table)} SELECT id FROM range(10)")
    delta_spark.sql(f"DELETE FROM {delta_path(table)} WHERE id = 3")
    with pytest.raises(UnsupportedOperationError, match="deletion vectors.*PURGE"):
        sqlext.sql(spark, f"GENERATE symlink_format_manifest FOR TABLE delta.`{table}`")
    assert not (table / MANIFEST_DIR).exists()
    with pytest.raises(UnsupportedOperationError, match="only mode"):
        sqlext.DeltaTable.forPath(spark, str(table)).generate("iceberg")
