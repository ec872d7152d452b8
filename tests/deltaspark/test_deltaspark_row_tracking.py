"""Row tracking written by sqlext, checked with delta-spark 4.4 (which reads ``_metadata.row_id``
and ``_metadata.row_commit_version``): sqlext's new rows get fresh ids above the high-water mark
and their commit version; delta-spark's next rows continue above sqlext's mark and sqlext's above
delta-spark's; delta-spark's UPDATE preserves ids on sqlext's files; sqlext's MERGE (each of its
rewrite paths) and replaceWhere keep the ids delta-spark's keep; a deletion-vector DELETE
keeps the ids of the rows left; turning row tracking on for a table with data gives every row
an id; the protocol and properties match delta-spark's for the same CREATE."""

from __future__ import annotations

import json
import shutil

import pytest

import sqlext
from tests.support.deltaspark import delta_path
from tests.support.spark import spark_conf

pytestmark = pytest.mark.slow


def _row_ids(delta_spark, path) -> dict[int, tuple[int, int]]:
    """id -> (row id, row commit version) as delta-spark reads them."""
    table = delta_spark.sql(
        f"SELECT id, _metadata.row_id AS row_id, _metadata.row_commit_version AS version "
        f"FROM {delta_path(path)}")
    rows = table.to_pylist()
    assert len({r["row_id"] for r in rows}) == len(rows), rows          # ids are unique
    return {r["id"]: (r["row_id"], r["version"]) for r in rows}


def _commit(path, version) -> list[dict]:
    text = (path / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_ids_continue_across_sqlext_and_delta_spark_writes(spark, delta_spark, tmp_path):
    path = tmp_path / "t"
    name, p = f"delta.`{path}`", delta_path(path)
    sqlext.sql(spark, f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta "
                      "TBLPROPERTIES ('delta.enableRowTracking' = 'true')")            # v0
    sqlext.sql(spark, f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b'), (3, 'c')")       # v1
    sqlext.sql(spark, f"INSERT INTO {name} VALUES (4, 'd'), (5, 'e')")                 # v2
    ids = _row_ids(delta_spark, path)
    assert sorted(r for r, _ in ids.values()) == [0, 1, 2, 3, 4]
    assert {i: v for i, (_, v) in ids.items()} == {1: 1, 2: 1, 3: 1, 4: 2, 5: 2}
    delta_spark.sql(f"INSERT INTO {p} VALUES (6, 'f')")                                # v3
    assert _row_ids(delta_spark, path)[6] == (5, 3)
    sqlext.sql(spark, f"INSERT INTO {name} VALUES (7, 'g')")                           # v4
    ids = _row_ids(delta_spark, path)
    assert ids[7] == (6, 4)
    delta_spark.sql(f"UPDATE {p} SET v = 'x' WHERE id = 2")                           # v5
    after = _row_ids(delta_spark, path)
    assert after[2] == (ids[2][0], 5)                   # delta-spark keeps the id of sqlext's row
    assert {i: r for i, (r, _) in after.items()} == {i: r for i, (r, _) in ids.items()}
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id = 1")                              # v6
    assert _row_ids(delta_spark, path) == {i: after[i] for i in after if i != 1}
    sqlext.sql(spark, f"UPDATE {name} SET v = 'y' WHERE id = 7")                       # v7
    sqlext.sql(spark, f"MERGE INTO {name} t USING (SELECT 8L AS id, 'h' AS v) s "
                      "ON t.id = s.id WHEN NOT MATCHED THEN INSERT *")                  # v8
    final = _row_ids(delta_spark, path)
    assert sorted(final) == [2, 3, 4, 5, 6, 7, 8]
    assert final[7] == (after[7][0], 7)           # updated: same id, the update's version
    assert final[8][1] == 8 and final[8][0] > max(r for r, _ in after.values())
    assert {i: final[i] for i in (2, 3, 4, 5, 6)} == {i: after[i] for i in (2, 3, 4, 5, 6)}
    for version in (6, 7):
        info = _commit(path, version)[0]["commitInfo"]
        assert info["tags"]["delta.rowTracking.preserved"] == "true"
    # delta-spark's next insert continues above every id sqlext gave
    delta_spark.sql(f"INSERT INTO {p} VALUES (9, 'i')")                                # v9
    last = _row_ids(delta_spark, path)
    assert last[9][0] > max(r for i, (r, _) in last.items() if i != 9)


def test_rewrites_preserve_stable_row_ids(spark, delta_spark, tmp_path):
    """Copy-on-write DELETE and UPDATE (and OPTIMIZE) write the copied and updated rows' stable
    ids (and the copied rows' commit versions) to the materialized columns; delta-spark reads
    them, keeps them on its own UPDATE, and sqlext reads delta-spark's back."""
    path = tmp_path / "t"
    name, p = f"delta.`{path}`", delta_path(path)
    sqlext.sql(spark, f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta TBLPROPERTIES "
                      "('delta.enableRowTracking' = 'true')")                          # v0
    sqlext.sql(spark, f"INSERT INTO {name} SELECT id, concat('v', id) FROM range(0, 300)")  # v1
    start = _row_ids(delta_spark, path)
    assert sorted(r for r, _ in start.values()) == list(range(300))
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id % 10 = 0")                         # v2
    assert _row_ids(delta_spark, path) == {i: start[i] for i in start if i % 10}
    sqlext.sql(spark, f"UPDATE {name} SET v = 'u' WHERE id % 7 = 0")                   # v3
    updated = _row_ids(delta_spark, path)
    assert updated == {i: (start[i][0], 3 if i % 7 == 0 else 1) for i in start if i % 10}
    delta_spark.sql(f"UPDATE {p} SET v = 'd' WHERE id % 3 = 0")                       # v4
    theirs = _row_ids(delta_spark, path)
    assert {i: r for i, (r, _) in theirs.items()} == {i: r for i, (r, _) in updated.items()}
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id % 11 = 0")                         # v5
    assert _row_ids(delta_spark, path) == {i: theirs[i] for i in theirs if i % 11}
    before_optimize = _row_ids(delta_spark, path)
    sqlext.sql(spark, f"OPTIMIZE {name}")                                              # v6
    assert _row_ids(delta_spark, path) == before_optimize
    for version in (2, 3, 5, 6):
        assert _commit(path, version)[0]["commitInfo"]["tags"][
            "delta.rowTracking.preserved"] == "true"
    assert sorted(r.id for r in sqlext.read(spark, str(path)).collect()) == sorted(
        i for i in range(300) if i % 10 and i % 11)


_MERGE = ("MERGE INTO {} t USING (SELECT id, CASE WHEN id % 11 = 0 THEN 'd' ELSE 'u' END AS op "
          "FROM range(0, 310) WHERE id % 7 = 0 OR id % 11 = 0 OR id >= 300) s ON t.id = s.id "
          "WHEN MATCHED AND s.op = 'd' THEN DELETE "
          "WHEN MATCHED THEN UPDATE SET v = concat('m', s.id) "
          "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, 'new') "
          "WHEN NOT MATCHED BY SOURCE AND t.id % 13 = 0 THEN UPDATE SET v = 'gone'")


@pytest.mark.parametrize("path_taken", ["one pass", "two passes", "deletion vectors",
                                        "column mapping"])
def test_merge_keeps_ids_as_delta_spark_does(spark, delta_spark, tmp_path, path_taken):
    """The same MERGE (delete, update, insert, update by source) run by sqlext and by
    delta-spark on copies of one table: every row left from before has the same stable row id
    and row commit version in both (copied rows keep theirs, updated ones get the MERGE's
    version); inserted rows get fresh ids above every earlier one."""
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    dv = "true" if path_taken == "deletion vectors" else "false"
    mapping = "name" if path_taken == "column mapping" else "none"
    sqlext.sql(spark, f"CREATE TABLE delta.`{mine}` (id BIGINT, v STRING) USING delta "
                      "TBLPROPERTIES ('delta.enableRowTracking' = 'true', "
                      f"'delta.enableDeletionVectors' = '{dv}', "
                      f"'delta.columnMapping.mode' = '{mapping}')")                    # v0
    sqlext.write(spark.range(0, 300, 1, 3).selectExpr("id", "concat('v', id) AS v"), str(mine),
                 mode="append")                                                          # v1
    shutil.copytree(mine, theirs)
    start = _row_ids(delta_spark, mine)
    at_once = {"spark.sqlext.merge.atOnceMaxBytes": "0"} if path_taken == "two passes" else {}
    with spark_conf(spark, at_once):
        sqlext.sql(spark, _MERGE.format(f"delta.`{mine}`"))                             # v2
    delta_spark.sql(_MERGE.format(delta_path(theirs)))                                  # v2
    ours, expected = _row_ids(delta_spark, mine), _row_ids(delta_spark, theirs)
    assert sorted(ours) == sorted(expected)
    old = [i for i in expected if i < 300]
    assert {i: ours[i] for i in old} == {i: expected[i] for i in old}
    assert {i: v for i, (_, v) in ours.items()} == {i: v for i, (_, v) in expected.items()}
    assert ours[7] == (start[7][0], 2) and ours[1] == start[1]       # updated / copied
    assert min(r for i, (r, _) in ours.items() if i >= 300) > max(r for r, _ in start.values())
    assert _commit(mine, 2)[0]["commitInfo"]["tags"]["delta.rowTracking.preserved"] == "true"
    if path_taken == "deletion vectors":
        assert any("deletionVector" in a.get("add", {}) for a in _commit(mine, 2))
    assert sorted(tuple(r) for r in sqlext.read(spark, str(mine)).collect()) == sorted(
        (r["id"], r["v"]) for r in delta_spark.sql(f"SELECT * FROM {delta_path(theirs)}")
        .to_pylist())


def test_replace_where_keeps_the_ids_of_the_rows_left(spark, delta_spark, tmp_path):
    """replaceWhere on a data column rewrites the files it touches: the rows it keeps keep their
    stable ids and commit versions; the new rows get fresh ids."""
    path = tmp_path / "t"
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (id BIGINT, v STRING) USING delta "
                      "TBLPROPERTIES ('delta.enableRowTracking' = 'true')")
    sqlext.write(spark.range(0, 100, 1, 2).selectExpr("id", "concat('v', id) AS v"), str(path),
                 mode="append")                                                          # v1
    start = _row_ids(delta_spark, path)
    sqlext.write(spark.range(10, 20).selectExpr("id", "'r' AS v"), str(path), mode="overwrite",
                 replaceWhere="id >= 10 AND id < 20")                                    # v2
    after = _row_ids(delta_spark, path)
    assert {i: after[i] for i in after if not 10 <= i < 20} == {
        i: start[i] for i in start if not 10 <= i < 20}
    assert min(after[i][0] for i in range(10, 20)) > max(r for r, _ in start.values())
    assert {after[i][1] for i in range(10, 20)} == {2}
    assert _commit(path, 2)[0]["commitInfo"]["tags"]["delta.rowTracking.preserved"] == "true"


def test_deletion_vector_delete_keeps_the_ids_of_the_rows_left(spark, delta_spark, tmp_path):
    """A deletion-vector DELETE keeps the files (and so every id); a deletion-vector UPDATE
    writes the updated rows to new files with their ids kept."""
    path = tmp_path / "t"
    name = f"delta.`{path}`"
    sqlext.sql(spark, f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta TBLPROPERTIES "
                      "('delta.enableRowTracking' = 'true', "
                      "'delta.enableDeletionVectors' = 'true')")
    sqlext.sql(spark, f"INSERT INTO {name} SELECT id, concat('v', id) FROM range(0, 200)")
    before = _row_ids(delta_spark, path)
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id % 3 = 0")                          # v2
    assert any("deletionVector" in a.get("add", {}) for a in _commit(path, 2))
    after = _row_ids(delta_spark, path)
    assert after == {i: before[i] for i in before if i % 3}
    assert _commit(path, 2)[0]["commitInfo"]["tags"]["delta.rowTracking.preserved"] == "true"
    sqlext.sql(spark, f"UPDATE {name} SET v = 'u' WHERE id % 5 = 1")                   # v3
    assert _row_ids(delta_spark, path) == {i: (after[i][0], 3 if i % 5 == 1 else after[i][1])
                                           for i in after}


def test_turning_row_tracking_on_gives_every_row_an_id(spark, delta_spark, tmp_path):
    path = tmp_path / "t"
    name, p = f"delta.`{path}`", delta_path(path)
    sqlext.sql(spark, f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta")
    sqlext.sql(spark, f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')")
    sqlext.sql(spark, f"INSERT INTO {name} VALUES (3, 'c')")
    sqlext.sql(spark, f"ALTER TABLE {name} SET TBLPROPERTIES ('delta.enableRowTracking' = 'true')")
    ids = _row_ids(delta_spark, path)
    assert sorted(r for r, _ in ids.values()) == [0, 1, 2]
    assert sorted(ids) == [1, 2, 3]
    delta_spark.sql(f"INSERT INTO {p} VALUES (4, 'd')")
    assert _row_ids(delta_spark, path)[4][0] == 3


def test_protocol_and_properties_match_delta_spark(spark, delta_spark, tmp_path):
    create = ("CREATE TABLE {} (id BIGINT) USING delta TBLPROPERTIES "
              "('delta.enableRowTracking' = 'true', 'delta.enableChangeDataFeed' = 'false')")
    theirs, mine = tmp_path / "theirs", tmp_path / "mine"
    delta_spark.sql(create.format(delta_path(theirs)))
    sqlext.sql(spark, create.format(f"delta.`{mine}`"))

    def protocol_and_keys(path):
        actions = _commit(path, 0)
        protocol = next(a["protocol"] for a in actions if "protocol" in a)
        conf = next(a["metaData"] for a in actions if "metaData" in a)["configuration"]
        return ({k: sorted(v) if isinstance(v, list) else v for k, v in protocol.items()},
                sorted(conf))
    assert protocol_and_keys(mine) == protocol_and_keys(theirs)
