"""Helpers for the DELETE / UPDATE tests: small tables, what DuckDB expects, what a commit did."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake
from pyspark.sql import types as T

import sqlext
from tests.support.table_checks import actions_of, commit_info, latest_version
from tests.support import deltalake_cdf, duckdb_query, duckdb_table, read_deltalake

SCHEMA = pa.schema([("id", pa.int64()), ("p", pa.int32()), ("s", pa.string()), ("v", pa.int64())])
SPARK_SCHEMA = T.StructType([T.StructField("id", T.LongType()), T.StructField("p", T.IntegerType()),
                             T.StructField("s", T.StringType()), T.StructField("v", T.LongType())])
CDF_ON = {"delta.enableChangeDataFeed": "true"}


def rows_table(rows: list[tuple]) -> pa.Table:
    """(id, p, s, v) tuples as a pyarrow table of :data:`SCHEMA`."""
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r)) for r in rows], schema=SCHEMA)


def spark_table(spark, path, rows: list[tuple], partition_by=None, files: int = 2,
                cdf: bool = True) -> int:
    """Write (id, p, s, v) rows with sqlext (Spark) in ``files`` chunks of consecutive ids, so
    that each file holds a known id range. Returns the version."""
    df = spark.createDataFrame(rows, SPARK_SCHEMA).repartitionByRange(files, "id")
    return sqlext.write(df, str(path), partitionBy=partition_by,
                        configuration=None if cdf else {"delta.enableChangeDataFeed": "false"})


def rs_table(path, chunks: list[list[tuple]], partition_by=None, cdf: bool = True) -> None:
    """Write (id, p, s, v) rows with delta-rs, one append per chunk (a file per partition each)."""
    for i, chunk in enumerate(chunks):
        write_deltalake(str(path), rows_table(chunk), mode="append", partition_by=partition_by,
                        configuration=(CDF_ON if cdf else None) if i == 0 else None)


def duckdb_after(before: pa.Table, statement: str) -> pa.Table:
    """The rows after DuckDB runs ``statement`` (with table ``t``) on the rows ``before``."""
    name = f"t_{uuid.uuid4().hex[:8]}"
    quoted = duckdb_table(name, before)
    duckdb_query(statement.replace("{t}", quoted))
    result = duckdb_query(f"SELECT * FROM {quoted}")
    duckdb_query(f"DROP TABLE {quoted}")
    return result


def run_and_expect(spark, path, condition: str, assignments: dict | None,
                   before: pa.Table) -> pa.Table:
    """Run ``DELETE`` (``assignments`` None) or ``UPDATE ... SET assignments`` with sqlext on the
    table at ``path`` and return what DuckDB's same statement leaves of the rows ``before``."""
    from sqlext import DeltaTable
    dt = DeltaTable.forPath(spark, str(path))
    if assignments is None:
        dt.delete(condition)
        return duckdb_after(before, f"DELETE FROM {{t}} WHERE {condition}")
    dt.update(condition, assignments)
    sets = ", ".join(f"{k} = {v}" for k, v in assignments.items())
    return duckdb_after(before, f"UPDATE {{t}} SET {sets} WHERE {condition}")


def duckdb_select(before: pa.Table, query: str) -> pa.Table:
    """``query`` (with table ``{t}``) run by DuckDB on the rows ``before``."""
    name = f"t_{uuid.uuid4().hex[:8]}"
    quoted = duckdb_table(name, before)
    result = duckdb_query(query.replace("{t}", quoted))
    duckdb_query(f"DROP TABLE {quoted}")
    return result


def with_change_type(table: pa.Table, change_type: str) -> pa.Table:
    return table.append_column("_change_type",
                               pa.array([change_type] * table.num_rows, pa.string()))


def expected_changes(before: pa.Table, after: pa.Table, condition: str, deleted: bool) -> pa.Table:
    """The change rows DELETE (``deleted``) or UPDATE with ``condition`` must record: the rows
    matching before as ``delete``, or as ``update_preimage`` plus the same ids after as
    ``update_postimage`` (ids are unique and never updated)."""
    matched = duckdb_select(before, f"SELECT * FROM {{t}} WHERE ({condition}) IS TRUE")
    if deleted:
        return with_change_type(matched, "delete")
    ids = matched.column("id").to_pylist()
    post = duckdb_select(after, f"SELECT * FROM {{t}} WHERE list_contains({ids!r}::BIGINT[], id)")
    return pa.concat_tables([with_change_type(matched, "update_preimage"),
                             with_change_type(post.select(matched.column_names),
                                              "update_postimage")])


def changes_of(path, version: int) -> pa.Table:
    """deltalake's change feed of one version, without the commit columns (strings as
    ``string``, not ``string_view``)."""
    cdf = deltalake_cdf(path, version, version).drop_columns(["_commit_version",
                                                             "_commit_timestamp"])
    schema = pa.schema([pa.field(f.name, pa.string()) if f.type == pa.string_view() else f
                        for f in cdf.schema])
    return cdf.cast(schema)


def operation(path, version: int) -> tuple[str, dict, dict]:
    """(operation, operationParameters, operationMetrics) of a commit."""
    info = commit_info(path, version)
    return info["operation"], info.get("operationParameters", {}), info.get("operationMetrics", {})


def file_actions(path, version: int) -> dict[str, list]:
    """The commit's remove / add / cdc actions' paths."""
    return {kind: sorted(a["path"] for a in actions_of(path, version, kind))
            for kind in ("remove", "add", "cdc")}


def live_files(path, version: int | None = None) -> list[dict]:
    """The snapshot's add actions (from sqlext's log replay)."""
    from sqlext.log.table import DeltaLog
    snapshot = DeltaLog(str(path)).snapshot(version)
    return [{"path": f.path, "partitionValues": f.partition_values, "stats": f.parsed_stats()}
            for f in snapshot.files]


def spoil_data_files(path) -> int:
    """Overwrite every data file's bytes with garbage (same names): any read of one fails.
    Returns how many files were spoiled."""
    n = 0
    for f in Path(path).rglob("*.parquet"):
        if "_delta_log" in f.parts or "_change_data" in f.parts:
            continue
        f.write_bytes(b"not a parquet file")
        n += 1
    return n


__all__ = ["SCHEMA", "actions_of", "changes_of", "expected_changes", "with_change_type", "commit_info", "duckdb_after", "duckdb_select",
           "file_actions", "latest_version", "live_files", "operation", "read_deltalake",
           "rows_table", "rs_table", "run_and_expect", "spark_table", "spoil_data_files"]
