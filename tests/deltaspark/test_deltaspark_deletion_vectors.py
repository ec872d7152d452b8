"""Tables delta-spark 4.4 writes with deletion vectors read the same in sqlext, delta-spark and
DuckDB at every version: DELETE, UPDATE and MERGE marking rows in deletion vector files (several
bitmaps per file, a file's vector replaced by a later one), checkpoints holding the descriptors,
inline (``i``) and absolute-path (``p``) descriptors, and a checkpoint sqlext writes (sqlext's own
deletion vector writes: test_deltaspark_dv_writes.py)."""

from __future__ import annotations

import json
import shutil

import pyarrow.compute as pc
import pytest

import sqlext
from sqlext.log.deletion_vectors import DeletionVectorDescriptor, stored_bitmap_bytes, z85_encode
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import clear_caches
from tests.support import assert_same_rows, read_duckdb
from tests.support.deltaspark import delta_path

VERSIONS = 8


def _build(delta_spark, path) -> list:
    """The table: v0 create (deletion vectors and the change feed on, checkpoint every 3
    commits), v1 insert, v2 DELETE, v3 UPDATE, v4 DELETE (replacing vectors), v5 MERGE, v6
    insert, v7 DELETE. Returns delta-spark's rows of every version and its change feed."""
    p = delta_path(path)
    statements = [
        f"""CREATE TABLE {p} (id BIGINT, v STRING, p STRING) USING delta PARTITIONED BY (p)
            TBLPROPERTIES (delta.enableDeletionVectors = true, delta.checkpointInterval = 3,
                           delta.enableChangeDataFeed = true)""",
        f"INSERT INTO {p} SELECT id, concat('v', id), CAST(id % 2 AS STRING) FROM range(0, 1000)",
        f"DELETE FROM {p} WHERE id % 7 = 0",
        f"UPDATE {p} SET v = 'upd' WHERE id % 5 = 0",
        f"DELETE FROM {p} WHERE id % 11 = 0",
        f"""MERGE INTO {p} t USING (SELECT id, CAST(id % 2 AS STRING) AS p FROM range(980, 1020)) s
            ON t.id = s.id
            WHEN MATCHED AND s.id % 3 = 0 THEN DELETE
            WHEN MATCHED THEN UPDATE SET v = 'merged'
            WHEN NOT MATCHED THEN INSERT (id, v, p) VALUES (s.id, 'new', s.p)""",
        f"INSERT INTO {p} SELECT id, 'late', CAST(id % 2 AS STRING) FROM range(2000, 2100)",
        f"DELETE FROM {p} WHERE p = '1' AND id < 300",
    ]
    return delta_spark.batch([("sql", {"sql": s}) for s in statements]
                             + [("read_versions", {"path": str(path),
                                                   "versions": list(range(VERSIONS))}),
                                ("changes", {"path": str(path), "start": 0})],
                             check=True)[-2:]


@pytest.fixture(scope="module")
def built(delta_spark, tmp_path_factory):
    """The table of :func:`_build` (read-only for the tests: copy it to change it) and every
    version of it as delta-spark reads it."""
    path = tmp_path_factory.mktemp("dv") / "table"
    ds_versions, ds_changes = _build(delta_spark, path)
    return path, ds_versions, ds_changes


def _theirs(ds_versions, version):
    return ds_versions.filter(pc.equal(ds_versions["_version"], version)).drop_columns(["_version"])


def _commit(path, version) -> list[dict]:
    text = (path / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _assert_every_version(spark, path, ds_versions, versions):
    for version in versions:
        mine = sqlext.read(spark, str(path), versionAsOf=version)
        theirs = _theirs(ds_versions, version)
        assert_same_rows(mine, theirs, sort_by=["id"])
        assert_same_rows(mine, read_duckdb(path, version), sort_by=["id"])
        assert DeltaLog(str(path)).snapshot(version).num_records == theirs.num_rows


def test_delta_spark_deletion_vector_table_reads_the_same_at_every_version(spark, built):
    path, ds_versions, _ = built
    # what delta-spark wrote: vectors in files, several per file, replaced ones, checkpoints
    dvs = [a["add"]["deletionVector"] for v in range(VERSIONS) for a in _commit(path, v)
           if "add" in a and "deletionVector" in a["add"]]
    assert dvs and {d["storageType"] for d in dvs} == {"u"}
    assert any(d["offset"] > 1 for d in dvs)
    assert any("deletionVector" in a.get("remove", {}) for a in _commit(path, 4))
    assert (path / "_delta_log" / f"{3:020d}.checkpoint.parquet").exists()
    assert (path / "_delta_log" / f"{6:020d}.checkpoint.parquet").exists()

    _assert_every_version(spark, path, ds_versions, range(VERSIONS))
    latest = _theirs(ds_versions, VERSIONS - 1)
    p = delta_path(path)
    assert sqlext.sql(spark, f"SELECT count(*) AS n FROM {p}").collect()[0].n == latest.num_rows
    assert_same_rows(sqlext.sql(spark, f"SELECT * FROM {p} VERSION AS OF 4 WHERE id < 100"),
                     _theirs(ds_versions, 4).filter(pc.less(_theirs(ds_versions, 4)["id"], 100)))
    assert_same_rows(sqlext.DeltaTable.forPath(spark, str(path)).toDF(), latest)
    assert_same_rows(sqlext.read(spark, str(path), filter="p = '0' AND v = 'upd'"),
                     latest.filter(pc.and_(pc.equal(latest["p"], "0"), pc.equal(latest["v"], "upd"))))



def _inline(path, dv: dict) -> dict:
    """The descriptor ``dv`` (a ``u`` one) with its bitmap moved inline into the log."""
    d = DeletionVectorDescriptor.from_dict(dv)
    data = (path / d.relative_path()).read_bytes()
    bitmap = stored_bitmap_bytes(data, d.offset, d.size_in_bytes, d.relative_path())
    return {"storageType": "i", "pathOrInlineDv": z85_encode(bitmap + b"\0" * (-len(bitmap) % 4)),
            "sizeInBytes": len(bitmap), "cardinality": d.cardinality}


def _absolute(path, dv: dict) -> dict:
    d = DeletionVectorDescriptor.from_dict(dv)
    return {**dv, "storageType": "p", "pathOrInlineDv": (path / d.relative_path()).as_uri()}


def test_inline_and_absolute_descriptors_and_a_sqlext_checkpoint(spark, delta_spark, built,
                                                                 tmp_path):
    """The last commit's vectors rewritten as inline and absolute-path descriptors (delta-spark
    writes ``u`` ones), then a checkpoint written by sqlext at that version: all three engines
    read the same rows, from the commit and from sqlext's checkpoint."""
    path = tmp_path / "forms"        # a copy: delta-spark has cached the original's log
    shutil.copytree(built[0], path)
    ds_versions = built[1]
    last = VERSIONS - 1
    lines = _commit(path, last)
    rewritten, kinds = [], []
    for line in lines:
        add = line.get("add")
        if add and "deletionVector" in add:
            form = _inline if len(kinds) % 2 == 0 else _absolute
            add["deletionVector"] = form(path, add["deletionVector"])
            kinds.append(add["deletionVector"]["storageType"])
        rewritten.append(line)
    assert {"i", "p"} <= set(kinds)
    (path / "_delta_log" / f"{last:020d}.json").write_text(
        "\n".join(json.dumps(line, separators=(",", ":")) for line in rewritten) + "\n")
    (path / "_delta_log" / f"{last:020d}.crc").unlink(missing_ok=True)       # Delta's checksum
    (path / "_delta_log" / f".{last:020d}.json.crc").unlink(missing_ok=True)  # Hadoop's

    expected = _theirs(ds_versions, last)
    again = delta_spark.read_versions(str(path), [last])
    assert_same_rows(again.drop_columns(["_version"]), expected, sort_by=["id"])
    _assert_every_version(spark, path, ds_versions, [last - 1, last])

    # sqlext writes the checkpoint at the last version: the descriptors survive it
    copy = tmp_path / "checkpointed"
    shutil.copytree(path, copy)
    log = DeltaLog(str(copy))
    snapshot = log.snapshot(last)
    log.write_checkpoint(snapshot)
    assert (copy / "_delta_log" / f"{last:020d}.checkpoint.parquet").exists()
    clear_caches()     # readers start from the newest checkpoint: this one
    reloaded = DeltaLog(str(copy)).snapshot(last)
    assert reloaded.checkpoint_version == last
    assert ({k: f.deletion_vector for k, f in reloaded.files_by_path.items()}
            == {k: f.deletion_vector for k, f in snapshot.files_by_path.items()})
    assert_same_rows(sqlext.read(spark, str(copy)), expected, sort_by=["id"])
    assert_same_rows(read_duckdb(copy), expected, sort_by=["id"])
    from_checkpoint = delta_spark.read_versions(str(copy), [last])
    assert_same_rows(from_checkpoint.drop_columns(["_version"]), expected, sort_by=["id"])


def test_change_feed_of_deletion_vector_commits_matches_delta_spark(spark, built):
    """DELETEs with deletion vectors write no change data files: their changes are the rows a
    file's new vector deletes and its old one did not (v4 replaced vectors)."""
    path, _, ds_changes = built
    assert not any("cdc" in a for a in _commit(path, 2) + _commit(path, 4) + _commit(path, 7))
    mine = sqlext.changes(spark, str(path), startingVersion=0)
    assert_same_rows(mine.drop("_commit_timestamp"), ds_changes.drop_columns(["_commit_timestamp"]),
                     sort_by=["_commit_version", "id"])
    deleted = mine.filter("_commit_version = 4 AND _change_type = 'delete'")
    assert deleted.count() > 0 and deleted.filter("id % 11 != 0").count() == 0
