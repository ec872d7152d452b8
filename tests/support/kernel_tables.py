"""Helpers for the kernel tests: tables built with ``sqlext.log`` alone (no Spark).

A table here is a protocol + metaData commit and ``add`` actions for small parquet files written
with pyarrow, with delta-spark-style statistics, so deltalake and DuckDB can read the rows back.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sqlext.log.cache import LOG_CACHE
from sqlext.log.actions import AddFile, Metadata, encode_path
from sqlext.log.protocol import protocol_for_new_table
from sqlext.log.schema import Field, format_partition_value, schema_string
from sqlext.log.table import DeltaLog

#: id long, name string, part string (the partition column)
SCHEMA = [Field("id", "long"), Field("name", "string"), Field("part", "string")]
#: change feed on, log retention one day: commits aged two days are expired for log cleanup
SHORT_RETENTION = {"delta.enableChangeDataFeed": "true", "delta.logRetentionDuration": "interval 1 day"}
ARROW = {"long": pa.int64(), "integer": pa.int32(), "string": pa.string(), "double": pa.float64(),
         "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"), "boolean": pa.bool_()}


def clear_caches() -> None:
    """Forget cached snapshots and commits, as a new process would."""
    LOG_CACHE.clear()


def create_table(path, schema=SCHEMA, partition_columns=("part",), configuration=None) -> DeltaLog:
    """Create an empty table (version 0) with the kernel; returns its DeltaLog."""
    conf = {"delta.enableChangeDataFeed": "true"} if configuration is None else dict(configuration)
    log = DeltaLog(str(path))
    txn = log.start_transaction()
    txn.update_protocol(protocol_for_new_table(conf))
    txn.update_metadata(Metadata.new(schema_string(list(schema)), list(partition_columns), conf,
                                     int(time.time() * 1000)))
    assert txn.commit([], "CREATE TABLE", {"isManaged": False}) == 0
    return log


def _stat(value):
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def write_file(log: DeltaLog, rows: list[dict], schema=SCHEMA, partition_columns=("part",),
               partition_values: dict | None = None) -> AddFile:
    """Write ``rows`` (data columns only) as a parquet file of the table; return its ``add``."""
    partition_values = dict(partition_values or {})
    data_fields = [f for f in schema if f.name not in partition_columns]
    arrow_schema = pa.schema([(f.name, ARROW[f.type]) for f in data_fields])
    table = pa.Table.from_pylist([{f.name: r.get(f.name) for f in data_fields} for r in rows],
                                 schema=arrow_schema)
    types = {f.name: f.type for f in schema}
    pv = {c: format_partition_value(partition_values.get(c), types[c]) for c in partition_columns}
    directory = "/".join(f"{c}={'__HIVE_DEFAULT_PARTITION__' if v is None else v}"
                         for c, v in pv.items())
    rel = (directory + "/" if directory else "") + f"part-00000-{uuid.uuid4()}.c000.snappy.parquet"
    full = Path(log.location) / rel
    full.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, full)
    mins, maxs, nulls = {}, {}, {}
    for f in data_fields:
        values = [r.get(f.name) for r in rows]
        present = [v for v in values if v is not None]
        nulls[f.name] = len(values) - len(present)
        if present and f.type != "boolean":
            mins[f.name], maxs[f.name] = _stat(min(present)), _stat(max(present))
    stats = {"numRecords": len(rows), "minValues": mins, "maxValues": maxs, "nullCount": nulls}
    return AddFile(encode_path(rel), pv, full.stat().st_size, int(time.time() * 1000), True,
                   json.dumps(stats, separators=(",", ":")))


def append(log: DeltaLog, rows: list[dict], part: str | None = "a", **commit_kwargs) -> int:
    """Blind-append one file of ``rows`` to partition ``part``; returns the committed version."""
    add = write_file(log, rows, partition_values={"part": part})
    txn = log.start_transaction()
    return txn.commit([add], "WRITE", {"mode": "Append"}, {"numFiles": 1,
                                                          "numOutputRows": len(rows)},
                      **commit_kwargs)


def log_files(path) -> list[str]:
    return sorted(os.listdir(Path(path) / "_delta_log"))


def log_bytes(path) -> dict[str, bytes]:
    """Every file of ``_delta_log`` with its content (to show a failed commit changed nothing)."""
    d = Path(path) / "_delta_log"
    return {name: (d / name).read_bytes() for name in sorted(os.listdir(d))}


def age_commits(path, days_ago: float, versions=None) -> None:
    """Give commit files (all, or those of ``versions``) an mtime ``days_ago`` days back, one
    second apart in version order, so that log cleanup sees them as expired."""
    log_dir = Path(path) / "_delta_log"
    names = sorted(n for n in os.listdir(log_dir) if n.endswith(".json") and not n.startswith(".")
                   and (versions is None or int(n[:20]) in versions))
    base = time.time() - days_ago * 86_400
    for i, name in enumerate(names):
        os.utime(log_dir / name, (base + i, base + i))
