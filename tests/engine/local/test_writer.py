"""The driver-side Delta file writer (sqlext/engine/local/writer.py) against sqlext's Spark writer.

The same rows (every Delta type, nested ones, decimals of each parquet storage width, NULLs,
long strings, NaN) are written into one table twice: once by ``write_local_files`` (version
1), once by the Spark path (version 2). Per partition the two files must have the same
statistics, the same parquet schema (physical types, repetition, field ids, names) and the
same Spark footer metadata; version 1 must read back as the rows in Spark (sqlext), delta-rs
and DuckDB. Unpartitioned and partitioned (values needing escapes, NULL and '', timestamps in
a non-UTC session time zone, doubles, decimals, dates), with and without column mapping.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import sqlext
from sqlext.engine.commit import commit
from sqlext.engine.io.files import write_files
from sqlext.engine.local.writer import (LocalWriteError, ROW_METADATA_KEY, spark_partition_text,
                                        write_change_files, write_local_files)
from sqlext.engine.schemas import spark_schema
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows, read_deltalake, read_duckdb
from tests.support.spark import spark_conf

COLUMNS = [("id", "BIGINT"), ("by", "TINYINT"), ("sh", "SMALLINT"), ("i", "INT"), ("f", "FLOAT"),
           ("d", "DOUBLE"), ("bo", "BOOLEAN"), ("s", "STRING"), ("b", "BINARY"), ("dt", "DATE"),
           ("ts", "TIMESTAMP"), ("tn", "TIMESTAMP_NTZ"), ("d1", "DECIMAL(9,2)"),
           ("d2", "DECIMAL(18,4)"), ("d3", "DECIMAL(38,10)"),
           ("st", "STRUCT<x: INT, y: ARRAY<STRING>, z: STRUCT<q: DOUBLE>>"),
           ("m", "MAP<STRING, DECIMAL(5,1)>"), ("a", "ARRAY<STRUCT<k: INT>>"), ("ps", "STRING"),
           ("pdt", "DATE"), ("pts", "TIMESTAMP"), ("pdbl", "DOUBLE"), ("pdec", "DECIMAL(10,2)"),
           ("pb", "BOOLEAN")]
PARTITIONS = "ps, pdt, pts, pdbl, pdec, pb"
_LONG = "x" * 40 + "é"

ROWS = f"""SELECT * FROM VALUES
 (1, 1Y, 1S, 1, 1.5F, 2.5D, true, '{_LONG}', X'00FF', DATE'2020-01-01',
  TIMESTAMP'2020-01-01 10:00:00.123456', TIMESTAMP_NTZ'2021-02-03 04:05:06.5',
  1234567.89BD, 12345678901234.5678BD, 1234567890123456789012345678.0123456789BD,
  named_struct('x', 1, 'y', array('a', NULL), 'z', named_struct('q', 1.0D)),
  map('k', 1.5BD), array(named_struct('k', 1), NULL),
  'a/b=c%d', DATE'2020-01-01', TIMESTAMP'2020-01-01 00:00:00.5', 1E20D, 1.50BD, true),
 (2, -128Y, -32768S, -2147483648, -0.0F, CAST('NaN' AS DOUBLE), false, 'ü €', X'',
  DATE'1900-12-31', TIMESTAMP'1970-01-01 00:00:00', TIMESTAMP_NTZ'1900-01-01 00:00:00',
  -9999999.99BD, -99999999999999.9999BD, -1BD, named_struct('x', NULL, 'y', NULL, 'z', NULL),
  map(), array(), '', NULL, NULL, CAST('NaN' AS DOUBLE), NULL, false),
 (3, 127Y, 32767S, 2147483647, 3.4E38F, 1E-5D, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, DATE'2020-01-01', TIMESTAMP'2020-01-01 00:00:00.5', 0.001D,
  2.25BD, NULL)
"""


def _select(spark):
    """The rows, cast to the table's types (nullability left as Spark derives it)."""
    raw = spark.sql(ROWS + f" AS v({', '.join(n for n, _ in COLUMNS)})")
    return raw.selectExpr(*[f"CAST({n} AS {t}) AS {n}" for n, t in COLUMNS])


def _create(spark, path, partitioned: bool, mapping: str) -> DeltaLog:
    # sqlext's CREATE TABLE does not add the timestampNtz feature by itself (delta-rs refuses
    # such a table): asked for here
    props = "TBLPROPERTIES ('delta.feature.timestampNtz' = 'supported'" + (
        f", 'delta.columnMapping.mode' = '{mapping}')" if mapping else ")")
    parts = f"PARTITIONED BY ({PARTITIONS})" if partitioned else ""
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` "
               f"({', '.join(f'{n} {t}' for n, t in COLUMNS)}) USING delta {parts} {props}")
    return DeltaLog(str(path))


def _commit_local(spark, log: DeltaLog, rows) -> int:
    snapshot = log.snapshot()
    adds = write_local_files(spark, log, snapshot, rows)
    txn = log.start_transaction(snapshot)
    return commit(spark, txn, adds, "WRITE", {"mode": "Append"}, {"numFiles": len(adds)})


def _adds(log: DeltaLog, version: int) -> dict:
    """partitionValues (as JSON) -> the add action of ``version``."""
    adds = [a for a in log.snapshot(version).files
            if a.path not in {f.path for f in (log.snapshot(version - 1).files)}]
    return {json.dumps(a.partition_values, sort_keys=True): a for a in adds}


def _footer(log: DeltaLog, add) -> tuple[list[str], dict]:
    """The file's parquet schema, one line per column (types, repetition, field ids, names;
    not the root's name: pyarrow calls it ``schema``, parquet-mr ``spark_schema``), and
    Spark's schema in its footer."""
    parquet = pq.ParquetFile(log.data_path(add.path))
    lines = str(parquet.schema).splitlines()[2:]
    return lines, json.loads(parquet.metadata.metadata[ROW_METADATA_KEY.encode()])


def _flat(tree: dict, prefix: str = "") -> dict:
    """``{"a.b": value}`` for a nested statistics dict (a readable difference when they differ)."""
    out = {}
    for k, v in tree.items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k: v})
    return out


CASES = [pytest.param(False, "", "UTC", id="plain"),
         pytest.param(True, "", "America/Los_Angeles", id="partitioned-la"),
         pytest.param(False, "name", "UTC", id="mapped"),
         pytest.param(True, "name", "Asia/Kolkata", id="partitioned-mapped-kolkata")]


@pytest.mark.parametrize("partitioned,mapping,tz", CASES)
def test_local_files_match_spark_files(spark, table_path, partitioned, mapping, tz):
    with spark_conf(spark, {"spark.sql.session.timeZone": tz}):
        log = _create(spark, table_path, partitioned, mapping)
        df = _select(spark)
        rows = df.toArrow()
        assert _commit_local(spark, log, rows) == 1
        sqlext.write(df.coalesce(1), str(table_path), mode="append")   # one file per partition
        local, by_spark = _adds(log, 1), _adds(log, 2)
    assert sorted(local) == sorted(by_spark)
    assert len(local) == (3 if partitioned else 1)
    for key, add in local.items():
        other = by_spark[key]
        assert _flat(json.loads(add.stats)) == _flat(json.loads(other.stats)), key
        assert _footer(log, add) == _footer(log, other), key
        assert add.path.rpartition("/")[0] == other.path.rpartition("/")[0]
        name = add.path.rsplit("/", 1)[-1]
        assert name.startswith("part-00000-") and name.endswith(".c000.snappy.parquet")
        assert add.size > 0 and add.modification_time > 0 and add.data_change
    if partitioned:     # '' is NULL as a partition value, on either path
        ps = rows.column("ps")
        rows = rows.set_column(rows.column_names.index("ps"), "ps",
                               pc.if_else(pc.equal(ps, ""), pa.scalar(None, pa.string()), ps))
    assert_same_rows(sqlext.read(spark, str(table_path), versionAsOf=1), rows, sort_by=["id"])
    assert_same_rows(sqlext.read(spark, str(table_path), versionAsOf=2),
                     pa.concat_tables([rows, rows]), sort_by=["id"])
    assert_same_rows(read_deltalake(table_path, version=1), rows, sort_by=["id"])
    by_duckdb = read_duckdb(table_path, version=1)
    if partitioned and mapping:
        # DuckDB 1.5.5 reads a column-mapped partition column as NULL (Spark's files too: see
        # tests/engine/test_column_mapping_writes.py); the data columns are compared
        partitions = PARTITIONS.split(", ")
        by_duckdb, rows = by_duckdb.drop(partitions), rows.drop(partitions)
    assert_same_rows(by_duckdb, rows, sort_by=["id"])


def test_change_files_match_spark_change_files(spark, table_path):
    log = _create(spark, table_path, True, "name")
    df = _select(spark).selectExpr("*", "CASE WHEN id = 1 THEN 'insert' ELSE 'delete' END AS "
                                   "_change_type")
    snapshot = log.snapshot()
    local = write_change_files(spark, log, snapshot, df.toArrow())
    by_spark = write_files(spark, df, log, list(snapshot.partition_columns),
                           spark_schema(snapshot.metadata.schema_string), constraints=[],
                           kind="cdc", metadata=snapshot.metadata)
    assert sorted(json.dumps(c.partition_values, sort_keys=True) for c in local) == \
        sorted(json.dumps(w.partition_values, sort_keys=True) for w in by_spark)
    spark_files = {json.dumps(w.partition_values, sort_keys=True): w for w in by_spark}
    for cdc in local:
        other = spark_files[json.dumps(cdc.partition_values, sort_keys=True)]
        assert cdc.path.startswith("_change_data/") and "/cdc-00000-" in cdc.path
        assert cdc.path.rpartition("/")[0] == other.cdc().path.rpartition("/")[0]
        assert not cdc.data_change and cdc.size > 0
        assert _footer(log, cdc) == _footer(log, other.cdc())
        assert_same_rows(pq.read_table(log.data_path(cdc.path)),
                         pq.read_table(log.data_path(other.cdc().path)))


def test_spark_partition_text_is_spark_cast_to_string(spark):
    values = ["1E20D", "1E-5D", "0.001D", "1234567.0D", "12345678.0D", "-0.0D", "0.1D",
              "CAST('NaN' AS DOUBLE)", "CAST('-Infinity' AS DOUBLE)", "3.4E38F", "0.1F",
              "1.0E-4F"]
    with spark_conf(spark, {"spark.sql.session.timeZone": "America/Los_Angeles"}):
        out = spark.sql("SELECT " + ", ".join(f"{v} AS c{i}, CAST({v} AS STRING) AS s{i}"
                                              for i, v in enumerate(values))
                        + ", TIMESTAMP'2020-01-01 00:00:00.120Z' AS t,"
                        " CAST(TIMESTAMP'2020-01-01 00:00:00.120Z' AS STRING) AS st").collect()[0]
    for i, v in enumerate(values):
        type_name = "float" if v.endswith("F") else "double"
        assert spark_partition_text(out[f"c{i}"], type_name) == out[f"s{i}"], v
    assert spark_partition_text(out["t"], "timestamp", "America/Los_Angeles") == out["st"]


def test_rows_missing_a_column_are_refused(spark, table_path):
    log = _create(spark, table_path, False, "")
    rows = _select(spark).drop("d2").toArrow()
    with pytest.raises(LocalWriteError, match=r"table .*, version 0: the rows to write have no "
                                              r"column 'd2'"):
        write_local_files(spark, log, log.snapshot(), rows)
    assert log.snapshot().version == 0 and not any(table_path.glob("*.parquet"))
