"""Issue 12, section 5: VACUUM never deletes a file it did not see a table write or remove.

Deleted: files of tombstones older than the retention, and uncommitted files named as Delta writers
name theirs (orphans of failed writes). Kept, whatever their age, and not listed by a DRY RUN: a
user's ``data.parquet`` or ``notes.csv``, in the root or in a partition directory. delta-rs's
VACUUM, which deletes every unreferenced file, is the cross-check for the rest."""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import sqlext
from sqlext import DeltaTable
from tests.support.spark import NO_RETENTION_CHECK, spark_conf
from tests.support import read_deltalake

FOREIGN = ["data.parquet", "notes.csv", "part=1/data.parquet", "part=1/notes.csv"]


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and "_delta_log" not in p.parts and not p.name.startswith(".")}


def _age(root: Path, rels) -> None:
    """Make files a day old, so a VACUUM of any retention sees them as old."""
    old = os.path.getmtime(root / "_delta_log") - 86_400
    for rel in rels:
        os.utime(root / rel, (old, old))


def _table_with_leftovers(spark, path: Path) -> dict[str, set[str]]:
    df = spark.range(0, 20).selectExpr("id", "cast(id % 2 as string) as part")
    sqlext.write(df, str(path), partitionBy=["part"])                       # version 0
    first = _files(path)
    sqlext.write(df.where("id >= 10"), str(path), mode="overwrite")         # tombstones v0's files
    live = _files(path) - first
    # uncommitted files of a failed write, named as delta-rs/Spark and delta-spark/sqlext name them
    orphans = {f"part=1/part-00000-{uuid.uuid4()}-c000.snappy.parquet",
               f"part=0/part-00003-{uuid.uuid4()}.c000.snappy.parquet",
               f"_change_data/part=0/cdc-00000-{uuid.uuid4()}.c000.snappy.parquet",
               f"deletion_vector_{uuid.uuid4()}.bin"}
    for rel in orphans | set(FOREIGN):
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".parquet"):
            pq.write_table(pa.table({"id": [999]}), path / rel)
        else:
            (path / rel).write_text("a,b\n1,2\n")
    _age(path, first | orphans | set(FOREIGN))
    return {"tombstoned": first, "live": live, "orphans": orphans}


def test_vacuum_keeps_files_no_table_wrote(spark, table_path, caplog):
    from deltalake import DeltaTable as RsTable
    files = _table_with_leftovers(spark, table_path)
    expected = files["tombstoned"] | files["orphans"]
    # delta-rs would delete the foreign files too; sqlext deletes exactly the rest
    rs = {Path(p).as_posix() for p in RsTable(str(table_path)).vacuum(
        retention_hours=0, dry_run=True, enforce_retention_duration=False, full=True)}
    assert rs == expected | set(FOREIGN)
    with spark_conf(spark, NO_RETENTION_CHECK), caplog.at_level(logging.WARNING, "sqlext"):
        dry = sqlext.sql(spark, f"VACUUM delta.`{table_path}` RETAIN 0 HOURS DRY RUN").collect()
        # SQL VACUUM answers qualified paths (file:/...), as delta-spark; DeltaTable.vacuum plain ones
        dry_paths = {r.path.removeprefix("file:") for r in dry}
        dry_files = {Path(p).relative_to(table_path).as_posix() for p in dry_paths
                     if Path(p).is_file()}
        assert dry_files == expected
        assert _files(table_path) == expected | files["live"] | set(FOREIGN)   # nothing deleted
        deleted = DeltaTable.forPath(spark, str(table_path)).vacuum(0).collect()
    assert {r.path for r in deleted} == dry_paths     # the dry run said what goes
    assert _files(table_path) == files["live"] | set(FOREIGN)
    assert (table_path / "part=1" / "notes.csv").read_text() == "a,b\n1,2\n"
    assert pq.read_table(table_path / "data.parquet").to_pydict() == {"id": [999]}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2                                     # the dry run and the real one
    assert all("CONVERT TO DELTA" in w and all(f in w for f in FOREIGN) for w in warnings)
    assert sorted(read_deltalake(table_path)["id"].to_pylist()) == list(range(10, 20))
    assert sorted(r.id for r in sqlext.read(spark, str(table_path)).collect()) == \
        list(range(10, 20))


def test_a_file_the_log_removed_goes_whatever_its_name(spark, tmp_path):
    """A converted ``data.parquet`` is the table's: once the table removes it and the tombstone
    expires, VACUUM deletes it, though no Delta writer named it."""
    path = tmp_path / "plain"
    path.mkdir()
    pq.write_table(pa.table({"id": [1, 2]}), path / "data.parquet")
    DeltaTable.convertToDelta(spark, f"parquet.`{path}`")
    sqlext.write(spark.range(5, 6), str(path), mode="overwrite")
    (path / "other.parquet").write_bytes((path / "data.parquet").read_bytes())   # not the table's
    _age(path, ["data.parquet", "other.parquet"])
    with spark_conf(spark, NO_RETENTION_CHECK):
        deleted = DeltaTable.forPath(spark, str(path)).vacuum(0).collect()
    assert [Path(r.path).name for r in deleted] == ["data.parquet"]
    assert not (path / "data.parquet").exists() and (path / "other.parquet").exists()
    assert [r.id for r in sqlext.read(spark, str(path)).collect()] == [5]
