"""MERGE against concurrent writers: the MERGE reads version N (its transaction starts first), a
winner commits N+1, then the MERGE commits. Conflicting winners raise delta-spark's typed
exceptions and nothing of the MERGE is committed; the others make it commit at N+2."""

from __future__ import annotations

import pytest

import sqlext
from sqlext import DeltaTable
from sqlext.engine.merge import merge
from sqlext.errors import (ConcurrentAppendException, ConcurrentDeleteDeleteException,
                           ConcurrentDeleteReadException)
from sqlext.log.table import DeltaLog
from tests.support.dml_cases import SPARK_SCHEMA, latest_version, operation, rows_table
from tests.support.table_checks import assert_readers_agree

# even ids 0..58 in three files: 0-18, 20-38, 40-58; p = id % 3
ROWS = [(i, i % 3, "r", i) for i in range(0, 60, 2)]


def make_table(spark, path, isolation: str | None = None, partitioned: bool = False) -> None:
    conf = {"delta.isolationLevel": isolation} if isolation else None
    df = spark.createDataFrame(ROWS, SPARK_SCHEMA).repartitionByRange(3, "id")
    sqlext.write(df, str(path), partitionBy=["p"] if partitioned else None, configuration=conf)


def run_merge(spark, path, txn, src_rows, condition="t.id = s.id"):
    """The MERGE (update matched, insert new) in the transaction ``txn`` started earlier."""
    src = spark.createDataFrame(src_rows, SPARK_SCHEMA).alias("s")
    builder = (DeltaTable.forPath(spark, str(path)).alias("t").merge(src, condition)
               .whenMatchedUpdate(set={"s": "'merged'"}).whenNotMatchedInsertAll())
    return merge(spark, DeltaLog(str(path)), src, condition, builder.clauses, alias="t", txn=txn)


def append(spark, path, rows) -> None:
    sqlext.write(spark.createDataFrame(rows, SPARK_SCHEMA), str(path), mode="append")


def test_append_into_the_region_read_conflicts(spark, table_path):
    make_table(spark, table_path, isolation="Serializable", partitioned=True)
    txn = DeltaLog(str(table_path)).start_transaction()
    append(spark, table_path, [(23, 1, "concurrent", 0)])     # p = 1, id within 22..41
    with pytest.raises(ConcurrentAppendException, match="version 1"):
        run_merge(spark, table_path, txn, [(22, 1, "x", 0), (41, 1, "y", 0)],
                  "t.id = s.id AND t.p = 1")
    assert latest_version(table_path) == 1
    assert_readers_agree(spark, table_path, rows_table(ROWS + [(23, 1, "concurrent", 0)]))


def test_append_elsewhere_lets_the_merge_retry(spark, table_path):
    make_table(spark, table_path, isolation="Serializable", partitioned=True)
    txn = DeltaLog(str(table_path)).start_transaction()
    append(spark, table_path, [(23, 2, "concurrent", 0)])     # p = 2: outside t.p = 1
    result = run_merge(spark, table_path, txn, [(22, 1, "x", 0), (41, 1, "y", 0)],
                       "t.id = s.id AND t.p = 1")
    assert result.version == 2
    assert operation(table_path, 2)[0] == "MERGE"
    expected = [(i, p, "merged" if i == 22 else s, v) for i, p, s, v in ROWS]
    assert_readers_agree(spark, table_path, rows_table(
        expected + [(23, 2, "concurrent", 0), (41, 1, "y", 0)]))


def test_blind_append_does_not_conflict_under_write_serializable(spark, table_path):
    make_table(spark, table_path)                              # default: WriteSerializable
    txn = DeltaLog(str(table_path)).start_transaction()
    append(spark, table_path, [(23, 1, "concurrent", 0)])
    assert run_merge(spark, table_path, txn, [(22, 1, "x", 0)]).version == 2


def test_removal_of_a_file_read_conflicts(spark, table_path):
    make_table(spark, table_path)
    txn = DeltaLog(str(table_path)).start_transaction()
    # 41 lies in the third file's id range (read, not rewritten); the winner removes that file
    DeltaTable.forPath(spark, str(table_path)).delete("id >= 40")
    with pytest.raises(ConcurrentDeleteReadException):
        run_merge(spark, table_path, txn, [(22, 1, "x", 0), (41, 1, "y", 0)])
    assert latest_version(table_path) == 1


def test_removal_of_a_file_rewritten_conflicts(spark, table_path):
    make_table(spark, table_path)
    txn = DeltaLog(str(table_path)).start_transaction()
    DeltaTable.forPath(spark, str(table_path)).delete("id >= 20 AND id < 40")
    with pytest.raises(ConcurrentDeleteDeleteException):
        run_merge(spark, table_path, txn, [(22, 1, "x", 0)])
    assert latest_version(table_path) == 1
