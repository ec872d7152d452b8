"""DELETE and UPDATE on the driver path (sqlext.engine.local.dml) against the Spark path: the same
statements on two identical tables, one with ``spark.sqlext.execution.local=force``, one with
``off``, leave the same rows, commit the same actions (file names, sizes and times aside), the
same operation, parameters and metrics, and the same change feed; the driver path runs no Spark
job for a one-row statement on a small table."""

from __future__ import annotations

import random

import numpy as np
import pyarrow.parquet as pq
import pytest

import sqlext
from sqlext.engine.local import dml as local_dml
from sqlext.engine.local import policy
from sqlext.engine.local.dml import Candidates
from sqlext.errors import SqlextError
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows, read_deltalake
from tests.support.dml_cases import changes_of
from tests.support.spark import jobs_run, spark_conf
from tests.support.table_checks import commit_summary, latest_version

ROWS = ", ".join(f"({i}, {i % 3}, '{'abc'[i % 3]}', {i * 10})" for i in range(30))
def _create(spark, path, partitioned: bool, cdf: bool, extra: str = "") -> None:
    parts = "PARTITIONED BY (p)" if partitioned else ""
    props = f"TBLPROPERTIES (delta.enableChangeDataFeed = {str(cdf).lower()})"
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (id BIGINT, p INT, s STRING, v BIGINT"
                      f"{extra}) USING delta {parts} {props}")
    # two appends: two files (per partition), so a narrow condition touches only some
    sqlext.sql(spark, f"INSERT INTO delta.`{path}` (id, p, s, v) SELECT * FROM VALUES {ROWS} "
                      "AS r(id, p, s, v) WHERE id < 15")
    sqlext.sql(spark, f"INSERT INTO delta.`{path}` (id, p, s, v) SELECT * FROM VALUES {ROWS} "
                      "AS r(id, p, s, v) WHERE id >= 15")


def _run_both(spark, tmp_path, statement: str, partitioned=False, cdf=False, extra="") -> dict:
    """Run ``statement`` ({path}) on a table per path; assert they agree; the driver path's
    table."""
    paths = {}
    for mode in ("force", "off"):
        path = tmp_path / mode
        _create(spark, path, partitioned, cdf, extra)
        with spark_conf(spark, {policy.MODE_CONF: mode}):
            sqlext.sql(spark, statement.format(path=path))
        paths[mode] = path
    local, remote = paths["force"], paths["off"]
    assert latest_version(local) == latest_version(remote)
    if latest_version(local) == 2:      # nothing matched: nothing committed on either path
        assert_same_rows(read_deltalake(local), read_deltalake(remote), sort_by=["id"])
        return paths
    assert latest_version(local) == 3
    driver, spark_path = commit_summary(local, 3), commit_summary(remote, 3)
    for key in driver:
        assert driver[key] == spark_path[key], key
    assert_same_rows(read_deltalake(local), read_deltalake(remote), sort_by=["id"])
    if cdf:
        assert_same_rows(changes_of(local, 3), changes_of(remote, 3),
                         sort_by=["id", "_change_type"])
    return paths


CASES = {
    "delete one row": "DELETE FROM delta.`{path}` WHERE id = 3",
    "delete a range across files": "DELETE FROM delta.`{path}` t WHERE t.v % 20 = 0 AND s <> 'b'",
    "delete every row of a file": "DELETE FROM delta.`{path}` WHERE id < 15",
    "update one row": "UPDATE delta.`{path}` SET s = 'x', v = v + 1 WHERE id = 7",
    "update with casts": "UPDATE delta.`{path}` t SET v = '42', s = t.v * 1.5 WHERE id BETWEEN 3 AND 20",
    "update nothing": "UPDATE delta.`{path}` SET s = 'never' WHERE id = 1000",
    "update every row": "UPDATE delta.`{path}` SET v = -v",
    "update a partition column": "UPDATE delta.`{path}` SET p = p + 10 WHERE id IN (4, 5, 20)",
}


#: each case, and each UPDATE also with two relations (``ONE_RELATION_ROWS`` 0: the
#: condition's columns of every row, then the matching rows) besides one of every row
RUNS = [(case, relations) for case in CASES
        for relations in (("one", "two") if case.startswith("update") else ("one",))]


@pytest.fixture(params=["one", "two"])
def relations(request, monkeypatch):
    """How many relations a driver-path UPDATE of these few rows hands Spark."""
    if request.param == "two":
        monkeypatch.setattr(local_dml, "ONE_RELATION_ROWS", 0)
    return request.param


@pytest.mark.parametrize("cdf", [False, True], ids=["cdf off", "cdf on"])
@pytest.mark.parametrize("partitioned", [False, True], ids=["flat", "partitioned"])
@pytest.mark.parametrize("case, relations", RUNS, ids=[f"{c} ({r})" for c, r in RUNS],
                         indirect=["relations"])
def test_both_paths_agree(spark, tmp_path, case, relations, partitioned, cdf):
    _run_both(spark, tmp_path, CASES[case], partitioned, cdf)


def test_generated_column_and_check_constraint_follow_the_update(spark, tmp_path, relations):
    paths = _run_both(spark, tmp_path, "UPDATE delta.`{path}` SET v = v * 2 WHERE p = 1 AND id > 3",
                      extra=", g BIGINT GENERATED ALWAYS AS (v + 1)")
    rows = read_deltalake(paths["force"]).to_pylist()
    assert all(r["g"] == r["v"] + 1 for r in rows)


@pytest.mark.parametrize("statement, error", [
    ("UPDATE delta.`{path}` SET v = CAST(s AS BIGINT) WHERE id = 4", "CAST_INVALID_INPUT"),
    ("UPDATE delta.`{path}` SET v = -1 WHERE id = 4", "positive"),
])
def test_errors_are_the_same_and_nothing_is_committed(spark, tmp_path, statement, error,
                                                     relations):
    messages = {}
    for mode in ("force", "off"):
        path = tmp_path / mode
        _create(spark, path, False, False)
        sqlext.sql(spark, f"ALTER TABLE delta.`{path}` ADD CONSTRAINT positive CHECK (v >= 0)")
        with spark_conf(spark, {policy.MODE_CONF: mode}), pytest.raises(SqlextError) as caught:
            sqlext.sql(spark, statement.format(path=path))
        assert latest_version(path) == 3
        messages[mode] = (type(caught.value), error in str(caught.value))
    assert messages["force"] == messages["off"] == (messages["off"][0], True)


def test_a_one_row_statement_runs_no_spark_job(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path, False, False)
    table = sqlext.DeltaTable.forPath(spark, str(path))
    with spark_conf(spark, {policy.MODE_CONF: "auto"}):
        table.update("id = 4", {"s": "'changed'"})        # first use: warm the caches
        _, update_jobs = jobs_run(spark, lambda: table.update("id = 5", {"s": "'changed'"}))
        _, delete_jobs = jobs_run(spark, lambda: table.delete("id = 6"))
    assert (update_jobs, delete_jobs) == (0, 0)
    rows = {r["id"]: r["s"] for r in read_deltalake(path).to_pylist()}
    assert rows[4] == rows[5] == "changed" and 6 not in rows and len(rows) == 29


def test_a_python_udf_falls_back_to_the_spark_path(spark, tmp_path):
    """Spark cannot fold a Python UDF over a local relation (it runs in a Python worker): the
    driver path finds out before it writes anything and the Spark path runs the statement."""
    path = tmp_path / "t"
    _create(spark, path, False, False)
    spark.udf.register("sqlext_test_twice", lambda x: x * 2, "bigint")
    with spark_conf(spark, {policy.MODE_CONF: "force"}):
        _, jobs = jobs_run(spark, lambda: sqlext.sql(
            spark, f"DELETE FROM delta.`{path}` WHERE sqlext_test_twice(id) = 6"))
    assert jobs > 0
    ids = {r["id"] for r in read_deltalake(path).to_pylist()}
    assert ids == set(range(30)) - {3}


def test_spark_is_handed_the_condition_columns_then_the_matching_rows(spark, tmp_path):
    """The relations of a driver-path statement hold only what Spark evaluates: the columns
    the condition reads (a row position when it reads none), then the matching rows."""
    path = tmp_path / "t"
    _create(spark, path, False, False)
    log = DeltaLog(str(path))
    snapshot = log.snapshot()
    rows = Candidates(log, snapshot, snapshot.files)
    narrow = rows.frame(spark, "t", columns=frozenset({"v"}))
    assert narrow.columns == ["v"]
    assert sorted(r.v for r in narrow.collect()) == [i * 10 for i in range(30)]
    positions = rows.frame(spark, None, columns=frozenset())
    assert [r[0] for r in positions.collect()] == list(range(30))
    picked = rows.frame(spark, None, take=np.array([4, 0]))
    assert picked.columns == ["id", "p", "s", "v"]
    assert [r.id for r in picked.collect()] == [rows.rows.column("id")[i].as_py() for i in (4, 0)]


def test_an_update_writes_the_rows_back_in_their_order(spark, tmp_path, relations):
    """Unchanged rows stay Arrow on the driver and updated ones come back from Spark: the
    rewritten file holds them in the file's own order, as the Spark path writes it; with one
    relation of every row (a few rows) and with two (the condition's columns, then the
    matching rows)."""
    path = tmp_path / "t"
    order = list(range(40))
    random.Random(7).shuffle(order)
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (id BIGINT, v BIGINT) USING delta")
    values = ", ".join(f"({i}, {i})" for i in order)
    sqlext.sql(spark, f"INSERT INTO delta.`{path}` SELECT * FROM VALUES {values} AS r(id, v)")
    with spark_conf(spark, {policy.MODE_CONF: "force"}):
        sqlext.sql(spark, f"UPDATE delta.`{path}` SET v = -v WHERE id % 3 = 0")
    seen = []
    for add in DeltaLog(str(path)).snapshot().files:
        written = pq.read_table(path / add.path).to_pylist()
        ids = [r["id"] for r in written]
        assert ids == sorted(ids, key=order.index)
        assert [r["v"] for r in written] == [-i if i % 3 == 0 else i for i in ids]
        seen += ids
    assert sorted(seen) == list(range(40))
