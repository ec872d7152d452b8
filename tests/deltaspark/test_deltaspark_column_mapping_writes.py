"""Column-mapped tables sqlext writes (``delta.columnMapping.mode`` = ``name``), read by delta-spark
4.4: a table that turned mapping on (its names kept as physical names) and a table created in
name mode (``col-<uuid>`` physical names), through renames (top-level, nested, partition column),
drops, schema evolution, appends, DELETE / UPDATE / MERGE and OPTIMIZE: every version reads the
same in delta-spark and sqlext (rows, column and nested field names), delta-spark's change feed
of a range without schema changes matches sqlext's, and delta-spark keeps writing the table.
(delta-spark's own name-mode tables written by sqlext: test_deltaspark_column_mapping.py.)
"""

from __future__ import annotations

import pytest

import sqlext
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows
from tests.support.compare import nested_field_names
from tests.support.deltaspark import delta_path
from tests.support.histories import append_merging_schema, run_steps

CHANGE_COLUMNS = ["_change_type", "_commit_version"]

UPGRADED = [
    "CREATE TABLE {p} (id BIGINT, v STRING, s STRUCT<a: INT, b: STRING>, part STRING) "
    "USING delta PARTITIONED BY (part)",                                              # v0
    "INSERT INTO {p} SELECT id, concat('v', id), named_struct('a', CAST(id AS INT), 'b', "
    "concat('b', id)), concat('p', id % 3) FROM range(0, 30)",                        # v1
    "ALTER TABLE {p} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name')",         # v2
    "ALTER TABLE {p} RENAME COLUMN v TO w",                                           # v3
    "ALTER TABLE {p} RENAME COLUMN s.a TO alpha",                                     # v4
    "INSERT INTO {p} (id, w, s, part) SELECT id, concat('w', id), named_struct('alpha', "
    "CAST(id AS INT), 'b', 'late'), concat('p', id % 3) FROM range(30, 40)",           # v5
    "DELETE FROM {p} WHERE id % 7 = 0",                                               # v6
    "UPDATE {p} SET w = 'upd', s.b = 'ub' WHERE id < 10",                              # v7
    "MERGE INTO {p} t USING (SELECT id, concat('m', id) AS w FROM range(35, 45)) src "
    "ON t.id = src.id WHEN MATCHED THEN UPDATE SET w = src.w WHEN NOT MATCHED THEN "
    "INSERT (id, w, part) VALUES (src.id, src.w, 'p9')",                              # v8
    "ALTER TABLE {p} DROP COLUMN w",                                                  # v9
    "ALTER TABLE {p} ADD COLUMNS (w STRING)",                                         # v10
    "ALTER TABLE {p} RENAME COLUMN part TO region",                                   # v11
    "INSERT INTO {p} (id, s, region, w) VALUES (100, named_struct('alpha', 1, 'b', 'x'), "
    "'p1', 'again')",                                                                 # v12
    "OPTIMIZE {p}",                                                                   # v13
]

CREATED = [
    "CREATE TABLE {p} (k BIGINT, name STRING, tags STRUCT<x: INT>, day STRING) USING delta "
    "PARTITIONED BY (day) TBLPROPERTIES ('delta.columnMapping.mode' = 'name')",        # v0
    "INSERT INTO {p} SELECT id, concat('n', id), named_struct('x', CAST(id AS INT)), "
    "concat('d', id % 2) FROM range(0, 20)",                                          # v1
    append_merging_schema("SELECT 50 + id AS k, 'ev' AS name, named_struct('x', 5) AS tags, "
                          "'d1' AS day, id * 10 AS score FROM range(3)"),            # v2
    "ALTER TABLE {p} RENAME COLUMN name TO label",                                    # v3
    "ALTER TABLE {p} DROP COLUMNS (tags)",                                            # v4
    "UPDATE {p} SET label = 'u' WHERE k % 4 = 1",                                     # v5
]


def _read_code(path, version: int) -> str:
    return (f"result = spark.read.format('delta').option('versionAsOf', {version})"
            f".load({str(path)!r})")


def _assert_same(mine, theirs, context):
    assert nested_field_names(mine.schema) == nested_field_names(theirs.schema), context
    assert mine.num_rows == theirs.num_rows, context
    if mine.num_rows:
        assert_same_rows(mine, theirs, sort_by=[mine.column_names[0]])


@pytest.mark.parametrize("steps", [UPGRADED, CREATED], ids=["upgraded", "created"])
def test_sqlext_name_mode_tables_read_in_delta_spark(spark, delta_spark, tmp_path, steps):
    path = tmp_path / "t"
    run_steps(spark, path, steps)
    versions = list(range(len(steps)))
    assert DeltaLog(str(path)).snapshot().version == versions[-1]
    p = delta_path(path)
    insert = (f"INSERT INTO {p} (id, region, w) VALUES (500, 'p2', 'ds')" if steps is UPGRADED
              else f"INSERT INTO {p} (k, label, day, score) VALUES (500, 'ds', 'd0', 1)")
    answers = delta_spark.batch(
        [("exec", {"code": _read_code(path, v)}) for v in versions]
        + [("changes", {"path": str(path), "start": 5, "end": 8} if steps is UPGRADED
            else {"path": str(path), "start": 5, "end": 5}),
           ("sql", {"sql": insert}),
           ("exec", {"code": _read_code(path, len(steps))})], check=True)
    for version, theirs in zip(versions, answers):
        mine = sqlext.read(spark, str(path), versionAsOf=version).toArrow()
        _assert_same(mine, theirs, version)
    # the change feed of versions without schema changes: delta-spark's equals sqlext's
    theirs = answers[len(versions)].drop_columns(["_commit_timestamp"])
    start, end = (5, 8) if steps is UPGRADED else (5, 5)
    mine = sqlext.changes(spark, str(path), startingVersion=start, endingVersion=end)
    mine = mine.drop("_commit_timestamp").toArrow()
    assert nested_field_names(mine.schema) == nested_field_names(theirs.schema)
    assert mine.num_rows == theirs.num_rows > 0
    assert_same_rows(mine, theirs, sort_by=[mine.column_names[0], *CHANGE_COLUMNS])
    # delta-spark's append after sqlext's history reads back in sqlext
    after = sqlext.read(spark, str(path)).toArrow()
    _assert_same(after, answers[-1], "after delta-spark's insert")
    key = after.column_names[0]
    assert 500 in after.column(key).to_pylist()
