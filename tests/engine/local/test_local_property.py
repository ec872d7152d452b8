"""Property test: the driver path and Spark's path mean the same (issue 30, "same meaning,
proven"). Random small tables (partitioned or not, change data feed on or off, NULLs, strings
with quotes and non-ASCII text, decimals, dates, several files) and random statements (INSERT of
literal rows, DELETE, UPDATE with conditions of every kind the DML property test draws,
including ones matching nothing and ones producing NULL) run on two copies of one table, one
with ``spark.sqlext.execution.local=force``, one with ``off``. For every statement: both succeed
or both fail with the same error class; the same latest version; the same commit (operation,
parameters, metrics, file actions with their statistics); the same rows; and with the change
feed on, the same change rows.
"""

from __future__ import annotations

import json
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqlext
from sqlext.engine.local import policy
from tests.dml.test_delete_update_properties import CONDITIONS
from tests.support import assert_same_rows, read_deltalake
from tests.support.dml_cases import changes_of
from tests.support.spark import spark_conf
from tests.support.table_checks import commit_summary, latest_version

TEXT = st.sampled_from([None, "a", "b", "ab", "it's", "ünï", ""])
ROW = st.tuples(st.sampled_from([None, 0, 1, 2]), TEXT,
                st.one_of(st.none(), st.integers(-2, 12)),
                st.sampled_from([None, "1.50", "-0.01", "99999999.99"]),
                st.sampled_from([None, "2024-01-01", "1999-12-31"]))
ASSIGNMENTS = st.sampled_from([
    "v = v + 1", "v = NULL", "s = s || 'x'", "v = id, s = 'z'", "p = (p + 1) % 3", "p = NULL",
    "v = CASE WHEN s IS NULL THEN -1 ELSE v * 2 END", "s = upper(s), p = v % 3",
    "d = d * 2", "dt = date_add(dt, 1)", "s = concat(s, '''')",
])


def _literal(value, kind: str) -> str:
    if value is None:
        return "NULL"
    if kind == "s":
        return "'" + value.replace("'", "''") + "'"
    if kind == "d":
        return f"CAST({value} AS DECIMAL(10,2))"
    if kind == "dt":
        return f"DATE'{value}'"
    return str(value)


def _values(rows: list[tuple], first_id: int) -> str:
    return ", ".join(
        f"({first_id + i}, {_literal(p, 'p')}, {_literal(s, 's')}, {_literal(v, 'v')}, "
        f"{_literal(d, 'd')}, {_literal(dt, 'dt')})" for i, (p, s, v, d, dt) in enumerate(rows))


STATEMENTS = st.one_of(
    st.builds(lambda c: ("DELETE", c), CONDITIONS),
    st.builds(lambda a, c: ("UPDATE", f"{a} WHERE {c}"), ASSIGNMENTS, CONDITIONS),
    st.builds(lambda rows: ("INSERT", rows), st.lists(ROW, min_size=1, max_size=4)),
)


def _sql(table: str, statement: tuple, next_id: int) -> str:
    kind, body = statement
    if kind == "DELETE":
        return f"DELETE FROM {table} WHERE {body}"
    if kind == "UPDATE":
        return f"UPDATE {table} SET {body}"
    return f"INSERT INTO {table} VALUES {_values(body, next_id)}"


def _by_action(summary: dict) -> dict:
    """``summary`` with its file actions as row totals per kind of action and partition, and
    without the counts of files written (which rows share a file, and so how many files a
    partitioned rewrite writes, aside)."""
    totals: dict[tuple, int] = {}
    for kind, partition, data_change, stats, *_ in summary["files"]:
        key = (kind, partition, data_change)
        totals[key] = totals.get(key, 0) + (json.loads(stats) or {}).get("numRecords", 0)
    metrics = {k: v for k, v in summary["metrics"].items()
               if k not in ("numAddedFiles", "numAddedChangeFiles")}
    return {**summary, "metrics": metrics, "files": sorted(totals.items())}


def _outcome(spark, mode: str, text: str):
    with spark_conf(spark, {policy.MODE_CONF: mode}):
        try:
            sqlext.sql(spark, text)
        except Exception as error:   # noqa: BLE001 - the two paths must fail alike
            return type(error).__name__
    return None


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(st.lists(ROW, min_size=1, max_size=8), min_size=1, max_size=3),
       partitioned=st.booleans(), cdf=st.booleans(),
       statements=st.lists(STATEMENTS, min_size=1, max_size=3))
def test_driver_and_spark_paths_agree(spark, tmp_path_factory, chunks, partitioned, cdf,
                                      statements):
    root = tmp_path_factory.mktemp("local_prop") / uuid.uuid4().hex
    paths = {mode: root / mode for mode in ("force", "off")}
    next_id = 0
    for mode, path in paths.items():
        parts = "PARTITIONED BY (p)" if partitioned else ""
        sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (id BIGINT, p INT, s STRING, v BIGINT, "
                          f"d DECIMAL(10,2), dt DATE) USING delta {parts} TBLPROPERTIES "
                          f"(delta.enableChangeDataFeed = {str(cdf).lower()})")
        next_id = 0
        for chunk in chunks:       # one INSERT per chunk, on Spark's path: the same files
            _outcome(spark, "off", f"INSERT INTO delta.`{path}` VALUES {_values(chunk, next_id)}")
            next_id += len(chunk)
    # once an INSERT has written a file on the driver path the two tables hold the same rows in
    # files of other bytes (pyarrow's writer, not parquet-mr), and Spark groups small files into
    # rewrite tasks by size: a later rewrite may put other rows together in its files
    same_files = True
    for statement in statements:
        texts = {mode: _sql(f"delta.`{path}`", statement, next_id) for mode, path in paths.items()}
        outcomes = {mode: _outcome(spark, mode, text) for mode, text in texts.items()}
        assert outcomes["force"] == outcomes["off"], texts["force"]
        if statement[0] == "INSERT":
            next_id += len(statement[1])
        local, remote = paths["force"], paths["off"]
        version = latest_version(local)
        assert version == latest_version(remote), texts["force"]
        assert_same_rows(read_deltalake(local), read_deltalake(remote), sort_by=["id"])
        if version > len(chunks):       # the statement committed
            summaries = [commit_summary(p, version) for p in (local, remote)]
            if not same_files:
                summaries = [_by_action(summary) for summary in summaries]
            assert summaries[0] == summaries[1], texts["force"]
            same_files = same_files and statement[0] != "INSERT"
            if cdf:
                assert_same_rows(changes_of(local, version), changes_of(remote, version),
                                 sort_by=["id", "_change_type"])
