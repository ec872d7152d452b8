"""Writing column-mapped tables (``delta.columnMapping.mode`` = ``name``): enabling mapping on an
existing table (protocol upgrade, ids and physical names for every field), RENAME / DROP COLUMN as
metadata-only commits, schema evolution, appends, DELETE / UPDATE / MERGE / OPTIMIZE after a
rename; every version reads the same in sqlext, delta-rs and DuckDB; the files carry physical
names; the change feed; clear errors that leave the table unchanged.

One history table is built once per module (Spark jobs are the cost); each test checks one side.
"""

from __future__ import annotations

import glob
import json
import os

import pyarrow.parquet as pq
import pytest

import sqlext
from sqlext.errors import (AnalysisException, ChangeDataFeedError, SqlextError,
                           UnsupportedOperationError)
from sqlext.log.column_mapping import (FIELD_ID_KEY, MAX_COLUMN_ID_KEY, PHYSICAL_NAME_KEY,
                                       ColumnMapping)
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows, read_deltalake, read_duckdb
from tests.support.histories import append_merging_schema, run_steps
from tests.support.spark import spark_conf

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's

ROWS = ("SELECT id, concat('v', id) AS v, named_struct('a', CAST(id AS INT), 'b', concat('b', id)) "
        "AS s, concat('p', id % 3) AS part FROM range({0}, {1})")

# the history: SQL ({p} is the table) or a Python step (tests/support/histories.py)
HISTORY = [
    "CREATE TABLE {p} (id BIGINT, v STRING, s STRUCT<a: INT, b: STRING>, part STRING) "
    "USING delta PARTITIONED BY (part)",                                              # v0
    "INSERT INTO {p} " + ROWS.format(0, 20),                                          # v1
    "ALTER TABLE {p} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name')",         # v2
    "ALTER TABLE {p} RENAME COLUMN v TO w",                                           # v3
    "ALTER TABLE {p} RENAME COLUMN s.a TO alpha",                                     # v4
    "INSERT INTO {p} (id, w, s, part) SELECT id, concat('w', id), named_struct('alpha', "
    "CAST(id AS INT), 'b', concat('b', id)), concat('p', id % 3) FROM range(20, 30)",  # v5
    "DELETE FROM {p} WHERE id % 5 = 0",                                               # v6
    "UPDATE {p} SET w = concat('u', id), s.b = 'upd' WHERE id < 8",                  # v7
    "MERGE INTO {p} t USING (SELECT id, concat('m', id) AS w FROM range(25, 35)) src "
    "ON t.id = src.id WHEN MATCHED THEN UPDATE SET w = src.w WHEN NOT MATCHED THEN INSERT "
    "(id, w, s, part) VALUES (src.id, src.w, named_struct('alpha', CAST(src.id AS INT), "
    "'b', 'new'), 'p9')",                                                             # v8
    "ALTER TABLE {p} DROP COLUMN w",                                                  # v9
    # schema evolution: a new column gets the next id and a col-<uuid> physical name
    append_merging_schema("SELECT id, named_struct('alpha', CAST(id AS INT), 'b', 'ev') AS s, "
                          "'p1' AS part, concat('e', id) AS extra FROM range(40, 44)"),  # v10
    "ALTER TABLE {p} RENAME COLUMN part TO region",                                   # v11
    "INSERT INTO {p} (id, s, region, extra) VALUES (100, named_struct('alpha', 100, 'b', "
    "'x'), 'p1', 'e100'), (101, NULL, 'p7', NULL)",                                   # v12
    "OPTIMIZE {p}",                                                                   # v13
    "ALTER TABLE {p} ALTER COLUMN id COMMENT 'the key'",                              # v14
]
VERSIONS = range(len(HISTORY))


def _p(path) -> str:
    return f"delta.`{path}`"


@pytest.fixture(scope="module")
def history(spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("cmw") / "t"
    run_steps(spark, path, HISTORY)
    assert DeltaLog(str(path)).snapshot().version == len(HISTORY) - 1
    return path


def _schema(path, version=None):
    return json.loads(DeltaLog(str(path)).snapshot(version).metadata.schema_string)


def _log_files(path) -> list[str]:
    return sorted(os.listdir(os.path.join(path, "_delta_log")))


def test_enabling_upgrades_protocol_and_assigns_ids(history):
    log = DeltaLog(str(history))
    before, after = log.snapshot(1), log.snapshot(2)
    assert (before.protocol.min_reader_version, before.protocol.min_writer_version) == (1, 4)
    # as delta-spark's legacy upgrade: reader 2 / writer 5
    assert (after.protocol.min_reader_version, after.protocol.min_writer_version) == (2, 5)
    fields = _schema(history, 2)["fields"]
    meta = {f["name"]: f["metadata"] for f in fields}
    # existing columns keep their names as physical names (their files hold them)
    assert {n: m[PHYSICAL_NAME_KEY] for n, m in meta.items()} == {
        "id": "id", "v": "v", "s": "s", "part": "part"}
    nested = {f["name"]: f["metadata"] for f in fields[2]["type"]["fields"]}
    assert nested["a"][PHYSICAL_NAME_KEY] == "a" and nested["b"][PHYSICAL_NAME_KEY] == "b"
    ids = sorted([m[FIELD_ID_KEY] for m in meta.values()]
                 + [m[FIELD_ID_KEY] for m in nested.values()])
    assert ids == [1, 2, 3, 4, 5, 6]
    assert after.configuration[MAX_COLUMN_ID_KEY] == "6"
    # schema evolution at v10: the next id and a col-<uuid> physical name
    extra = next(f for f in _schema(history, 10)["fields"] if f["name"] == "extra")
    assert extra["metadata"][FIELD_ID_KEY] == 7
    assert extra["metadata"][PHYSICAL_NAME_KEY].startswith("col-")
    assert log.snapshot(10).configuration[MAX_COLUMN_ID_KEY] == "7"
    # rename and drop are metadata-only: no file added or removed
    for version in (3, 4, 9, 11, 14):
        assert not glob.glob(f"{history}/_delta_log/{version:020d}.json") or all(
            "add" not in json.loads(line) and "remove" not in json.loads(line)
            for line in open(f"{history}/_delta_log/{version:020d}.json"))


def test_names_as_users_see_them(spark, history):
    latest = sqlext.read(spark, str(history))
    assert latest.columns == ["id", "s", "region", "extra"]
    assert latest.schema["s"].dataType.names == ["alpha", "b"]
    assert latest.schema["id"].metadata == {"comment": "the key"}
    got = {r["id"]: r for r in latest.collect()}
    assert got[3]["s"]["b"] == "upd" and got[27]["s"]["alpha"] == 27
    assert got[30]["region"] == "p9" and got[100]["extra"] == "e100" and got[41]["extra"] == "e41"
    assert 5 not in got and 20 not in got                        # deleted at v6
    assert got[25]["region"] == "p9"                 # deleted at v6, inserted again by MERGE
    # time travel reads each version's own names
    v3 = sqlext.sql(spark, f"SELECT id, w, s.a AS a FROM {_p(history)} VERSION AS OF 3 "
                           "WHERE id = 4").collect()
    assert [tuple(r) for r in v3] == [(4, "v4", 4)]
    v8 = sqlext.read(spark, str(history), versionAsOf=8, filter="id = 26").collect()
    assert v8[0]["w"] == "m26" and v8[0]["s"]["alpha"] == 26
    # the partition column renamed at v11 still prunes by its (physical) partition values
    with spark_conf(spark, {"spark.sqlext.execution.local": "off"}):   # the file scan's files
        only = sqlext.read(spark, str(history), filter="region = 'p7'")
    assert [r["id"] for r in only.collect()] == [101]
    assert len(only.inputFiles()) == 1


def test_every_version_reads_the_same_in_delta_rs_and_duckdb(spark, history):
    for version in VERSIONS:
        mine = sqlext.read(spark, str(history), versionAsOf=version).toArrow()
        if version == 0:
            assert mine.num_rows == 0
            continue
        theirs = read_deltalake(history, version, engine="datafusion")
        assert theirs.column_names == mine.column_names, version
        assert_same_rows(mine, theirs, sort_by=["id"])
        # DuckDB 1.5.5 reads a column-mapped partition column as NULL once its physical name
        # differs from the logical one (after the rename at v11): compare the other columns then
        data = [c for c in mine.column_names if version < 11 or c != "region"]
        assert_same_rows(mine.select(data), read_duckdb(history, version).select(data),
                         sort_by=["id"])


def test_files_carry_physical_names(history):
    snapshot = DeltaLog(str(history)).snapshot()
    extra_physical = next(f for f in _schema(history)["fields"]
                          if f["name"] == "extra")["metadata"][PHYSICAL_NAME_KEY]
    mapping = ColumnMapping.of(snapshot.metadata)
    # files from before v10 (a partition OPTIMIZE left alone) hold the columns of their time:
    # w by its physical name "v", no extra
    older = {f.path for f in DeltaLog(str(history)).snapshot(9).files}
    assert any(f.path not in older for f in snapshot.files)
    for f in snapshot.files:
        # partition values and statistics keyed by physical names, never by logical ones
        assert set(f.partition_values) == {"part"}
        stats = json.loads(f.stats)
        new = f.path not in older
        assert set(stats["minValues"]) <= ({"id", "s", extra_physical} if new else {"id", "s", "v"})
        assert "alpha" not in json.dumps(stats) and "region" not in f.partition_values
        assert not {"w", "extra"} & set(stats["minValues"])
        schema = pq.read_schema(os.path.join(history, f.path.replace("%3D", "=")))
        assert "extra" not in schema.names and (extra_physical in schema.names) == new
        assert schema.field("s").type.field(0).name == "a"            # s.alpha's physical name
        assert schema.field("id").metadata[b"PARQUET:field_id"] == b"1"
        assert mapping.logical_partition_values(f.partition_values).keys() == {"region"}


def test_change_feed(spark, history):
    changes = sqlext.changes(spark, str(history), startingVersion=5, endingVersion=8).toArrow()
    kinds = {}
    for r in changes.to_pylist():
        kinds.setdefault((r["_commit_version"], r["_change_type"]), set()).add(r["id"])
    assert kinds[(5, "insert")] == set(range(20, 30))
    assert kinds[(6, "delete")] == {0, 5, 10, 15, 20, 25}
    assert kinds[(7, "update_postimage")] == {1, 2, 3, 4, 6, 7}
    assert kinds[(8, "update_postimage")] == {26, 27, 28, 29}
    assert kinds[(8, "insert")] == set(range(30, 35)) | {25}
    post = {r["id"]: r for r in changes.to_pylist() if r["_change_type"] == "update_postimage"}
    assert post[3]["w"] == "u3" and post[3]["s"]["b"] == "upd" and post[27]["w"] == "m27"
    assert changes.column_names[:4] == ["id", "w", "s", "part"]
    # change files of a version after a rename and schema evolution
    later = sqlext.changes(spark, str(history), startingVersion=12, endingVersion=12).toArrow()
    assert sorted(r["id"] for r in later.to_pylist()) == [100, 101]
    assert {r["extra"] for r in later.to_pylist()} == {"e100", None}
    # turning mapping on changes no name: a range across it reads (delta-spark 4.4 reads it too)
    across = sqlext.changes(spark, str(history), startingVersion=1, endingVersion=2).toArrow()
    assert across.num_rows == 20 and set(across.column("_change_type").to_pylist()) == {"insert"}
    # a range across a rename is refused, as delta-spark refuses it
    with pytest.raises(ChangeDataFeedError, match="renamed"):
        sqlext.changes(spark, str(history), startingVersion=1, endingVersion=5).collect()
    with pytest.raises(ChangeDataFeedError, match="w was dropped"):
        sqlext.changes(spark, str(history), startingVersion=8, endingVersion=10).collect()


def test_new_table_in_name_mode(spark, tmp_path):
    path = tmp_path / "n"
    sqlext.sql(spark, f"CREATE TABLE {_p(path)} (k BIGINT, name STRING, day STRING) USING delta "
                      "PARTITIONED BY (day) TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    snapshot = DeltaLog(str(path)).snapshot()
    assert (snapshot.protocol.min_reader_version, snapshot.protocol.min_writer_version) == (2, 5)
    physical = {f["name"]: f["metadata"][PHYSICAL_NAME_KEY] for f in _schema(path)["fields"]}
    assert all(v.startswith("col-") for v in physical.values())
    df = spark.sql("SELECT id AS k, concat('n', id) AS name, concat('d', id % 2) AS day "
                   "FROM range(6)")
    sqlext.write(df, str(path), mode="append")
    # dynamic partition overwrite and replaceWhere find the files by physical partition keys
    new = spark.sql("SELECT 100 + id AS k, 'x' AS name, 'd1' AS day FROM range(2)")
    sqlext.write(new, str(path), mode="overwrite", partitionOverwriteMode="dynamic")
    sqlext.write(spark.sql("SELECT 2L AS k, 'y' AS name, 'd0' AS day"), str(path),
                 mode="overwrite", replaceWhere="day = 'd0' AND k < 3")
    sqlext.sql(spark, f"ALTER TABLE {_p(path)} RENAME COLUMN name TO label")
    sqlext.sql(spark, f"DELETE FROM {_p(path)} WHERE day = 'd1' AND k = 100")
    mine = sqlext.read(spark, str(path)).toArrow()
    assert sorted(zip(mine.column("k").to_pylist(), mine.column("label").to_pylist())) == [
        (2, "y"), (4, "n4"), (101, "x")]
    assert mine.column_names == ["k", "label", "day"]
    assert_same_rows(mine, read_deltalake(path, engine="datafusion"), sort_by=["k"])
    assert_same_rows(mine.select(["k", "label"]), read_duckdb(path).select(["k", "label"]),
                     sort_by=["k"])
    for f in DeltaLog(str(path)).snapshot().files:
        assert set(f.partition_values) == {physical["day"]}
        names = pq.read_schema(os.path.join(path, f.path)).names
        # (data files written with change rows carry an all-NULL _change_type, as delta-spark's)
        assert [n for n in names if n != "_change_type"] == [physical["k"], physical["name"]]
    # the DeltaTable builder's property does the same
    built = tmp_path / "b"
    (sqlext.DeltaTable.create(spark).location(str(built)).addColumn("a", "INT")
     .property("delta.columnMapping.mode", "name").execute())
    field = _schema(built)["fields"][0]
    assert field["metadata"][PHYSICAL_NAME_KEY].startswith("col-")
    assert DeltaLog(str(built)).snapshot().protocol.min_writer_version == 5


def test_bad_input_is_refused_and_leaves_the_table_unchanged(spark, tmp_path, history):
    plain = tmp_path / "plain"
    sqlext.sql(spark, f"CREATE TABLE {_p(plain)} (a INT, b STRING, c INT) USING delta "
                      "PARTITIONED BY (c)")
    sqlext.sql(spark, f"INSERT INTO {_p(plain)} VALUES (1, 'x', 0)")
    before = _log_files(plain)
    for statement in (f"ALTER TABLE {_p(plain)} RENAME COLUMN a TO z",
                      f"ALTER TABLE {_p(plain)} DROP COLUMN b",
                      f"ALTER TABLE {_p(plain)} DROP COLUMNS (a, b)"):
        with pytest.raises(UnsupportedOperationError,
                           match=r"delta\.columnMapping\.mode' = 'name'") as raised:
            sqlext.sql(spark, statement)
        assert str(plain) in str(raised.value) and "unchanged" in str(raised.value)
    assert _log_files(plain) == before
    # a comment needs no column mapping
    sqlext.sql(spark, f"ALTER TABLE {_p(plain)} ALTER COLUMN b COMMENT 'bee'")
    assert _schema(plain)["fields"][1]["metadata"] == {"comment": "bee"}

    before = _log_files(history)
    bad = [
        (f"ALTER TABLE {_p(history)} RENAME COLUMN id TO extra", AnalysisException, "already"),
        (f"ALTER TABLE {_p(history)} RENAME COLUMN s.b TO ALPHA", AnalysisException, "already"),
        (f"ALTER TABLE {_p(history)} RENAME COLUMN nope TO x", AnalysisException, "nope"),
        (f"ALTER TABLE {_p(history)} DROP COLUMN missing", AnalysisException, "missing"),
        (f"ALTER TABLE {_p(history)} DROP COLUMN region", UnsupportedOperationError,
         "partition column"),
        (f"ALTER TABLE {_p(history)} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'none')",
         UnsupportedOperationError, "from 'name' to 'none'"),
    ]
    for statement, error, text in bad:
        with pytest.raises(error, match=text):
            sqlext.sql(spark, statement)
    sqlext.sql(spark, f"ALTER TABLE {_p(history)} DROP COLUMN IF EXISTS missing")   # no commit
    assert _log_files(history) == before


def test_id_mode_is_read_only(spark, tmp_path):
    path = tmp_path / "ids"
    with pytest.raises(SqlextError, match="'name' mode only"):
        sqlext.sql(spark, f"CREATE TABLE {_p(path)} (a INT) USING delta "
                          "TBLPROPERTIES ('delta.columnMapping.mode' = 'id')")
    assert not os.path.exists(path / "_delta_log") or not os.listdir(path / "_delta_log")
