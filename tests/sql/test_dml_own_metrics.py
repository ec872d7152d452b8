"""Issue 12, case 4: SQL DELETE / UPDATE return their own command's metrics, even when another
writer commits right after them (before the result is built)."""

from __future__ import annotations

import pytest
from deltalake import write_deltalake
import pyarrow as pa

import sqlext
from sqlext.log.transaction import Transaction

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's


@pytest.fixture
def commit_after_each(monkeypatch, table_path):
    """After each sqlext commit to the table, delta-rs appends a row (a real commit by another
    engine), so the newest commit is never the statement's own when its result is read."""
    real = Transaction._post_commit
    others = []

    def post_commit(self, version):
        real(self, version)
        if self.log.location == str(table_path):
            write_deltalake(str(table_path), pa.table({"id": pa.array([100 + len(others)],
                                                                       pa.int64()),
                                                       "v": ["other"]}), mode="append")
            others.append(version + 1)

    monkeypatch.setattr(Transaction, "_post_commit", post_commit)
    return others


def test_delete_and_update_report_their_own_rows(spark, table_path, commit_after_each):
    df = spark.createDataFrame([(i, "x") for i in range(5)], "id long, v string")
    sqlext.write(df, str(table_path))
    assert commit_after_each == [1]
    deleted = sqlext.sql(spark, f"DELETE FROM delta.`{table_path}` WHERE id < 3").collect()
    assert [tuple(r) for r in deleted] == [(3,)]
    updated = sqlext.sql(spark, f"UPDATE delta.`{table_path}` SET v = 'y' WHERE id BETWEEN 3 AND 99")
    assert [tuple(r) for r in updated.collect()] == [(2,)]
    # the other writer did commit after each statement, and the statements are in the table
    history = [(h.version, h.operation) for h in
               sqlext.DeltaTable.forPath(spark, str(table_path)).history().collect()]
    assert history[:4] == [(5, "WRITE"), (4, "UPDATE"), (3, "WRITE"), (2, "DELETE")]
    assert sorted((r.id, r.v) for r in sqlext.read(spark, str(table_path)).collect()) == [
        (3, "y"), (4, "y"), (100, "other"), (101, "other"), (102, "other")]
