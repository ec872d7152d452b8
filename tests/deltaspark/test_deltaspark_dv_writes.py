"""Deletion vectors sqlext writes, read by delta-spark 4.4: a table sqlext changed with DELETE,
UPDATE and MERGE (vectors marked, unioned, a file emptied) reads the same in delta-spark, sqlext and
DuckDB at every version, change feed (delta-spark's table_changes) included; and a table
delta-spark wrote with deletion vectors, changed by sqlext, reads back in delta-spark and takes
delta-spark's next DELETE."""

from __future__ import annotations

import json

import pyarrow.compute as pc

import sqlext
from tests.support import assert_same_rows, read_duckdb
from tests.support.deltaspark import delta_path


def _theirs(ds_versions, version):
    return ds_versions.filter(pc.equal(ds_versions["_version"], version)).drop_columns(["_version"])


def _commit(path, version) -> list[dict]:
    text = (path / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_sqlext_deletion_vectors_read_the_same_in_delta_spark(spark, delta_spark, tmp_path):
    path = tmp_path / "t"
    name = f"delta.`{path}`"
    statements = [
        f"CREATE TABLE {name} (id BIGINT, v STRING, p STRING) USING delta PARTITIONED BY (p) "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
        "'delta.enableChangeDataFeed' = 'true')",                                       # v0
        f"INSERT INTO {name} SELECT id, concat('v', id), CAST(id % 2 AS STRING) "
        "FROM range(0, 1000)",                                                          # v1
        f"DELETE FROM {name} WHERE id % 7 = 0",                                         # v2
        f"UPDATE {name} SET v = 'upd' WHERE id % 5 = 0",                                # v3
        f"DELETE FROM {name} WHERE id % 11 = 0",                                        # v4
        f"DELETE FROM {name} WHERE p = '1' OR id < 10",          # v5: p=1 emptied (no vector)
        f"INSERT INTO {name} VALUES (5000, 'late', '1')",                               # v6
        f"MERGE INTO {name} t USING (SELECT id, CAST(id % 2 AS STRING) AS p "
        "FROM range(980, 1020)) s ON t.id = s.id "
        "WHEN MATCHED AND s.id % 3 = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET v = 'merged' "
        "WHEN NOT MATCHED THEN INSERT (id, v, p) VALUES (s.id, 'new', s.p)",            # v7
    ]
    for s in statements:
        sqlext.sql(spark, s)
    assert any("deletionVector" in a.get("add", {}) for a in _commit(path, 4))
    assert any("deletionVector" in a.get("remove", {}) for a in _commit(path, 4))
    assert any("deletionVector" in a.get("add", {}) for a in _commit(path, 7))
    versions = list(range(8))
    ds_versions, ds_changes = delta_spark.batch(
        [("read_versions", {"path": str(path), "versions": versions}),
         ("changes", {"path": str(path), "start": 1})], check=True)
    for version in versions:
        mine = sqlext.read(spark, str(path), versionAsOf=version)
        assert_same_rows(mine, _theirs(ds_versions, version), sort_by=["id"])
        assert_same_rows(mine, read_duckdb(path, version), sort_by=["id"])
    mine = sqlext.changes(spark, str(path), startingVersion=1)
    assert_same_rows(mine.drop("_commit_timestamp"),
                     ds_changes.drop_columns(["_commit_timestamp"]),
                     sort_by=["_commit_version", "id", "_change_type"])
    assert ds_changes.num_rows > 1000


def test_delta_spark_table_changed_by_sqlext_reads_back_in_delta_spark(spark, delta_spark,
                                                                       tmp_path):
    path = tmp_path / "t"
    p = delta_path(path)
    delta_spark.batch([("sql", {"sql": s}) for s in (
        f"CREATE TABLE {p} (id BIGINT, v STRING) USING delta "
        "TBLPROPERTIES (delta.enableDeletionVectors = true)",
        f"INSERT INTO {p} SELECT id, concat('v', id) FROM range(0, 500)",
        f"DELETE FROM {p} WHERE id % 3 = 0",                                  # v2: their vector
    )], check=True)
    sqlext.sql(spark, f"DELETE FROM delta.`{path}` WHERE id % 3 = 1 AND id < 250")   # v3
    sqlext.sql(spark, f"UPDATE delta.`{path}` SET v = 'mine' WHERE id > 480")        # v4
    adds = [a["add"] for a in _commit(path, 3) if "add" in a]
    assert adds and all(a["deletionVector"]["cardinality"] > 0 for a in adds)
    ds_versions, _, after = delta_spark.batch(
        [("read_versions", {"path": str(path), "versions": [3, 4]}),
         ("sql", {"sql": f"DELETE FROM {p} WHERE id % 3 = 2 AND id < 100"}),      # v5: theirs
         ("read_versions", {"path": str(path), "versions": [5]})], check=True)
    for version in (3, 4):
        assert_same_rows(sqlext.read(spark, str(path), versionAsOf=version),
                         _theirs(ds_versions, version), sort_by=["id"])
    latest = sqlext.read(spark, str(path))
    assert_same_rows(latest, _theirs(after, 5), sort_by=["id"])
    assert_same_rows(latest, read_duckdb(path), sort_by=["id"])
    ids = {r.id for r in latest.collect()}
    assert ids == {i for i in range(500)
                   if i % 3 != 0 and not (i % 3 == 1 and i < 250)
                   and not (i % 3 == 2 and i < 100)}
    assert {r.v for r in latest.filter("id > 480").collect()} == {"mine"}
