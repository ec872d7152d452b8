"""Tests of the shared test harness (tests/support, tests/conftest.py).

What the independent readers do with the fixture tables (tests/fixtures) (deltalake 1.6.6, duckdb and
duckdb-extension-delta 1.5.5), as these tests establish:

- Both readers read, and agree on, every fixture that has its data files: 17 of 19.
- ``latest_not_checkpointed`` and ``with_checkpoint_no_last_checkpoint`` are log-only (their
  parquet files are not in the fixture): both readers fail on the missing data file
  (deltalake FileNotFoundError, DuckDB IOException). Their logs are fine: deltalake lists the
  active files.
- ``table-with-dv-small`` (deletion vectors): deltalake's pyarrow route refuses it
  (DeltaProtocolError naming deletionVectors); its DataFusion route (QueryBuilder, used by
  ``read_deltalake`` for such tables) and DuckDB both read it, 8 of 10 rows.
- ``table_with_edge_timestamps`` (INT96 9999-12-31): ``DeltaTable.to_pyarrow_table()`` fails
  (ns overflow) and QueryBuilder returns 1816-03-29 (wrong); ``read_deltalake`` reads INT96 as
  microseconds and agrees with DuckDB.
- Change data feed: only deltalake (``cdf-table``, ``simple_table_with_cdc``); DuckDB's
  extension has no CDF function. DuckDB time travel: by version only.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from decimal import Decimal

import duckdb
import pyarrow as pa
import pytest

from tests.support import (
    FIXTURES_DIR,
    assert_same_rows,
    copy_fixture,
    deltalake_add_paths,
    deltalake_cdf,
    duckdb_query,
    duckdb_table,
    fixture_names,
    read_deltalake,
    read_duckdb,
    rows,
)
from tests.support.fixtures import commit_timestamps, fixture_path
from tests.support.spark import MASTER, SPARK_CONF

# Rows at the latest version, agreed by both readers.
LATEST_ROWS = {
    "cdf-table": 9,
    "delta-0.2.0": 6,
    "delta-0.8-empty": 0,
    "delta-0.8.0": 4,
    "delta-0.8.0-date": 5,
    "delta-0.8.0-null-partition": 2,
    "delta-0.8.0-numeric-partition": 2,
    "delta-0.8.0-partitioned": 7,
    "delta-0.8.0-special-partition": 2,
    "delta-1.2.1-only-struct-stats": 12,
    "delta-2.2.0-partitioned-types": 3,
    "simple_table": 3,
    "simple_table_with_cdc": 1,
    "simple_table_with_checkpoint": 11,
    "table-with-dv-small": 8,
    "table-without-dv-small": 10,
    "table_with_edge_timestamps": 2,
}
# Log-only fixtures: no data files, so neither reader can return rows.
LOG_ONLY = ["latest_not_checkpointed", "with_checkpoint_no_last_checkpoint"]

SIMPLE_TABLE_IDS = {
    0: list(range(5)),
    1: list(range(20)),
    2: list(range(5, 10)),
    3: [5, 7, 9, 106, 108],
    4: [5, 7, 9],
}


# --- fixtures ---------------------------------------------------------------------------


def test_every_fixture_is_known():
    assert FIXTURES_DIR.is_dir(), f"fixture tables not found at {FIXTURES_DIR}"
    assert fixture_names() == sorted([*LATEST_ROWS, *LOG_ONLY])


@pytest.mark.parametrize("name", sorted([*LATEST_ROWS, *LOG_ONLY]))
def test_copy_fixture_sets_commit_mtimes(name, tmp_path):
    table = copy_fixture(name, tmp_path / name)
    log = table / "_delta_log"
    expected = commit_timestamps(fixture_path(name))
    mtimes = {v: (log / f"{v:020d}.json").stat().st_mtime_ns for v in expected}
    assert mtimes == {v: ts * 1_000_000 for v, ts in expected.items()}
    ordered = [mtimes[v] for v in sorted(mtimes)]
    assert all(a < b for a, b in zip(ordered, ordered[1:])), ordered


def test_copy_fixture_copies_the_whole_table(fixture_table):
    table = fixture_table("delta-0.8.0-special-partition")
    assert sorted(p.name for p in table.iterdir()) == ["_delta_log", "x=A%2FA", "x=B%20B"]
    assert_same_rows(read_duckdb(table), read_duckdb(fixture_path("delta-0.8.0-special-partition")))


def test_copy_fixture_unknown_name(tmp_path):
    with pytest.raises(KeyError, match="no fixture table 'nope'"):
        copy_fixture("nope", tmp_path / "nope")


def test_table_path_is_fresh(table_path, tmp_path):
    assert table_path.parent == tmp_path and not table_path.exists()


# --- readers ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(LATEST_ROWS))
def test_readers_agree_at_latest_version(name):
    path = fixture_path(name)
    from_deltalake = read_deltalake(path)
    assert from_deltalake.num_rows == LATEST_ROWS[name]
    assert_same_rows(read_duckdb(path), from_deltalake)


@pytest.mark.parametrize("name", LOG_ONLY)
def test_log_only_fixtures_fail_on_missing_data_files(name):
    path = fixture_path(name)
    with pytest.raises(FileNotFoundError):
        read_deltalake(path)
    with pytest.raises(duckdb.IOException, match="No such file"):
        read_duckdb(path)
    active = deltalake_add_paths(path)
    assert active and not any((path / p).exists() for p in active)


@pytest.mark.parametrize("version", sorted(SIMPLE_TABLE_IDS))
def test_readers_time_travel_by_version(version):
    path = fixture_path("simple_table")
    expected = pa.table({"id": pa.array(SIMPLE_TABLE_IDS[version], pa.int64())})
    assert_same_rows(read_deltalake(path, version=version), expected)
    assert_same_rows(read_duckdb(path, version=version), expected)


@pytest.mark.parametrize("name", ["simple_table_with_checkpoint", "cdf-table", "delta-0.2.0"])
def test_readers_agree_on_every_version(name):
    path = fixture_path(name)
    for version in sorted(commit_timestamps(path)):
        assert_same_rows(read_duckdb(path, version=version), read_deltalake(path, version=version))


def test_read_duckdb_unknown_version():
    with pytest.raises(duckdb.IOException, match="version 5"):
        read_duckdb(fixture_path("simple_table"), version=5)


def test_readers_see_a_new_commit(fixture_table):
    from deltalake import write_deltalake

    table = fixture_table("table-without-dv-small")
    assert read_duckdb(table).num_rows == 10  # DuckDB must not cache this snapshot
    write_deltalake(str(table), pa.table({"value": pa.array([100, 101], pa.int64())}), mode="append")
    expected = pa.table({"value": list(range(10)) + [100, 101]})
    assert_same_rows(read_deltalake(table), expected)
    assert_same_rows(read_duckdb(table), expected)
    assert_same_rows(read_duckdb(table, version=0), pa.table({"value": list(range(10))}))


def test_deletion_vectors_only_through_datafusion():
    from deltalake.exceptions import DeltaProtocolError

    path = fixture_path("table-with-dv-small")
    with pytest.raises(DeltaProtocolError, match="deletionVectors"):
        read_deltalake(path, engine="pyarrow")
    expected = pa.table({"value": list(range(1, 9))})
    assert_same_rows(read_deltalake(path), expected)
    assert_same_rows(read_duckdb(path), expected)


def test_edge_timestamps_read_as_microseconds():
    table = read_deltalake(fixture_path("table_with_edge_timestamps"))
    utc = dt.timezone.utc
    assert rows(table, ["SOME_VALUE", "BIG_DATE"]) == [
        (1, dt.datetime(9999, 12, 31, tzinfo=utc)),
        (2, dt.datetime(9999, 12, 30, tzinfo=utc)),
    ]


def test_deltalake_cdf():
    changes = deltalake_cdf(fixture_path("simple_table_with_cdc"), 0)
    assert changes.column_names[-3:] == ["_change_type", "_commit_version", "_commit_timestamp"]
    expected = pa.table({
        "id": [0, 0, 0],
        "name": ["Mario", "Mario", "Mino"],
        "_change_type": ["insert", "update_preimage", "update_postimage"],
        "_commit_version": [1, 2, 2],
    })
    assert_same_rows(changes, expected, columns=expected.column_names)
    cdf_table = fixture_path("cdf-table")  # v1 and v2 UPDATE three rows each, v3 DELETEs one
    deleted = pa.table({"id": [7], "_change_type": ["delete"], "_commit_version": [3]})
    assert_same_rows(deltalake_cdf(cdf_table, 3), deleted, columns=deleted.column_names)
    first_two = deltalake_cdf(cdf_table, 1, 2)  # both ends inclusive
    assert first_two.num_rows == 12 and set(first_two.column("_commit_version").to_pylist()) == {1, 2}


def test_deltalake_cdf_refuses_table_without_change_feed():
    with pytest.raises(Exception, match="change data"):
        deltalake_cdf(fixture_path("simple_table"), 0)


def test_deltalake_add_paths_as_in_the_log():
    path = fixture_path("delta-0.8.0-special-partition")
    log_paths = {
        json.loads(line)["add"]["path"]
        for line in (path / "_delta_log" / f"{0:020d}.json").read_text().splitlines()
        if '"add"' in line
    }
    assert deltalake_add_paths(path) == log_paths
    assert any("%252F" in p for p in log_paths)
    assert len(deltalake_add_paths(fixture_path("simple_table"), version=4)) == 5


def test_duckdb_computes_expected_rows_of_a_delete():
    duckdb_table("target", read_deltalake(fixture_path("simple_table"), version=1))
    duckdb_query("DELETE FROM target WHERE id % 2 = 0 OR id > $max", {"max": 15})
    assert rows(duckdb_query("SELECT * FROM target")) == [(i,) for i in (1, 3, 5, 7, 9, 11, 13, 15)]
    duckdb_table("target", pa.table({"id": [1]}))  # replaces the table of the same name
    assert duckdb_query("SELECT count(*) AS n FROM target").column("n").to_pylist() == [1]


# --- compare ----------------------------------------------------------------------------


def test_same_rows_across_legitimate_type_differences():
    moment = dt.datetime(2024, 5, 6, 7, 8, 9, 123456)
    actual = pa.table({
        "ts": pa.array([moment, None], pa.timestamp("ns")),
        "amount": pa.array([Decimal("1.50"), Decimal("-2")], pa.decimal128(10, 2)),
        "n": pa.array([1, 2], pa.int32()),
        "s": pa.array(["a", "b"], pa.large_string()).dictionary_encode(),
        "f": pa.array([float("nan"), 0.5]),
    })
    expected = pa.table({
        "f": pa.array([0.5, float("nan")]),
        "s": pa.array(["b", "a"], pa.string_view()),
        "n": pa.array([2, 1], pa.int64()),
        "amount": pa.array([Decimal("-2.00000"), Decimal("1.5")], pa.decimal128(38, 5)),
        "ts": pa.array([None, moment.replace(tzinfo=dt.timezone.utc)], pa.timestamp("us", "Etc/UTC")),
    })
    assert_same_rows(actual, expected)
    assert_same_rows(actual.to_pandas(), expected, columns=["n", "s"])


def test_same_rows_in_nested_types():
    list_a = pa.list_(pa.field("l", pa.string()))
    actual = pa.table({
        "l": pa.array([["x", "y"]], list_a),
        "m": pa.array([[("k2", 2), ("k1", 1)]], pa.map_(pa.string(), pa.int32())),
        "st": pa.array([{"b": 1, "a": dt.datetime(2020, 1, 1)}]),
    })
    expected = pa.table({
        "l": pa.array([["x", "y"]], pa.large_list(pa.large_string())),
        "m": pa.array([[("k1", 1), ("k2", 2)]], pa.map_(pa.string(), pa.int64())),
        "st": pa.array([{"a": dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), "b": 1}]),
    })
    assert_same_rows(actual, expected)


def test_rows_differ_message_lists_both_sides():
    actual = pa.table({"id": [1, 2, 2], "v": ["a", "b", "b"]})
    expected = pa.table({"v": ["a", "b", "c"], "id": [1, 2, 3]})
    with pytest.raises(AssertionError) as failure:
        assert_same_rows(actual, expected, sort_by=["id"])
    message = str(failure.value)
    assert "columns ['v', 'id']" in message  # expected's column order
    assert "only in actual (1 rows):\n  ('b', 2)" in message
    assert "only in expected (1 rows):\n  ('c', 3)" in message


def test_rows_differ_message_is_capped():
    with pytest.raises(AssertionError) as failure:
        assert_same_rows(pa.table({"i": range(50)}), pa.table({"i": range(100, 125)}))
    message = str(failure.value)
    assert "only in actual (50 rows)" in message and "... and 30 more" in message
    assert "only in expected (25 rows)" in message and "... and 5 more" in message
    assert message.count("\n  (") == 40


def test_different_columns_fail():
    with pytest.raises(AssertionError, match="different columns"):
        assert_same_rows(pa.table({"a": [1]}), pa.table({"b": [1]}))
    assert_same_rows(pa.table({"a": [1], "x": [2]}), pa.table({"a": [1], "y": [3]}), columns=["a"])


def test_rows_sorts_with_nulls_first():
    table = pa.table({"k": [2, None, 1], "v": ["b", "n", None]})
    assert rows(table) == [(None, "n"), (1, None), (2, "b")]
    assert rows(table, sort_by=["v"]) == [(1, None), (2, "b"), (None, "n")]


# --- spark ------------------------------------------------------------------------------


def test_spark_session_has_the_listed_confs(spark, tmp_path_factory):
    assert spark.sparkContext.master == MASTER
    for key, value in SPARK_CONF.items():
        assert spark.conf.get(key) == value, key
    warehouse = spark.conf.get("spark.sql.warehouse.dir")
    assert str(tmp_path_factory.getbasetemp()) in warehouse
    assert spark.sparkContext.pythonExec == sys.executable


def test_assert_same_rows_accepts_spark_dataframes(spark):
    df = spark.sql(
        "SELECT CAST(id AS INT) AS id, CAST(id AS DECIMAL(10, 2)) AS d,"
        " TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) AS ts FROM range(3)"
    )
    expected = pa.table({
        "ts": pa.array([dt.datetime(2024, 1, 1, 0, 0, s) for s in range(3)], pa.timestamp("ms")),
        "d": [Decimal(i) for i in range(3)],
        "id": pa.array(range(3), pa.int64()),
    })
    assert_same_rows(df, expected)
