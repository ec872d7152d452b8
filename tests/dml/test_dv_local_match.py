"""A deletion-vector DELETE finds the rows of a narrow condition on the driver
(sqlext.engine.dml.local_match) instead of by a Spark job: for every condition in the supported
subset the row positions equal the ones Spark's scan finds (NULLs, NOT, IN, strings beyond
ASCII, a file that already has a deletion vector); every other condition is left to Spark; and
DELETEs through either path leave the same rows, which DuckDB reads the same."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import sqlext
from sqlext.engine.conditions import resolve_condition
from sqlext.engine.dml.command import table_frame
from sqlext.engine.dml.local_match import MAX_BYTES_CONF, local_matching_rows
from sqlext.engine.dml.marking import matching_rows
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows, read_duckdb
from tests.support.kernel_tables import clear_caches
from tests.support.spark import spark_conf

SUPPORTED = [
    "id >= 10 AND id < 20",
    "id = 7",
    "5 > id",
    "i <> 3",
    "NOT (i = 3)",
    "i IN (1, 2, -4)",
    "NOT (i IN (1, 2))",
    "i BETWEEN 2 AND 5",
    "NOT (i BETWEEN 2 AND 5)",
    "i IS NULL",
    "s IS NOT NULL AND i > -3",
    "s = 'b'",
    "s >= 'b' AND s < 'é'",
    "s > 'Z'",
    "NOT (s = 'a')",
    "b",
    "NOT b",
    "b = false",
    "(id < 5 OR i IS NULL) AND NOT (s IN ('a', 'ü'))",
    "i < id",
    "t.id < 3",
]

UNSUPPORTED = [
    "i = '3'",                    # an implicit cast
    "id + 1 = 5",                 # arithmetic
    "p = 'x'",                    # a partition column
    "s LIKE 'a%'",
    "ts > TIMESTAMP '2024-01-01 00:00:00'",
    "d = 1.5",                    # a double column
    "i IN (1, NULL)",
    "s = 'a\\\\b'",               # an escape
]


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    """A deletion-vector table of two partitions with NULLs in every column, one file of which
    already has a deletion vector."""
    path = tmp_path_factory.mktemp("local_match") / "t"
    name = f"delta.`{path}`"
    sqlext.sql(spark, f"CREATE TABLE {name} (id BIGINT, i INT, s STRING, b BOOLEAN, d DOUBLE, "
                      "ts TIMESTAMP, p STRING) USING delta PARTITIONED BY (p) TBLPROPERTIES "
                      "('delta.enableDeletionVectors' = 'true')")
    sqlext.sql(spark, f"""INSERT INTO {name}
        SELECT id, CASE WHEN id % 5 = 0 THEN NULL ELSE CAST(id % 9 - 4 AS INT) END,
               CASE WHEN id % 7 = 0 THEN NULL
                    ELSE element_at(array('a', 'b', 'Z', 'é', 'ü', 'ab'), CAST(id % 6 + 1 AS INT))
               END,
               CASE WHEN id % 4 = 0 THEN NULL ELSE id % 3 = 0 END,
               id / 2.0, TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, id),
               IF(id % 2 = 0, 'x', 'y')
        FROM range(0, 60)""")
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id IN (11, 12, 40)")   # vectors already there
    return path


def _condition(spark, path, text):
    clear_caches()
    snapshot = DeltaLog(str(path)).snapshot()
    cond = resolve_condition(table_frame(spark, snapshot, "t"), text, str(path),
                             snapshot.version, "DELETE")
    return snapshot, cond


@pytest.mark.parametrize("text", SUPPORTED)
def test_rows_found_locally_equal_spark(spark, table, text):
    snapshot, cond = _condition(spark, table, text)
    log = DeltaLog(str(table))
    local = local_matching_rows(log, snapshot, snapshot.files, cond.predicate, "t", 1 << 30)
    assert local is not None, text
    expected = matching_rows(spark, log, snapshot, snapshot.files, cond.column, "t")
    assert sorted(local) == sorted(expected), text
    for path, rows in expected.items():
        assert np.array_equal(np.sort(local[path]), np.sort(rows)), (text, path)
    assert any(len(v) for v in expected.values()), text        # a condition that matches


@pytest.mark.parametrize("text", UNSUPPORTED)
def test_other_conditions_are_left_to_spark(spark, table, text):
    snapshot, cond = _condition(spark, table, text)
    log = DeltaLog(str(table))
    assert local_matching_rows(log, snapshot, snapshot.files, cond.predicate, "t",
                               1 << 30) is None, text


def test_too_many_bytes_are_left_to_spark(spark, table):
    snapshot, cond = _condition(spark, table, "id = 7")
    log = DeltaLog(str(table))
    assert local_matching_rows(log, snapshot, snapshot.files, cond.predicate, "t", 10) is None
    assert local_matching_rows(log, snapshot, snapshot.files, cond.predicate, "t", 0) is None


def test_deletes_through_either_path_leave_the_same_rows(spark, table, tmp_path):
    local, spark_path = tmp_path / "local", tmp_path / "spark"
    shutil.copytree(table, local)
    shutil.copytree(table, spark_path)
    for text in ("i <> 3 AND id < 30", "NOT (s IN ('a', 'b')) AND b", "i IS NULL"):
        for path, conf in ((local, {}), (spark_path, {MAX_BYTES_CONF: "0"})):
            with spark_conf(spark, conf):
                sqlext.DeltaTable.forPath(spark, str(path)).delete(text)
        clear_caches()
        mine = sqlext.read(spark, str(local))
        assert_same_rows(mine, sqlext.read(spark, str(spark_path)), sort_by=["id"])
        assert_same_rows(mine, read_duckdb(local), sort_by=["id"])
    history = [sqlext.sql(spark, f"DESCRIBE HISTORY delta.`{p}`").orderBy("version").collect()
               for p in (local, spark_path)]
    deleted = [[r.operationMetrics["numDeletedRows"] for r in h if r.operation == "DELETE"]
               for h in history]
    assert deleted[0] == deleted[1] and len(deleted[0]) == 4 and all(int(n) for n in deleted[0])
