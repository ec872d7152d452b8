"""Reading tables with column mapping (``delta.columnMapping.mode`` = ``name`` / ``id``) written
by delta-spark 4.4: every version reads as delta-spark reads it (rows, column and nested field
names), across renames (top-level, nested, partition column), a drop, a re-added name, deletes
and updates, a checkpoint; filters prune by statistics and partition values keyed by physical
names; the change feed matches delta-spark's; DuckDB's delta extension agrees;
a name-mode table takes sqlext's writes (read back by delta-spark); writes to an id-mode table
are refused, the table left as it was. sqlext's own name-mode tables are read by delta-spark in
test_deltaspark_column_mapping_writes.py.
"""

from __future__ import annotations

import json
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlext
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.table import DeltaLog
from sqlext.errors import ChangeDataFeedError, UnsupportedTableFeatureError
from tests.support import assert_same_rows, read_deltalake, read_duckdb
from tests.support.compare import nested_field_names
from tests.support.deltaspark import DeltaSparkError, delta_path
from tests.support.spark import spark_conf

CHANGE_COLUMNS = ["_change_type", "_commit_version"]


def _rows(first: int, last: int) -> str:
    """SELECT of rows ``first..last-1`` in the partitioned table's first schema."""
    return (f"SELECT id, concat('v', id) AS v, named_struct('a', CAST(id AS INT), 'b', "
            f"concat('b', id)) AS s, concat('p', id % 3) AS part FROM range({first}, {last})")


# the partitioned `name` table: (statement, what the version holds afterwards)
NAME_STEPS = [
    "CREATE TABLE {p} (id BIGINT, v STRING, s STRUCT<a: INT, b: STRING>, part STRING) USING delta "
    "PARTITIONED BY (part) TBLPROPERTIES (delta.columnMapping.mode = 'name', "
    "delta.enableChangeDataFeed = true, delta.checkpointInterval = 4, "
    "delta.enableDeletionVectors = false)",                                        # v0
    "INSERT INTO {p} " + _rows(0, 30),                                # v1
    "INSERT INTO {p} " + _rows(30, 60),                               # v2
    "ALTER TABLE {p} RENAME COLUMN v TO w",                                         # v3
    "ALTER TABLE {p} RENAME COLUMN s.a TO alpha",                                   # v4
    "INSERT INTO {p} (id, w, s, part) SELECT id, concat('w', id), named_struct('alpha', "
    "CAST(id AS INT), 'b', concat('b', id)), concat('p', id % 3) FROM range(60, 90)",  # v5
    "DELETE FROM {p} WHERE id % 7 = 0",                                             # v6
    "UPDATE {p} SET s.b = 'upd' WHERE id < 10",                                     # v7
    "ALTER TABLE {p} DROP COLUMN w",                                                # v8
    "ALTER TABLE {p} ADD COLUMNS (v STRING)",                                       # v9
    "INSERT INTO {p} (id, s, part, v) SELECT id, named_struct('alpha', CAST(id AS INT), 'b', "
    "'new'), concat('p', id % 3), concat('again', id) FROM range(90, 100)",         # v10
    "ALTER TABLE {p} RENAME COLUMN part TO region",                                 # v11
    "INSERT INTO {p} (id, s, region, v) VALUES (100, named_struct('alpha', 100, 'b', 'x'), "
    "'p1', 'last')",                                                                # v12
]
NAME_VERSIONS = range(len(NAME_STEPS))

ID_STEPS = [
    "CREATE TABLE {p} (id BIGINT, v STRING, s STRUCT<a: INT, b: STRING>, n DOUBLE) USING delta "
    "TBLPROPERTIES (delta.columnMapping.mode = 'id', delta.minReaderVersion = 3, "
    "delta.minWriterVersion = 7, delta.checkpointInterval = 3, "
    "delta.enableDeletionVectors = false, delta.enableChangeDataFeed = true)",                                        # v0
    "INSERT INTO {p} SELECT id, concat('v', id), named_struct('a', CAST(id AS INT), 'b', "
    "concat('b', id)), id / 2 FROM range(0, 40)",                                   # v1
    "ALTER TABLE {p} RENAME COLUMN v TO renamed",                                   # v2
    "ALTER TABLE {p} RENAME COLUMN s.b TO beta",                                    # v3
    "INSERT INTO {p} SELECT id, concat('r', id), named_struct('a', CAST(id AS INT), 'beta', "
    "'x'), id / 3 FROM range(40, 60)",                                              # v4
    "ALTER TABLE {p} DROP COLUMN n",                                                # v5
    "DELETE FROM {p} WHERE id BETWEEN 10 AND 19",                                   # v6
    "INSERT INTO {p} SELECT id, 'late', named_struct('a', 0, 'beta', 'y') FROM range(60, 65)",  # v7
]
ID_VERSIONS = range(len(ID_STEPS))


def _read_code(path, version: int, where: str | None = None) -> str:
    code = (f"result = spark.read.format('delta').option('versionAsOf', {version})"
            f".load({str(path)!r})")
    if where:
        code += f".where({where!r})"
    return code


def _build(delta_spark, path, steps, versions, extra=()):
    """Run ``steps`` in delta-spark; return its read of every version (and of ``extra``
    requests after them)."""
    p = delta_path(path)
    requests = [("sql", {"sql": s.format(p=p)}) for s in steps]
    requests += [("exec", {"code": _read_code(path, v)}) for v in versions]
    answers = delta_spark.batch(requests + list(extra), check=False)
    errors = [a for a in answers[:len(steps)] if isinstance(a, DeltaSparkError)]
    if errors:
        raise errors[0]
    reads = answers[len(steps):len(steps) + len(versions)]
    return reads, answers[len(steps) + len(versions):]


@pytest.fixture(scope="module")
def name_table(delta_spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("cm") / "name_table"
    extra = [
        ("exec", {"code": _read_code(path, 12, "id >= 60 AND id < 70")}),
        ("exec", {"code": _read_code(path, 12, "region = 'p1'")}),
        ("exec", {"code": _read_code(path, 2, "part = 'p2' AND id > 40")}),
        ("changes", {"path": str(path), "start": 1, "end": 2}),
        ("changes", {"path": str(path), "start": 4, "end": 7}),
        ("changes", {"path": str(path), "start": 9, "end": 10}),
        ("changes", {"path": str(path), "start": 1, "end": 5}),    # spans the rename of v
    ]
    reads, answers = _build(delta_spark, path, NAME_STEPS, NAME_VERSIONS, extra)
    return path, reads, answers


@pytest.fixture(scope="module")
def id_table(delta_spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("cm") / "id_table"
    extra = [("exec", {"code": _read_code(path, 7, "id >= 55")}),
             ("changes", {"path": str(path), "start": 6, "end": 7})]
    reads, answers = _build(delta_spark, path, ID_STEPS, ID_VERSIONS, extra)
    return path, reads, answers


def _assert_same(mine: pa.Table, theirs: pa.Table, context):
    assert nested_field_names(mine.schema) == nested_field_names(theirs.schema), context
    assert mine.num_rows == theirs.num_rows, context
    assert_same_rows(mine, theirs, sort_by=["id"])


def _log_entries(path):
    return sorted(os.listdir(path / "_delta_log"))


def test_name_mode_every_version_reads_as_delta_spark(spark, name_table):
    path, reads, _ = name_table
    for version in NAME_VERSIONS:
        mine = sqlext.read(spark, str(path), versionAsOf=version).toArrow()
        _assert_same(mine, reads[version], version)
    # what the history did to the names, as users see them
    latest = sqlext.read(spark, str(path)).toArrow()
    assert nested_field_names(latest.schema) == ["id", ("s", ["alpha", "b"]), "region", "v"]
    v = {r["id"]: r["v"] for r in latest.to_pylist()}
    assert v[1] is None and v[95] == "again95"     # the dropped v's values do not come back
    assert (path / "_delta_log" / f"{8:020d}.checkpoint.parquet").exists()


def test_name_mode_sql_and_time_travel(spark, name_table):
    path, reads, _ = name_table
    p = delta_path(path)
    mine = sqlext.sql(spark, f"SELECT * FROM {p} VERSION AS OF 4").toArrow()
    _assert_same(mine, reads[4], 4)
    got = sqlext.sql(spark, f"SELECT id, w, s.alpha AS alpha FROM {p} VERSION AS OF 5 "
                            "WHERE id IN (3, 65)").collect()
    assert sorted(tuple(r) for r in got) == [(3, "v3", 3), (65, "w65", 65)]
    got = sqlext.sql(spark, f"SELECT id, v, s.a FROM {p} VERSION AS OF 2 WHERE id = 3").collect()
    assert [tuple(r) for r in got] == [(3, "v3", 3)]


def _input_files(df) -> set[str]:
    return {os.path.basename(f) for f in df.inputFiles()}


def _files_in(path, version, column, value) -> set[str]:
    """The data files of a version whose partition value of (logical) ``column`` is ``value``."""
    snapshot = DeltaLog(str(path)).snapshot(version)
    mapping = ColumnMapping.of(snapshot.metadata)
    return {os.path.basename(f.path) for f in snapshot.files
            if mapping.logical_partition_values(f.partition_values).get(column) == value}


def test_name_mode_filters_prune_by_physical_stats_and_partitions(spark, name_table):
    path, _, answers = name_table
    p = delta_path(path)
    log = sqlext.DeltaTable.forPath(spark, str(path))
    every = _input_files(log.toDF())
    by_stats = sqlext.read(spark, str(path), filter="id >= 60 AND id < 70")
    _assert_same(by_stats.toArrow(), answers[0], "stats filter")
    # the files of the first inserts (ids 0-59) are skipped by their min/max statistics
    assert 0 < len(_input_files(by_stats)) < len(every) / 2
    by_part = sqlext.read(spark, str(path), filter="region = 'p1'")
    _assert_same(by_part.toArrow(), answers[1], "partition filter")
    # column-mapped tables keep no partition directories: the log says which files are p1's
    assert _input_files(by_part) == _files_in(path, None, "region", "p1")
    old = sqlext.read(spark, str(path), versionAsOf=2, filter="part = 'p2' AND id > 40")
    _assert_same(old.toArrow(), answers[2], "filter at version 2")
    in_p2 = _files_in(path, 2, "part", "p2")
    assert _input_files(old) < in_p2        # ids 0-40 are in p2's other files
    # the file scan, whose input files show the pruning (a small SQL read is otherwise on the driver)
    with spark_conf(spark, {"spark.sqlext.execution.local": "off"}):
        in_sql = sqlext.sql(spark, f"SELECT * FROM {p} WHERE id >= 60 AND id < 70")
        _assert_same(in_sql.toArrow(), answers[0], "SQL filter")
        assert len(_input_files(in_sql)) == len(_input_files(by_stats))


def test_name_mode_change_feed_matches_delta_spark(spark, name_table):
    path, _, answers = name_table
    for (start, end), theirs in zip([(1, 2), (4, 7), (9, 10)], answers[3:6]):
        mine = sqlext.changes(spark, str(path), startingVersion=start, endingVersion=end)
        mine = mine.drop("_commit_timestamp").toArrow()
        theirs = theirs.drop_columns(["_commit_timestamp"])
        assert nested_field_names(mine.schema) == nested_field_names(theirs.schema), (start, end)
        assert mine.num_rows == theirs.num_rows > 0, (start, end)
        assert_same_rows(mine, theirs, sort_by=["id", *CHANGE_COLUMNS])
    # a range across a rename: delta-spark refuses it, and so does sqlext, naming the rename
    assert isinstance(answers[6], DeltaSparkError)
    with pytest.raises(ChangeDataFeedError, match="renamed to w"):
        sqlext.changes(spark, str(path), startingVersion=1, endingVersion=5).collect()
    filtered = sqlext.changes(spark, str(path), startingVersion=4, endingVersion=7,
                              filter="part = 'p0' AND id < 10").toArrow()
    expected = answers[4].filter(pa.compute.and_(
        pa.compute.equal(answers[4]["part"], "p0"), pa.compute.less(answers[4]["id"], 10)))
    assert filtered.num_rows == expected.num_rows > 0
    assert_same_rows(filtered.drop_columns(["_commit_timestamp"]),
                     expected.drop_columns(["_commit_timestamp"]), sort_by=["id", *CHANGE_COLUMNS])


def test_name_mode_reads_as_duckdb_and_delta_rs(spark, name_table):
    path, _, _ = name_table
    for version in (2, 5, 8, 12):
        mine = sqlext.read(spark, str(path), versionAsOf=version).toArrow()
        _assert_same(mine, read_deltalake(path, version, engine="datafusion").select(mine.column_names), version)
        # DuckDB's delta extension (1.5.5) reads the partition column of a column-mapped table
        # as NULL (it looks partition values up by logical name): compare the other columns
        data = [c for c in mine.column_names if c not in ("part", "region")]
        _assert_same(mine.select(data), read_duckdb(path, version).select(data), version)


def test_sqlext_writes_to_delta_spark_name_table(spark, name_table, delta_spark, tmp_path):
    """delta-spark's name-mapped table (renamed nested field and partition column, a dropped
    column re-added) changed by sqlext: append, UPDATE, RENAME, DELETE; delta-spark reads every
    new version as sqlext does, and writes after them."""
    source, _, _ = name_table
    path = tmp_path / "copy"
    shutil.copytree(source, path)
    p = delta_path(path)
    for statement in (
            f"INSERT INTO {p} (id, s, region, v) VALUES (200, named_struct('alpha', 200, "
            "'b', 'sq'), 'p2', 'sqlext'), (201, NULL, 'p9', NULL)",                 # v13
            f"UPDATE {p} SET v = concat('u', id), s.b = 'sqlupd' WHERE id IN (1, 95, 200)",  # v14
            f"ALTER TABLE {p} RENAME COLUMN v TO note",                              # v15
            f"DELETE FROM {p} WHERE region = 'p0' AND id < 30",                      # v16
            f"ALTER TABLE {p} RENAME COLUMN s.alpha TO a2"):                         # v17
        sqlext.sql(spark, statement)
    versions = [13, 14, 15, 16, 17]
    answers = delta_spark.batch(
        [("exec", {"code": _read_code(path, v)}) for v in versions]
        + [("sql", {"sql": f"INSERT INTO {p} (id, s, region, note) VALUES (300, "
                           "named_struct('a2', 3, 'b', 'ds'), 'p1', 'delta-spark')"})],
        check=True)
    for version, theirs in zip(versions, answers):
        mine = sqlext.read(spark, str(path), versionAsOf=version).toArrow()
        _assert_same(mine, theirs, version)
    latest = sqlext.read(spark, str(path)).toArrow()
    assert nested_field_names(latest.schema) == ["id", ("s", ["a2", "b"]), "region", "note"]
    got = {r["id"]: r for r in latest.to_pylist()}
    assert got[95]["note"] == "u95" and got[200]["s"] == {"a2": 200, "b": "sqlupd"}
    assert got[300]["note"] == "delta-spark" and got[201]["region"] == "p9"
    # sqlext's files use the physical names delta-spark assigned
    log = DeltaLog(str(path))
    snapshot = log.snapshot(13)
    physical = ColumnMapping.of(snapshot.metadata).physical_name("v")
    assert physical.startswith("col-")
    old = {f.path for f in log.snapshot(12).files}
    added = [f for f in snapshot.files if f.path not in old]
    assert len(added) == 2
    for f in added:
        assert physical in pq.read_schema(log.data_path(f.path)).names
        assert physical in json.loads(f.stats)["nullCount"]


def test_id_mode_writes_are_refused(spark, id_table):
    path, _, _ = id_table
    p = delta_path(path)
    before = _log_entries(path)
    for statement in (f"DELETE FROM {p} WHERE id = 1", f"INSERT INTO {p} (id) VALUES (1000)",
                      f"ALTER TABLE {p} RENAME COLUMN renamed TO other"):
        with pytest.raises(UnsupportedTableFeatureError, match="columnMapping .mode id") as raised:
            sqlext.sql(spark, statement)
        assert "'name' mode only" in str(raised.value)
    assert _log_entries(path) == before


def test_id_mode_every_version_reads_as_delta_spark_and_duckdb(spark, id_table):
    path, reads, answers = id_table
    for version in ID_VERSIONS:
        mine = sqlext.read(spark, str(path), versionAsOf=version).toArrow()
        _assert_same(mine, reads[version], version)
    assert nested_field_names(mine.schema) == ["id", "renamed", ("s", ["a", "beta"])]
    assert (path / "_delta_log" / f"{6:020d}.checkpoint.parquet").exists()
    pruned = sqlext.read(spark, str(path), versionAsOf=7, filter="id >= 55")
    _assert_same(pruned.toArrow(), answers[0], "filter")
    every = _input_files(sqlext.read(spark, str(path), versionAsOf=7))
    assert 0 < len(_input_files(pruned)) < len(every)
    for version in (1, 4, 7):
        mine = sqlext.read(spark, str(path), versionAsOf=version).toArrow()
        _assert_same(mine, read_duckdb(path, version).select(mine.column_names), version)


def test_id_mode_change_feed_matches_delta_spark(spark, id_table):
    path, _, answers = id_table
    mine = sqlext.changes(spark, str(path), startingVersion=6, endingVersion=7)
    mine = mine.drop("_commit_timestamp").toArrow()
    theirs = answers[1].drop_columns(["_commit_timestamp"])
    assert nested_field_names(mine.schema) == nested_field_names(theirs.schema)
    assert mine.num_rows == theirs.num_rows == 15
    assert_same_rows(mine, theirs, sort_by=["id", *CHANGE_COLUMNS])


def test_id_mode_matches_parquet_columns_by_field_id(spark, id_table, tmp_path):
    """In ``id`` mode the parquet field id decides, not the name: a file whose columns another
    writer named differently (same field ids) reads the same."""
    import pyarrow.parquet as pq

    source, reads, _ = id_table
    path = tmp_path / "copy"
    shutil.copytree(source, path)
    snapshot = DeltaLog(str(path)).snapshot(7)
    schemas = {f.path: pq.read_schema(path / f.path) for f in snapshot.files}
    # delta-spark 4.4's DELETE rewrites files without field ids (those are matched by name)
    with_ids = sorted(p for p, s in schemas.items()
                      if all(f.metadata and b"PARQUET:field_id" in f.metadata for f in s))
    assert with_ids
    data = path / with_ids[0]
    table = pq.read_table(data)
    renamed = pa.schema([f.with_name(f"other_{i}") for i, f in enumerate(table.schema)])
    pq.write_table(pa.Table.from_arrays(table.columns, schema=renamed), data)
    (data.parent / f".{data.name}.crc").unlink(missing_ok=True)    # Hadoop's checksum of the old
    assert pq.read_schema(data).names[0] == "other_0"
    mine = sqlext.read(spark, str(path), versionAsOf=7).toArrow()
    _assert_same(mine, reads[7], "renamed parquet columns")
