"""Issue 12, case 5: a table is never created over someone else's files; CONVERT TO DELTA adopts
a directory of parquet files in place; VACUUM never deletes the plain parquet files of a
directory sqlext was pointed at."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlext
from sqlext.errors import AnalysisException, NonEmptyLocationError, SqlextError
from tests.support import assert_same_rows, read_deltalake, read_duckdb


def _plain_parquet(spark, path: Path, partitioned: bool = False) -> list[str]:
    """Spark's own parquet output (no Delta), returns the data files' relative paths."""
    df = spark.createDataFrame([(1, "a", "2024-01-01"), (2, "b", "2024-01-01"),
                                (3, None, "2024-01-02")], "id long, v string, day string")
    writer = df.repartition(2).write.mode("overwrite")
    (writer.partitionBy("day") if partitioned else writer).parquet(str(path))
    return sorted(str(p.relative_to(path)) for p in path.rglob("*.parquet"))


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*")
            if p.is_file() and "_delta_log" not in p.parts}


def test_write_into_plain_parquet_is_refused_and_changes_nothing(spark, tmp_path):
    path = tmp_path / "plain"
    files = _plain_parquet(spark, path)
    before = _tree(path)
    df = spark.createDataFrame([(9, "z", "2024-01-03")], "id long, v string, day string")
    with pytest.raises(NonEmptyLocationError) as err:
        sqlext.write(df, str(path))
    message = str(err.value)
    assert isinstance(err.value, AnalysisException) and isinstance(err.value, SqlextError)
    assert files[0] in message and "CONVERT TO DELTA parquet.`" in message
    assert "convertToDelta" in message and "Nothing was written" in message
    assert _tree(path) == before and not (path / "_delta_log").exists()
    assert not (path / "_sqlext_staging").exists() or not any((path / "_sqlext_staging").iterdir())


@pytest.mark.parametrize("statement", [
    "CREATE TABLE delta.`{p}` (id BIGINT, v STRING) USING delta",
    "CREATE TABLE t_over_files USING delta LOCATION '{p}' AS SELECT 1 AS id",
    "CREATE TABLE t_over_files2 (id BIGINT) USING delta LOCATION '{p}'",
])
def test_sql_create_over_plain_parquet_is_refused(spark, tmp_path, statement):
    path = tmp_path / "plain"
    _plain_parquet(spark, path)
    before = _tree(path)
    with pytest.raises(NonEmptyLocationError, match="not empty and is not a Delta table"):
        sqlext.sql(spark, statement.format(p=path))
    assert _tree(path) == before and not (path / "_delta_log").exists()


def test_other_files_are_refused_too_but_hidden_ones_are_not(spark, tmp_path):
    path = tmp_path / "d"
    path.mkdir()
    (path / "notes.csv").write_text("a,b\n")
    df = spark.createDataFrame([(1,)], "id long")
    with pytest.raises(SqlextError, match="notes.csv"):
        sqlext.write(df, str(path))
    os.remove(path / "notes.csv")
    (path / ".DS_Store").write_bytes(b"x")        # hidden entries are not anyone's data
    assert sqlext.write(df, str(path)) == 0


def test_convert_partitioned_parquet_in_place(spark, tmp_path):
    path = tmp_path / "plain"
    files = _plain_parquet(spark, path, partitioned=True)
    before = _tree(path)
    sqlext.sql(spark, f"CONVERT TO DELTA parquet.`{path}` PARTITIONED BY (day STRING)")
    assert _tree(path) == before                              # nothing rewritten or moved
    commit = [json.loads(line) for line in
              (path / "_delta_log" / f"{0:020d}.json").read_text().splitlines()]
    info = next(a["commitInfo"] for a in commit if "commitInfo" in a)
    assert info["operation"] == "CONVERT"
    assert info["operationMetrics"]["numConvertedFiles"] == str(len(files))
    adds = [a["add"] for a in commit if "add" in a]
    assert sorted(a["path"] for a in adds) == sorted(f.replace("day=", "day=") for f in files)
    for a in adds:
        stats = json.loads(a["stats"])
        footer = pq.read_metadata(path / a["path"])
        assert stats["numRecords"] == footer.num_rows
        assert a["partitionValues"]["day"] == a["path"].split("/")[0].split("=")[1]
    expected = [(1, "a", "2024-01-01"), (2, "b", "2024-01-01"), (3, None, "2024-01-02")]
    got = sqlext.read(spark, str(path)).select("id", "v", "day").collect()
    assert sorted(tuple(r) for r in got) == expected
    # independent readers agree
    table = pa.table({"id": [1, 2, 3], "v": ["a", "b", None],
                      "day": ["2024-01-01", "2024-01-01", "2024-01-02"]})
    assert_same_rows(read_deltalake(path).select(["id", "v", "day"]), table)
    assert_same_rows(read_duckdb(path).select(["id", "v", "day"]), table)
    # the table is a table: statistics prune, appends and DML work
    assert sqlext.read(spark, str(path), filter="id = 3").count() == 1
    sqlext.sql(spark, f"DELETE FROM delta.`{path}` WHERE id = 1")
    assert sorted(r.id for r in sqlext.read(spark, str(path)).collect()) == [2, 3]


def test_convert_to_delta_python_api(spark, tmp_path):
    path = tmp_path / "plain"
    files = _plain_parquet(spark, path)
    table = sqlext.DeltaTable.convertToDelta(spark, f"parquet.`{path}`")
    assert isinstance(table, sqlext.DeltaTable)
    assert sorted(r.id for r in table.toDF().collect()) == [1, 2, 3]
    history = table.history().collect()
    assert [(h.version, h.operation) for h in history] == [(0, "CONVERT")]
    assert sorted(read_deltalake(path)["id"].to_pylist()) == [1, 2, 3]
    # converting again: already a table, nothing changes
    sqlext.DeltaTable.convertToDelta(spark, f"parquet.`{path}`")
    assert len(table.history().collect()) == 1
    assert {str(p.relative_to(path)) for p in path.rglob("*.parquet")} == set(files)


def test_convert_with_partition_schema_mismatch_is_refused(spark, tmp_path):
    path = tmp_path / "plain"
    _plain_parquet(spark, path, partitioned=True)
    with pytest.raises(AnalysisException, match="PARTITIONED BY"):
        sqlext.sql(spark, f"CONVERT TO DELTA parquet.`{path}`")
    with pytest.raises(AnalysisException, match="not region=<value>"):
        sqlext.DeltaTable.convertToDelta(spark, f"parquet.`{path}`", "region STRING")
    assert not (path / "_delta_log").exists() or not any((path / "_delta_log").iterdir())


def test_plain_parquet_is_never_vacuumed(spark, tmp_path):
    """The issue's scenario: a sqlext write to a directory of plain parquet, then VACUUM. The
    write is refused; after CONVERT every file is the table's, and a VACUUM with no retention
    deletes none of them; files later removed by the table do go."""
    path = tmp_path / "plain"
    files = _plain_parquet(spark, path)
    df = spark.createDataFrame([(9, "z", "2024-01-03")], "id long, v string, day string")
    with pytest.raises(SqlextError):
        sqlext.write(df, str(path))
    sqlext.DeltaTable.convertToDelta(spark, f"parquet.`{path}`")
    (path / "README.txt").write_text("not a data file")
    old = 0
    for f in files + ["README.txt"]:
        os.utime(path / f, (old, old))
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        dry = sqlext.sql(spark, f"VACUUM delta.`{path}` RETAIN 0 HOURS DRY RUN").collect()
        assert dry == []
        sqlext.DeltaTable.forPath(spark, str(path)).vacuum(0)
        assert all((path / f).exists() for f in files)
        assert (path / "README.txt").exists()
        sqlext.write(df, str(path), mode="overwrite")        # removes the converted files
        vacuumed = sqlext.DeltaTable.forPath(spark, str(path)).vacuum(0).collect()
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")
    deleted = {os.path.relpath(r.path, path) for r in vacuumed}
    assert set(files) <= deleted and "README.txt" not in deleted
    assert (path / "README.txt").exists()
    assert [r.id for r in sqlext.read(spark, str(path)).collect()] == [9]
