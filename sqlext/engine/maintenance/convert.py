"""Directories that already hold data: refusing to create a table over them, and CONVERT TO
DELTA, which adopts their parquet files as version 0 without rewriting them.

A new table is only created in a location that is empty (or missing) or that holds nothing but
sqlext's own files of a write in flight. Otherwise the files found would sit next to the table,
outside it, and VACUUM would judge them as files of the table: the error names them and says how
to adopt them (``CONVERT TO DELTA``) instead.
"""

from __future__ import annotations

import re
import time
from urllib.parse import unquote

from pyspark.sql import SparkSession
from pyspark.sql import types as T

from sqlext.engine.io import storage_bridge
from sqlext.engine.commit import commit
from sqlext.engine.table_metadata import session_defaults, stage_metadata
from sqlext.errors import AnalysisException, NonEmptyLocationError, SqlextError
from sqlext.log import operations as ops
from sqlext.log.actions import AddFile, Metadata, encode_path
from sqlext.log.layout import HIVE_NULL, STAGING_DIR
from sqlext.log.schema import parse_partition_value, parse_schema
from sqlext.log.stats import DEFAULT_NUM_INDEXED_COLS, file_stats
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import now_ms

OPERATION = ops.Convert.name
# the names sqlext gives data and change files (files.write_files); a concurrent sqlext writer
# creating the same table moves such files into place shortly before it commits version 0
_SQLEXT_FILE = re.compile(r"^(part|cdc)-\d{5}-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}"
                          r"\.c000\.snappy\.parquet$")
_IN_FLIGHT_MS = 3_600_000
_SHOWN = 5


def _walk(log: DeltaLog, limit: int) -> list[tuple[str, int]]:
    """Up to ``limit`` (relative path, mtime ms) of files under the table location that are not
    the log, sqlext's staging area or hidden (``.``/``_`` names, as Spark and Delta skip them)."""
    store, found, stack = log.store, [], [""]
    while stack and len(found) < limit:
        rel_dir = stack.pop()
        try:
            entries = store.list_dir(store.join(log.location, *rel_dir.split("/"))
                                     if rel_dir else log.location)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for e in sorted(entries, key=lambda e: e.name):
            if e.name.startswith((".", "_")) or e.name in ("_delta_log", STAGING_DIR):
                continue
            rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
            if e.is_dir:
                stack.append(rel)
            else:
                found.append((rel, e.modification_time))
    return found


def foreign_files(log: DeltaLog, limit: int = _SHOWN) -> list[str]:
    """Files in the location of a table that does not exist yet that sqlext did not just write
    there (up to ``limit``); empty when a table may be created."""
    now = int(time.time() * 1000)
    out = []
    for rel, mtime in _walk(log, 10_000):
        name = rel.rsplit("/", 1)[-1]
        if _SQLEXT_FILE.match(name) and now - mtime < _IN_FLIGHT_MS:
            continue                      # a concurrent sqlext writer creating this table
        out.append(rel)
        if len(out) >= limit:
            break
    return out


def require_empty_location(log: DeltaLog) -> None:
    """Raise :class:`NonEmptyLocationError` when a new table's location holds someone's files."""
    found = foreign_files(log)
    if not found:
        return
    shown = ", ".join(found)
    more = " and more" if len(found) >= _SHOWN else ""
    raise NonEmptyLocationError(
        f"table {log.name}: cannot create a Delta table at {log.location}: the directory is not "
        f"empty and is not a Delta table (no _delta_log commits). Files found: {shown}{more}. "
        "sqlext does not create a table over files it did not write. To make these parquet files "
        f"a table, run CONVERT TO DELTA parquet.`{log.location}` [PARTITIONED BY (col type, ...)]"
        f" (Python: sqlext.DeltaTable.convertToDelta(spark, \"parquet.`{log.location}`\")); "
        "otherwise use an empty location. Nothing was written.", table=log.name)


# --- CONVERT TO DELTA ---------------------------------------------------------------------------

_PARQUET_ID = re.compile(r"^\s*parquet\s*\.\s*`(.+)`\s*$", re.IGNORECASE | re.DOTALL)


def parquet_location(identifier: str) -> str:
    """The directory of ``parquet.`/dir```, as delta-spark's ``convertToDelta`` takes it."""
    m = _PARQUET_ID.match(identifier)
    if not m:
        raise SqlextError(f"CONVERT TO DELTA needs parquet.`/path/to/dir`, not {identifier!r}: "
                          "only directories of parquet files can be converted", table=identifier)
    return m.group(1).replace("``", "`")


def _partition_schema(schema) -> T.StructType:
    if schema is None:
        return T.StructType([])
    if isinstance(schema, T.StructType):
        return schema
    try:
        parsed = T.DataType.fromDDL(str(schema))
    except Exception as exc:  # noqa: BLE001 - pyspark raises parse errors of several kinds
        raise AnalysisException(f"CONVERT TO DELTA: cannot read the partition schema "
                                f"{schema!r}: {exc}; give it as 'col type, ...'") from exc
    if isinstance(parsed, T.StructType):
        return parsed
    raise AnalysisException(f"CONVERT TO DELTA: the partition schema {schema!r} is not a list of "
                            "'col type' pairs")


def _partition_values(log: DeltaLog, rel: str, pschema: T.StructType) -> dict[str, str | None]:
    """The partition values of a file from its ``col=value`` directories, checked against
    ``pschema`` (names in order, values of the column's type)."""
    dirs = rel.split("/")[:-1]
    names = [f.name for f in pschema.fields]
    if len(dirs) != len(names):
        raise AnalysisException(
            f"CONVERT TO DELTA {log.location}: file {rel} is {len(dirs)} directories deep, but "
            f"the partition schema has {len(names)} column(s) ({', '.join(names) or 'none'}). "
            "Give PARTITIONED BY (col type, ...) matching the col=value directories. Nothing "
            "was converted.", table=log.location)
    values: dict[str, str | None] = {}
    for part, field in zip(dirs, pschema.fields):
        key, eq, raw = part.partition("=")
        if not eq or unquote(key).lower() != field.name.lower():
            raise AnalysisException(
                f"CONVERT TO DELTA {log.location}: directory {part!r} of {rel} is not "
                f"{field.name}=<value>, as the partition schema says. Nothing was converted.",
                table=log.location)
        value = None if raw == HIVE_NULL else unquote(raw)
        try:
            parse_partition_value(value, field.dataType.typeName()
                                  if not isinstance(field.dataType, T.DecimalType) else "decimal")
        except ValueError as exc:
            raise AnalysisException(
                f"CONVERT TO DELTA {log.location}: partition value {value!r} of {rel} is not a "
                f"{field.dataType.simpleString()}. Nothing was converted.",
                table=log.location) from exc
        values[field.name] = value
    return values


def convert_to_delta(spark: SparkSession, location: str, partition_schema=None, *,
                     collect_stats: bool = True) -> int:
    """Make the parquet files under ``location`` version 0 of a Delta table, in place.

    The files are not rewritten: each becomes an ``add`` with statistics from its footer and,
    with ``partition_schema`` (a StructType or ``"col type, ..."``), partition values from its
    Hive-style ``col=value`` directories. The schema is Spark's merged schema of the files plus
    the partition columns. As in delta-spark, the table's properties are the session's defaults
    (``spark.databricks.delta.properties.defaults.*``) and nothing else: the change feed is off
    unless the session turns it on. A location that is already a Delta table is left as it is.
    Returns the table's version (0 after a conversion). ``collect_stats=False`` (SQL's ``NO
    STATISTICS``) leaves the statistics out.
    """
    log = DeltaLog(location)
    listing = log.listing()
    if listing.latest_version is not None:
        return listing.latest_version
    pschema = _partition_schema(partition_schema)
    files = sorted((rel.replace("\\", "/"), size, mtime)
                   for rel, size, mtime in storage_bridge.list_files(spark, log.location)
                   if not rel.replace("\\", "/").startswith(STAGING_DIR + "/"))
    if not files:
        raise AnalysisException(f"CONVERT TO DELTA {log.location}: no parquet files found there. "
                                "Nothing was converted.", table=log.location)
    others = [rel for rel, _, _ in files if not rel.endswith(".parquet")]
    if others:
        raise AnalysisException(
            f"CONVERT TO DELTA {log.location}: {len(others)} file(s) are not parquet files, e.g. "
            f"{', '.join(others[:_SHOWN])}; move them out of the directory first. Nothing was "
            "converted.", table=log.location)
    values = {rel: _partition_values(log, rel, pschema) for rel, _, _ in files}
    paths = [log.store.join(log.location, *rel.split("/")) for rel, _, _ in files]
    data_schema = spark.read.option("mergeSchema", "true").parquet(*paths).schema
    pnames = {f.name.lower() for f in pschema.fields}
    clash = [f.name for f in data_schema.fields if f.name.lower() in pnames]
    if clash:
        raise AnalysisException(f"CONVERT TO DELTA {log.location}: partition column(s) {clash} "
                                "are also columns of the parquet files. Nothing was converted.",
                                table=log.location)
    schema = T.StructType(list(data_schema.fields) + list(pschema.fields))
    fields = parse_schema(data_schema.json())
    adds = []
    for (rel, size, mtime), path in zip(files, paths):
        stats = file_stats(storage_bridge.open_for_footer(spark, path), fields,
                           DEFAULT_NUM_INDEXED_COLS) if collect_stats else None
        adds.append(AddFile(encode_path(rel), values[rel], size, mtime, True, stats))
    pcols = [f.name for f in pschema.fields]
    txn = log.start_transaction(None)
    stage_metadata(txn, Metadata.new(schema.json(), pcols, session_defaults(), now_ms()))
    done = ops.Convert(len(adds), tuple(pcols), bool(collect_stats))
    return commit(spark, txn, adds, done, metrics={"numConvertedFiles": len(adds)})

