"""The Spark scan of files with deletion vectors: the parquet row index is each row's position in
its file, also when a file of many row groups is split across tasks; files without vectors in the
same table read as before; DuckDB's delta extension reads the same rows."""

from __future__ import annotations

import json
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

import sqlext
from sqlext.log.deletion_vectors import RoaringBitmapArray, deletion_vector_file, z85_encode
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows, read_duckdb
from tests.support.spark import spark_conf

ROWS = 5000
DELETED_A = {0, 63, 64, 127, 2500, ROWS - 1} | set(range(1000, 1300))
DELETED_B = set(range(0, ROWS, 7))


def _table(path) -> None:
    """Three files of ROWS rows, 64-row row groups: ``a`` with an inline vector, ``b`` with one
    in a file under the prefix ``ab/`` (at offset > 1, after another bitmap), ``c`` none."""
    log = path / "_delta_log"
    log.mkdir(parents=True)
    adds = []
    for name, base in (("a", 0), ("b", 100_000), ("c", 200_000)):
        table = pa.table({"id": pa.array(range(base, base + ROWS), pa.int64())})
        pq.write_table(table, path / f"{name}.parquet", row_group_size=64)
        adds.append({"path": f"{name}.parquet", "partitionValues": {},
                     "size": (path / f"{name}.parquet").stat().st_size,
                     "modificationTime": 1700000000000, "dataChange": True,
                     "stats": json.dumps({"numRecords": ROWS})})
    inline = RoaringBitmapArray.from_rows(DELETED_A).serialize()
    adds[0]["deletionVector"] = {
        "storageType": "i", "pathOrInlineDv": z85_encode(inline + b"\0" * (-len(inline) % 4)),
        "sizeInBytes": len(inline), "cardinality": len(DELETED_A)}
    stored = RoaringBitmapArray.from_rows(DELETED_B).serialize()
    data, offsets = deletion_vector_file([RoaringBitmapArray.from_rows([1]).serialize(), stored])
    dv_id = uuid.uuid4()
    (path / "ab").mkdir()
    (path / "ab" / f"deletion_vector_{dv_id}.bin").write_bytes(data)
    adds[1]["deletionVector"] = {
        "storageType": "u", "pathOrInlineDv": "ab" + z85_encode(dv_id.bytes),
        "offset": offsets[1], "sizeInBytes": len(stored), "cardinality": len(DELETED_B)}
    schema = {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True,
                                            "metadata": {}}]}
    lines = [{"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                           "readerFeatures": ["deletionVectors"],
                           "writerFeatures": ["deletionVectors"]}},
             {"metaData": {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
                           "schemaString": json.dumps(schema), "partitionColumns": [],
                           "configuration": {"delta.enableDeletionVectors": "true"},
                           "createdTime": 1700000000000}},
             *({"add": a} for a in adds)]
    (log / f"{0:020d}.json").write_text("\n".join(json.dumps(x) for x in lines) + "\n")


def _expected() -> set[int]:
    return ({i for i in range(ROWS) if i not in DELETED_A}
            | {100_000 + i for i in range(ROWS) if i not in DELETED_B}
            | {200_000 + i for i in range(ROWS)})


def test_row_index_holds_across_splits_of_a_file(spark, tmp_path):
    path = tmp_path / "t"
    _table(path)
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")   # many tasks per file
    try:
        with spark_conf(spark, {"spark.sqlext.execution.local": "off"}):     # the file scan, split into tasks
            df = sqlext.read(spark, str(path))
        assert df.rdd.getNumPartitions() > 3
        assert {r.id for r in df.collect()} == _expected()
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert_same_rows(sqlext.read(spark, str(path)), read_duckdb(path))
    assert DeltaLog(str(path)).snapshot().num_records == len(_expected())
    filtered = sqlext.read(spark, str(path), filter="id >= 100000 AND id < 100100")
    assert {r.id for r in filtered.collect()} == {100_000 + i for i in range(100) if i % 7}


def test_files_without_vectors_are_scanned_as_before(spark, tmp_path):
    """The plan of a table whose files have no vector has no row index and no join."""
    path = tmp_path / "plain"
    _table(path)
    commit = path / "_delta_log" / f"{0:020d}.json"
    lines = [json.loads(x) for x in commit.read_text().splitlines()]
    for line in lines:
        line.get("add", {}).pop("deletionVector", None)
    commit.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    with spark_conf(spark, {"spark.sqlext.execution.local": "off"}):     # the file scan's plans
        plan = sqlext.read(spark, str(path))._jdf.queryExecution().executedPlan().toString()
    assert "row_index" not in plan and "Join" not in plan
    with_dv = tmp_path / "dv"
    _table(with_dv)
    with spark_conf(spark, {"spark.sqlext.execution.local": "off"}):
        plan = sqlext.read(spark, str(with_dv))._jdf.queryExecution().executedPlan().toString()
    assert "row_index" in plan and "Join" in plan
