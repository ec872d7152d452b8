"""DELETE and UPDATE against a concurrent writer: the statement's transaction reads version N,
another writer commits N+1, then the statement commits. This is exactly the interleaving of a
real race (the commit of N+1 fails and the winner is checked), made deterministic by starting
the transaction before the other writer runs."""

from __future__ import annotations

import pyarrow as pa
import pytest

import sqlext
from sqlext.engine.dml.delete import delete
from sqlext.engine.dml.update import update
from sqlext.errors import ConcurrentAppendException, ConcurrentDeleteDeleteException
from sqlext.log.table import DeltaLog
from tests.support.dml_cases import (SPARK_SCHEMA, duckdb_after, file_actions, latest_version,
                               read_deltalake, rows_table, spark_table)
from tests.support.table_checks import assert_readers_agree, table_state

ROWS = [(i, i % 2, f"s{i}", i * 10) for i in range(20)]


@pytest.fixture
def table(spark, tmp_path):
    path = tmp_path / "t"
    spark_table(spark, path, ROWS, partition_by=["p"], files=2)
    return path


def _append(spark, path, rows):
    return sqlext.write(spark.createDataFrame(rows, SPARK_SCHEMA), str(path), mode="append")


@pytest.mark.parametrize("statement", ["delete", "update"])
def test_concurrent_append_of_matching_rows_conflicts(spark, table, statement):
    log = DeltaLog(str(table))
    txn = log.start_transaction()
    _append(spark, table, [(100, 1, "new", 1000)])       # matches v > 150 AND p = 1
    state = table_state(table)
    with pytest.raises(ConcurrentAppendException) as info:
        if statement == "delete":
            delete(spark, log, "v > 150 AND p = 1", txn=txn)
        else:
            update(spark, log, "v > 150 AND p = 1", {"v": "0"}, txn=txn)
    assert "version 1" in str(info.value)
    assert latest_version(table) == 1
    assert table_state(table)["rows"] == state["rows"]


@pytest.mark.parametrize("statement", ["delete", "update"])
def test_concurrent_append_elsewhere_lets_the_statement_retry_and_commit(spark, table, statement):
    log = DeltaLog(str(table))
    txn = log.start_transaction()
    before = read_deltalake(table)
    _append(spark, table, [(100, 0, "new", 1000)])       # partition p = 0: outside the condition
    if statement == "delete":
        result = delete(spark, log, "v > 150 AND p = 1", txn=txn)
        sql = "DELETE FROM {t} WHERE v > 150 AND p = 1"
    else:
        result = update(spark, log, "v > 150 AND p = 1", {"v": "0"}, txn=txn)
        sql = "UPDATE {t} SET v = 0 WHERE v > 150 AND p = 1"
    assert result.version == 2 and txn.attempts == 2
    expected = duckdb_after(pa.concat_tables([before, rows_table([(100, 0, "new", 1000)])]), sql)
    assert_readers_agree(spark, table, expected)


def test_two_deletes_of_the_same_files(spark, table):
    log = DeltaLog(str(table))
    txn = log.start_transaction()
    first = delete(spark, log, "p = 1")
    assert first.version == 1 and file_actions(table, 1)["remove"]
    with pytest.raises(ConcurrentDeleteDeleteException):
        delete(spark, log, "p = 1", txn=txn)
    assert latest_version(table) == 1


def test_two_data_deletes_of_the_same_file(spark, table):
    log = DeltaLog(str(table))
    txn = log.start_transaction()
    # the first removes every row of its files (no file re-added), the second the same file
    assert delete(spark, log, "p = 1 AND v >= 0").version == 1
    with pytest.raises(ConcurrentDeleteDeleteException):
        delete(spark, log, "p = 1 AND id = 3", txn=txn)
    assert latest_version(table) == 1
