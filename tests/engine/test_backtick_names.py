"""A column whose name contains a backtick (issue 17): every operation takes it literally, and
delta-rs reads the same column names and rows."""

from __future__ import annotations

import deltalake
import pytest

import sqlext
from sqlext import DeltaTable

NAME = "we`ird"


@pytest.mark.parametrize("partition_by", [[], [NAME]])
def test_a_backtick_in_a_column_name(spark, tmp_path, partition_by):
    path = str(tmp_path / "t")
    rows = spark.createDataFrame([(1, "a"), (2, "b")], "id long, `we``ird` string")
    sqlext.write(rows, path, partitionBy=partition_by)
    table = DeltaTable.forPath(spark, path)
    table.delete("id = 1")
    table.update("id = 2", {"`we``ird`": "'z'"})
    (table.alias("t").merge(rows.alias("s"), "t.id = s.id")
     .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
    table.optimize().executeCompaction()
    got = sorted(tuple(r) for r in sqlext.read(spark, path).collect())
    assert got == [(1, "a"), (2, "b")]
    theirs = deltalake.DeltaTable(path).to_pyarrow_table().to_pylist()
    assert sorted((r["id"], r[NAME]) for r in theirs) == got
    changes = sqlext.sql(spark, f"SELECT `we``ird`, _change_type, _commit_version FROM "
                                f"table_changes_by_path('{path}', 2, 2)").collect()
    assert sorted(tuple(r) for r in changes) == [("b", "update_preimage", 2),
                                                 ("z", "update_postimage", 2)]
