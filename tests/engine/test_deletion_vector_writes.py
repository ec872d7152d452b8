"""sqlext writes deletion vectors: on a table with ``delta.enableDeletionVectors=true`` DELETE,
UPDATE and MERGE mark rows instead of rewriting files (one deletion vector file per commit, the
data file's path stays live with a vector), and the table reads the same in sqlext, DuckDB and
delta-rs at every version, change feed included. OPTIMIZE, REORG ... APPLY (PURGE), VACUUM and
RESTORE handle the vectors; two concurrent DELETEs of one file conflict."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import sqlext
from sqlext.engine.dml.delete import delete
from sqlext.errors import ConcurrentModificationException
from sqlext.log.actions import Protocol
from sqlext.log.protocol import protocol_for_new_table, upgrade_for_features
from sqlext.log.table import DeltaLog
from tests.support import (assert_same_rows, deltalake_cdf, duckdb_query, duckdb_table,
                           read_deltalake, read_duckdb)
from tests.support.spark import spark_conf
from tests.support.table_checks import table_state

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's

ROWS = 1000


def _commit(path, version) -> list[dict]:
    text = (path / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _actions(path, version, kind) -> list[dict]:
    return [a[kind] for a in _commit(path, version) if kind in a]


def _metrics(path, version) -> dict:
    (info,) = _actions(path, version, "commitInfo")
    return {k: int(v) for k, v in info["operationMetrics"].items()}


def _make(spark, path, partitioned: bool = False, cdf: bool = True) -> str:
    """v0 CREATE (deletion vectors on), v1 two files of 500 rows (ids 0-499, 500-999); the
    DuckDB table ``expected`` mirrors the rows. Returns the SQL name of the table."""
    name = f"delta.`{path}`"
    parts = "PARTITIONED BY (p)" if partitioned else ""
    sqlext.sql(spark, f"CREATE TABLE {name} (id BIGINT, v STRING, p STRING) USING delta {parts} "
                      f"TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
                      f"'delta.enableChangeDataFeed' = '{str(cdf).lower()}')")
    df = spark.range(0, ROWS, 1, 2).selectExpr("id", "concat('v', id) AS v",
                                               "IF(id < 500, 'a', 'b') AS p")
    sqlext.write(df, str(path))
    duckdb_table("expected", read_duckdb(path))
    return name


def _expected() -> pa.Table:
    return duckdb_query("SELECT * FROM expected")


def _assert_readers(spark, path, expected_by_version: dict) -> None:
    """sqlext, DuckDB and delta-rs read every version as expected."""
    for version, expected in expected_by_version.items():
        mine = sqlext.read(spark, str(path), versionAsOf=version)
        assert_same_rows(mine, expected, sort_by=["id"])
        assert_same_rows(read_duckdb(path, version), expected, sort_by=["id"])
        assert_same_rows(read_deltalake(path, version), expected, sort_by=["id"])
        assert DeltaLog(str(path)).snapshot(version).num_records == expected.num_rows


def test_delete_marks_rows_in_one_vector_file_and_keeps_the_data_files(spark, table_path):
    name = _make(spark, table_path)
    versions = {1: _expected()}
    assert DeltaLog(str(table_path)).snapshot().protocol == Protocol(
        3, 7, ["deletionVectors"], ["appendOnly", "changeDataFeed", "deletionVectors",
                                    "invariants"])
    live = {f.path for f in DeltaLog(str(table_path)).snapshot().files}

    sqlext.sql(spark, f"DELETE FROM {name} WHERE id % 10 = 3 OR id = 700")
    duckdb_query("DELETE FROM expected WHERE id % 10 = 3 OR id = 700")
    versions[2] = _expected()
    adds, removes = _actions(table_path, 2, "add"), _actions(table_path, 2, "remove")
    assert {a["path"] for a in adds} == {r["path"] for r in removes} == live
    dvs = [a["deletionVector"] for a in adds]
    assert {d["storageType"] for d in dvs} == {"u"}
    assert len({d["pathOrInlineDv"] for d in dvs}) == 1          # one file holds both bitmaps
    assert sorted(d["offset"] for d in dvs)[0] == 1
    assert sorted(d["cardinality"] for d in dvs) == [50, 51]
    assert len(list(table_path.glob("deletion_vector_*.bin"))) == 1
    assert all(json.loads(a["stats"])["numRecords"] == 500 for a in adds)
    m = _metrics(table_path, 2)
    assert (m["numDeletedRows"], m["numDeletionVectorsAdded"], m["numDeletionVectorsRemoved"],
            m["numRemovedFiles"], m["numAddedFiles"], m["numCopiedRows"]) == (101, 2, 0, 0, 0, 0)

    # a second DELETE unions the vectors: remove (path, old vector), add (path, new vector)
    sqlext.DeltaTable.forPath(spark, str(table_path)).delete("id % 10 = 4")
    duckdb_query("DELETE FROM expected WHERE id % 10 = 4")
    versions[3] = _expected()
    removed = {r["path"]: r["deletionVector"] for r in _actions(table_path, 3, "remove")}
    assert {r["pathOrInlineDv"] for r in removed.values()} == {dvs[0]["pathOrInlineDv"]}
    assert sorted(a["deletionVector"]["cardinality"] for a in _actions(table_path, 3, "add")
                  ) == [100, 101]
    assert _metrics(table_path, 3)["numDeletionVectorsUpdated"] == 2
    # nothing matches: nothing committed
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id = 3")
    assert DeltaLog(str(table_path)).snapshot().version == 3
    _assert_readers(spark, table_path, versions)

    # the change feed: the deleted rows as delete change rows (sqlext and delta-rs agree)
    feed = sqlext.changes(spark, str(table_path), startingVersion=2)
    for version in (2, 3):
        kept = set(versions[version]["id"].to_pylist())
        before = versions[version - 1]
        deleted = before.filter(pc.invert(pc.is_in(before["id"], pa.array(sorted(kept),
                                                                           pa.int64()))))
        mine = feed.filter(f"_commit_version = {version}").drop("_commit_version",
                                                                  "_commit_timestamp")
        assert {r._change_type for r in mine.collect()} == {"delete"}
        assert_same_rows(mine.drop("_change_type"), deleted, sort_by=["id"])
    theirs = deltalake_cdf(table_path, 2)
    assert theirs.num_rows == feed.count() == 201


def test_delete_of_every_row_of_a_file_removes_it(spark, table_path):
    name = _make(spark, table_path, partitioned=True, cdf=False)
    files = {f.partition_values["p"]: f.path for f in DeltaLog(str(table_path)).snapshot().files}
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id % 2 = 0 AND id < 500")      # v2: a vector
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id < 500 OR id = 999")         # v3
    duckdb_query("DELETE FROM expected WHERE id < 500 OR id = 999")
    adds, removes = _actions(table_path, 3, "add"), _actions(table_path, 3, "remove")
    assert sorted(r["path"] for r in removes) == sorted(files.values())
    assert [a["path"] for a in adds] == [files["b"]]            # a: only removed
    assert adds[0]["deletionVector"]["cardinality"] == 1
    m = _metrics(table_path, 3)
    assert (m["numRemovedFiles"], m["numDeletionVectorsAdded"], m["numDeletionVectorsRemoved"],
            m["numDeletedRows"]) == (1, 1, 1, 251)
    assert not _actions(table_path, 3, "cdc")
    _assert_readers(spark, table_path, {3: _expected()})


def test_update_marks_old_rows_and_writes_new_ones(spark, table_path):
    name = _make(spark, table_path)
    before = _expected()
    live = {f.path for f in DeltaLog(str(table_path)).snapshot().files}
    sqlext.sql(spark, f"UPDATE {name} SET v = 'upd', p = 'c' WHERE id % 100 = 7")
    duckdb_query("UPDATE expected SET v = 'upd', p = 'c' WHERE id % 100 = 7")
    adds = _actions(table_path, 2, "add")
    marked = [a for a in adds if "deletionVector" in a]
    assert {a["path"] for a in marked} == live
    assert sum(a["deletionVector"]["cardinality"] for a in marked) == 10
    new = [a for a in adds if "deletionVector" not in a]
    assert sum(json.loads(a["stats"])["numRecords"] for a in new) == 10
    m = _metrics(table_path, 2)
    assert (m["numUpdatedRows"], m["numCopiedRows"], m["numAddedFiles"],
            m["numDeletionVectorsAdded"]) == (10, 0, len(new), 2)
    # a second UPDATE of rows in the new file and in a marked file
    sqlext.sql(spark, f"UPDATE {name} SET v = concat(v, '!') WHERE id IN (7, 8)")
    duckdb_query("UPDATE expected SET v = v || '!' WHERE id IN (7, 8)")
    _assert_readers(spark, table_path, {1: before, 3: _expected()})
    feed = sqlext.changes(spark, str(table_path), startingVersion=2, endingVersion=2)
    kinds = sorted(r._change_type for r in feed.collect())
    assert kinds == ["update_postimage"] * 10 + ["update_preimage"] * 10
    post = feed.filter("_change_type = 'update_postimage'").drop(
        "_change_type", "_commit_version", "_commit_timestamp")
    assert {(r.v, r.p) for r in post.collect()} == {("upd", "c")}
    assert deltalake_cdf(table_path, 2, 2).num_rows == 20


def test_merge_marks_matched_rows_and_writes_updates_and_inserts(spark, table_path):
    name = _make(spark, table_path)
    before = _expected()
    live = {f.path for f in DeltaLog(str(table_path)).snapshot().files}
    source = spark.range(990, 1010).union(spark.range(0, 5)).selectExpr(
        "id", "concat('s', id) AS v", "'c' AS p")
    source.createOrReplaceTempView("dv_merge_source")
    duckdb_table("dv_merge_source", source.toArrow())
    statement = ("MERGE INTO {t} USING dv_merge_source s ON {t}.id = s.id "
                 "WHEN MATCHED AND s.id % 3 = 0 THEN DELETE "
                 "WHEN MATCHED THEN UPDATE SET v = s.v "
                 "WHEN NOT MATCHED THEN INSERT (id, v, p) VALUES (s.id, s.v, s.p)")
    sqlext.sql(spark, statement.format(t=name).replace(f"{name}.id", "t.id").replace(
        f"INTO {name} USING", f"INTO {name} t USING"))
    duckdb_query(statement.format(t="expected"))
    adds = _actions(table_path, 2, "add")
    marked = [a for a in adds if "deletionVector" in a]
    assert {a["path"] for a in marked} == live                  # both files stay, with vectors
    assert sum(a["deletionVector"]["cardinality"] for a in marked) == 15
    new = [a for a in adds if "deletionVector" not in a]
    assert sum(json.loads(a["stats"])["numRecords"] for a in new) == 9 + 10   # updated, inserted
    m = _metrics(table_path, 2)
    assert (m["numTargetRowsUpdated"], m["numTargetRowsDeleted"], m["numTargetRowsInserted"],
            m["numTargetRowsCopied"], m["numTargetFilesRemoved"],
            m["numTargetDeletionVectorsAdded"]) == (9, 6, 10, 0, 0, 2)
    _assert_readers(spark, table_path, {1: before, 2: _expected()})
    feed = sqlext.changes(spark, str(table_path), startingVersion=2, endingVersion=2)
    kinds = sorted(r._change_type for r in feed.collect())
    assert kinds == (["delete"] * 6 + ["insert"] * 10 + ["update_postimage"] * 9
                     + ["update_preimage"] * 9)
    assert deltalake_cdf(table_path, 2, 2).num_rows == 34


def test_protocol_upgrade_and_session_default(spark, tmp_path):
    """SET TBLPROPERTIES on a table sqlext made (1/4) moves it to 3/7 listing the features its
    writer version implied, as delta-spark; the session default turns vectors on for new
    tables."""
    assert upgrade_for_features(Protocol(1, 2), {"deletionVectors"}) == Protocol(
        3, 7, ["deletionVectors"], ["appendOnly", "deletionVectors", "invariants"])
    assert protocol_for_new_table({"delta.enableDeletionVectors": "false"}) == Protocol(1, 2)
    path = tmp_path / "t"
    sqlext.write(spark.range(10).selectExpr("id"), str(path))
    assert DeltaLog(str(path)).snapshot().protocol == Protocol(1, 4)
    sqlext.sql(spark, f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES "
                      "('delta.enableDeletionVectors' = 'true')")
    protocol = DeltaLog(str(path)).snapshot().protocol
    assert protocol.min_reader_version == 3 and protocol.reader_features == ["deletionVectors"]
    assert {"changeDataFeed", "deletionVectors", "checkConstraints"} <= set(
        protocol.writer_features)
    sqlext.sql(spark, f"DELETE FROM delta.`{path}` WHERE id = 4")
    assert "deletionVector" in _actions(path, 2, "add")[0]
    assert sorted(read_duckdb(path)["id"].to_pylist()) == [0, 1, 2, 3, 5, 6, 7, 8, 9]

    other = tmp_path / "u"
    with spark_conf(spark, {"spark.databricks.delta.properties.defaults.enableDeletionVectors":
                            "true"}):
        sqlext.write(spark.range(10).selectExpr("id"), str(other))
    snapshot = DeltaLog(str(other)).snapshot()
    assert snapshot.configuration["delta.enableDeletionVectors"] == "true"
    assert snapshot.protocol.reader_features == ["deletionVectors"]


def test_optimize_and_reorg_purge_rewrite_files_with_vectors(spark, table_path):
    name = _make(spark, table_path, cdf=False)
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id < 20")        # 4% of one file
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id = 600")       # 0.2% of the other
    duckdb_query("DELETE FROM expected WHERE id < 20 OR id = 600")
    with spark_conf(spark, {"spark.databricks.delta.optimize.minFileSize": "1"}):
        sqlext.sql(spark, f"OPTIMIZE {name}")                     # below 5%: nothing to do
        assert DeltaLog(str(table_path)).snapshot().version == 3
        with spark_conf(spark, {"spark.databricks.delta.optimize.maxDeletedRowsRatio": "0.01"}):
            sqlext.sql(spark, f"OPTIMIZE {name}")
    m = _metrics(table_path, 4)
    assert (m["numRemovedFiles"], m["numDeletionVectorsRemoved"],
            m["numDeletionVectorRowsRemoved"]) == (1, 1, 20)
    sqlext.sql(spark, f"REORG TABLE {name} APPLY (PURGE)")
    (info,) = _actions(table_path, 5, "commitInfo")
    assert info["operation"] == "REORG"
    snapshot = DeltaLog(str(table_path)).snapshot()
    assert not any(f.deletion_vector for f in snapshot.files)
    assert all(not a["dataChange"] for a in _actions(table_path, 5, "add"))
    _assert_readers(spark, table_path, {3: _expected(), 4: _expected(), 5: _expected()})
    # nothing left to purge
    sqlext.sql(spark, f"REORG TABLE {name} APPLY (PURGE)")
    assert DeltaLog(str(table_path)).snapshot().version == 5


def test_vacuum_keeps_live_vectors_and_restore_brings_old_ones_back(spark, table_path):
    name = _make(spark, table_path, cdf=False)
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id % 3 = 0")      # v2: vector file A
    v2 = read_duckdb(table_path)
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id % 3 = 1")      # v3: file B replaces A
    (first,) = [a["deletionVector"]["pathOrInlineDv"] for a in _actions(table_path, 2, "add")][:1]
    sqlext.sql(spark, f"RESTORE TABLE {name} TO VERSION AS OF 2")   # v4: A again
    assert {a["deletionVector"]["pathOrInlineDv"] for a in _actions(table_path, 4, "add")} == {
        first}
    _assert_readers(spark, table_path, {4: v2})
    assert len(list(table_path.glob("deletion_vector_*.bin"))) == 2
    with spark_conf(spark, {"spark.databricks.delta.retentionDurationCheck.enabled": "false"}):
        sqlext.sql(spark, f"VACUUM {name} RETAIN 0 HOURS")
    # B is referenced only by v4's tombstones (older than zero hours): gone; A is live: kept
    assert len(list(table_path.glob("deletion_vector_*.bin"))) == 1
    assert_same_rows(sqlext.read(spark, str(table_path)), v2, sort_by=["id"])
    assert_same_rows(read_duckdb(table_path), v2, sort_by=["id"])


def test_concurrent_deletes_of_one_file_conflict(spark, table_path):
    _make(spark, table_path, cdf=False)
    log = DeltaLog(str(table_path))
    snapshot = log.snapshot()
    txns = [log.start_transaction(snapshot) for _ in range(2)]
    assert delete(spark, log, "id = 10", txn=txns[0]).version == 2
    state = table_state(table_path)
    # the winner removed the file and re-added it with a vector; checked in delta-spark's order,
    # the re-added file holds rows the loser read (ConcurrentAppendException) before the
    # remove-remove clash is looked at
    (path,) = {f.path for f in snapshot.files if f.parsed_stats()["minValues"]["id"] == 0}
    with pytest.raises(ConcurrentModificationException, match=path):
        delete(spark, log, "id = 20", txn=txns[1])
    assert table_state(table_path) == state
    assert sqlext.read(spark, str(table_path)).count() == ROWS - 1


def test_vectors_on_a_column_mapped_table_after_a_rename(spark, table_path):
    """Deletion vectors and column mapping together: rows found through the mapped scan's row
    indexes, new files under physical names; every reader agrees at every version."""
    # unpartitioned: DuckDB 1.5.5 reads partition values of column-mapped tables as NULL
    name = f"delta.`{table_path}`"
    sqlext.sql(spark, f"CREATE TABLE {name} (id BIGINT, v STRING, p STRING) USING delta "
                      "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
                      "'delta.columnMapping.mode' = 'name', 'delta.enableChangeDataFeed' = 'true')")
    sqlext.write(spark.range(0, 200, 1, 2).selectExpr(
        "id", "concat('v', id) AS v", "IF(id < 100, 'a', 'b') AS p"), str(table_path))
    sqlext.sql(spark, f"ALTER TABLE {name} RENAME COLUMN v TO label")
    duckdb_table("expected", read_duckdb(table_path))
    versions = {2: _expected()}
    live = {f.path for f in DeltaLog(str(table_path)).snapshot().files}

    sqlext.sql(spark, f"DELETE FROM {name} WHERE id % 10 = 3")
    duckdb_query("DELETE FROM expected WHERE id % 10 = 3")
    marked = [a for a in _actions(table_path, 3, "add") if "deletionVector" in a]
    assert {a["path"] for a in marked} == live
    versions[3] = _expected()
    sqlext.sql(spark, f"UPDATE {name} SET label = 'u' WHERE id % 10 = 4")
    duckdb_query("UPDATE expected SET label = 'u' WHERE id % 10 = 4")
    versions[4] = _expected()
    spark.range(195, 205).selectExpr("id", "'m' AS label", "'b' AS p") \
        .createOrReplaceTempView("dv_cm_source")
    sqlext.sql(spark, f"MERGE INTO {name} t USING dv_cm_source s ON t.id = s.id "
                      "WHEN MATCHED THEN UPDATE SET label = s.label WHEN NOT MATCHED THEN INSERT *")
    duckdb_query("UPDATE expected SET label = 'm' WHERE id BETWEEN 195 AND 199")
    duckdb_query("INSERT INTO expected SELECT range AS id, 'm', 'b' FROM range(200, 205)")
    versions[5] = _expected()
    assert DeltaLog(str(table_path)).snapshot().protocol.reader_features == [
        "columnMapping", "deletionVectors"]
    # the new files hold physical names only
    new_files = [a["path"] for a in _actions(table_path, 5, "add") if "deletionVector" not in a]
    assert new_files and all(
        not {"id", "label", "v", "p"} & set(pq.read_schema(table_path / f).names)
        for f in new_files)
    _assert_readers(spark, table_path, versions)
    feed = sqlext.changes(spark, str(table_path), startingVersion=3, endingVersion=3)
    assert sorted(r.id for r in feed.collect()) == list(range(3, 200, 10))
