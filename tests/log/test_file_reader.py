"""The kernel's reader of a data file's logical rows (``sqlext.log.file_reader``): column
mapping by name and by parquet field id, deletion vectors, partition values of every type
(NULL included), widened types, projection and the row index. Each table is read file by file
with the kernel reader and compared with Spark's read of the same table (``sqlext.read``)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlext
from sqlext.errors import AnalysisException, DeltaFileNotFoundError
from sqlext.log.actions import AddFile, Metadata, Protocol
from sqlext.log.column_mapping import FIELD_ID_KEY, PHYSICAL_NAME_KEY
from sqlext.log.deletion_vectors import DeletionVectorReader
from sqlext.log.file_reader import ROW_INDEX_COLUMN, logical_schema, read_logical
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows


def kernel_read(path, columns=None, with_row_index=False) -> pa.Table:
    """Every live file of the table's latest version through the kernel reader."""
    log = DeltaLog(str(path))
    snapshot = log.snapshot()
    schema = logical_schema(snapshot.metadata, columns, with_row_index, table=log.name,
                            version=snapshot.version)
    parts = [read_logical(log.location, f, snapshot.metadata, columns, with_row_index,
                          version=snapshot.version) for f in snapshot.files]
    return pa.concat_tables(parts) if parts else schema.empty_table()


def same_as_spark(spark, path) -> pa.Table:
    mine = kernel_read(path)
    assert_same_rows(mine, sqlext.read(spark, str(path)).toArrow())
    return mine


def test_column_mapping_name_renamed_columns_and_nested_fields(spark, tmp_path):
    p = tmp_path / "mapped"
    sqlext.sql(spark, f"CREATE TABLE delta.`{p}` (id BIGINT, v STRING, s STRUCT<a: INT, b: STRING>,"
                      " part STRING) USING delta PARTITIONED BY (part) TBLPROPERTIES "
                      "('delta.columnMapping.mode' = 'name')")
    sqlext.sql(spark, f"INSERT INTO delta.`{p}` SELECT id, concat('v', id), named_struct('a', "
                      "CAST(id AS INT), 'b', concat('b', id)), concat('p', id % 2) FROM range(6)")
    sqlext.sql(spark, f"ALTER TABLE delta.`{p}` RENAME COLUMN v TO w")
    sqlext.sql(spark, f"ALTER TABLE delta.`{p}` RENAME COLUMN s.a TO alpha")
    sqlext.sql(spark, f"ALTER TABLE delta.`{p}` RENAME COLUMN part TO region")
    # the files hold physical names only: a reader going by logical names finds nothing
    some = next(Path(p).rglob("*.parquet"))
    assert all(n.startswith("col-") for n in pq.read_schema(some).names)
    mine = same_as_spark(spark, p)
    assert mine.column_names == ["id", "w", "s", "region"]
    assert mine.schema.field("s").type == pa.struct([("alpha", pa.int32()), ("b", pa.string())])
    row = {r["id"]: r for r in mine.to_pylist()}[3]
    assert row == {"id": 3, "w": "v3", "s": {"alpha": 3, "b": "b3"}, "region": "p1"}


def _id_mode_table(root: Path) -> Path:
    """A column mapping ``id`` table whose file's column names match neither the logical nor the
    physical names: only the parquet field ids find them (as delta-spark reads ``id`` mode)."""
    (root / "_delta_log").mkdir(parents=True)

    def field(name, type_, fid):
        return {"name": name, "type": type_, "nullable": True,
                "metadata": {FIELD_ID_KEY: fid, PHYSICAL_NAME_KEY: f"col-{name}"}}
    inner = {"type": "struct", "fields": [field("x", "integer", 3)]}
    schema = {"type": "struct", "fields": [field("id", "long", 1), field("s", inner, 2),
                                           field("day", "date", 4)]}
    md = Metadata("t", json.dumps(schema), ["day"], {"delta.columnMapping.mode": "id",
                                                     "delta.columnMapping.maxColumnId": "4"})
    fid = lambda n: {b"PARQUET:field_id": str(n).encode()}     # noqa: E731
    arrow = pa.schema([pa.field("renamed_id", pa.int64(), metadata=fid(1)),
                       pa.field("other", pa.struct([pa.field("y", pa.int32(), metadata=fid(3))]),
                                metadata=fid(2))])
    pq.write_table(pa.table([pa.array([1, 2]), pa.array([{"y": 10}, None])], schema=arrow),
                   root / "f.parquet")
    add = AddFile("f.parquet", {"col-day": "2024-02-29"}, 1, 0)
    actions = [{"protocol": Protocol(2, 5).to_dict()}, {"metaData": md.to_dict()},
               {"add": add.to_dict()}]
    (root / "_delta_log" / f"{0:020d}.json").write_text(
        "\n".join(json.dumps(a) for a in actions) + "\n")
    return root


def test_column_mapping_id_finds_columns_by_field_id(spark, tmp_path):
    p = _id_mode_table(tmp_path / "ids")
    mine = same_as_spark(spark, p)
    assert sorted(mine.to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "s": {"x": 10}, "day": dt.date(2024, 2, 29)},
        {"id": 2, "s": None, "day": dt.date(2024, 2, 29)}]


def test_deletion_vectors_remove_rows_and_row_index_counts_before_removal(spark, tmp_path):
    p = tmp_path / "dv"
    sqlext.sql(spark, f"CREATE TABLE delta.`{p}` (id BIGINT) USING delta TBLPROPERTIES "
                      "('delta.enableDeletionVectors' = 'true')")
    sqlext.sql(spark, f"INSERT INTO delta.`{p}` SELECT id FROM range(0, 50, 1, 1)")
    sqlext.sql(spark, f"DELETE FROM delta.`{p}` WHERE id % 7 = 0")
    snapshot = DeltaLog(str(p)).snapshot()
    assert all(f.deletion_vector for f in snapshot.files)
    mine = same_as_spark(spark, p)
    assert sorted(mine.column("id").to_pylist()) == [i for i in range(50) if i % 7]
    (f,) = snapshot.files
    indexed = read_logical(str(p), f, snapshot.metadata, ["id"], with_row_index=True)
    # one file written in id order: a row's position in it is its id, deleted rows skipped
    assert indexed.column(ROW_INDEX_COLUMN).to_pylist() == indexed.column("id").to_pylist()
    assert set(range(50)) - set(indexed.column(ROW_INDEX_COLUMN).to_pylist()) == \
        set(DeletionVectorReader.of(DeltaLog(str(p))).load(f.deletion_vector).row_indexes())


def test_partitions_of_every_type_with_nulls(spark, tmp_path):
    p = tmp_path / "parts"
    cols = ("b BOOLEAN, y TINYINT, sh SMALLINT, i INT, l BIGINT, f FLOAT, d DOUBLE, "
            "dec DECIMAL(10,2), s STRING, dt DATE, ts TIMESTAMP, ntz TIMESTAMP_NTZ, bin BINARY")
    names = [c.split()[0] for c in cols.split(", ")]
    sqlext.sql(spark, f"CREATE TABLE delta.`{p}` (v INT, {cols}) USING delta "
                      f"PARTITIONED BY ({', '.join(names)})")
    sqlext.sql(spark, f"INSERT INTO delta.`{p}` VALUES (1, true, 1, 2, 3, 4, 1.5, 2.25, 12.34, "
                      "'a b', DATE'2024-02-29', TIMESTAMP'2024-01-02 03:04:05.123456', "
                      "TIMESTAMP_NTZ'2024-01-02 03:04:05', X'0102')")
    sqlext.sql(spark, f"INSERT INTO delta.`{p}` SELECT 2, {', '.join(['NULL'] * len(names))}")
    mine = same_as_spark(spark, p)
    rows = {r["v"]: r for r in mine.to_pylist()}
    assert rows[2] == {"v": 2, **{n: None for n in names}}
    assert rows[1]["dec"] == decimal.Decimal("12.34") and rows[1]["bin"] == b"\x01\x02"
    assert rows[1]["ntz"] == dt.datetime(2024, 1, 2, 3, 4, 5)
    assert mine.schema.field("ts").type == pa.timestamp("us", tz="UTC")


def test_widened_types_read_as_the_table_type(spark, tmp_path):
    p = tmp_path / "wide"
    sqlext.sql(spark, f"CREATE TABLE delta.`{p}` (id INT, x FLOAT, d DATE) USING delta "
                      "TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    sqlext.sql(spark, f"INSERT INTO delta.`{p}` VALUES (2147483647, 1.5, DATE'2024-01-01')")
    for column, wider in (("id", "BIGINT"), ("x", "DOUBLE"), ("d", "TIMESTAMP_NTZ")):
        sqlext.sql(spark, f"ALTER TABLE delta.`{p}` ALTER COLUMN {column} TYPE {wider}")
    sqlext.sql(spark, f"INSERT INTO delta.`{p}` VALUES (9000000000, 2.5, "
                      "TIMESTAMP_NTZ'2024-01-02 10:00:00')")
    old = min(Path(p).glob("*.parquet"), key=lambda f: f.stat().st_mtime)
    assert pq.read_schema(old).field("id").type == pa.int32()      # the file kept its type
    mine = same_as_spark(spark, p)
    assert mine.schema.types == [pa.int64(), pa.float64(), pa.timestamp("us")]
    assert sorted(mine.column("id").to_pylist()) == [2147483647, 9000000000]


@pytest.mark.parametrize("name", ["delta-2.2.0-partitioned-types", "delta-0.8.0-null-partition",
                                  "table-with-dv-small", "table_with_edge_timestamps",
                                  "delta-0.8.0-special-partition"])
def test_fixture_tables_read_as_spark_reads_them(spark, fixture_table, name):
    mine = same_as_spark(spark, fixture_table(name))
    assert mine.num_rows > 0


def test_projection_orders_columns_and_unknown_columns_are_refused(spark, tmp_path):
    p = tmp_path / "proj"
    sqlext.sql(spark, f"CREATE TABLE delta.`{p}` (a INT, b STRING, part INT) USING delta "
                      "PARTITIONED BY (part)")
    sqlext.sql(spark, f"INSERT INTO delta.`{p}` VALUES (1, 'x', 7)")
    mine = kernel_read(p, ["PART", "a"], with_row_index=True)
    assert mine.column_names == ["part", "a", ROW_INDEX_COLUMN]
    assert mine.to_pylist() == [{"part": 7, "a": 1, ROW_INDEX_COLUMN: 0}]
    only_partition = kernel_read(p, ["part"])
    assert only_partition.to_pylist() == [{"part": 7}]       # row count without a data column
    with pytest.raises(AnalysisException, match=r"version 1: column nope does not exist"):
        kernel_read(p, ["nope"])
    snapshot = DeltaLog(str(p)).snapshot()
    for f in Path(p).rglob("*.parquet"):
        f.unlink()
    with pytest.raises(DeltaFileNotFoundError, match="does not exist"):
        read_logical(str(p), snapshot.files[0], snapshot.metadata)
