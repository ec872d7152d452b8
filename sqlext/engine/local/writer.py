"""Driver-side Delta file writer: the rows of a small write, held in a ``pyarrow.Table``, become
parquet data files (or change data files) of a table without a Spark job, the same files
:func:`sqlext.engine.io.files.write_files` has Spark write.

Same as the Spark path: Hive-style partition directories with Spark's cast of each value to
text (in the session time zone for timestamps) and Hive's escapes, NULL and ``''`` as
``__HIVE_DEFAULT_PARTITION__``; ``partitionValues`` from those directory names by the Spark
path's own function; file names ``part-00000-<uuid>.c000.snappy.parquet`` (``cdc-`` under
``_change_data/``); column mapping's physical names with each struct field's id as its
``PARQUET:field_id``; parquet types as Spark's writer chooses them (decimals as INT32 / INT64 /
FIXED_LEN_BYTE_ARRAY by precision, timestamps as the session's
``spark.sql.parquet.outputTimestampType``, 3-level lists, ``key_value`` maps), each column
``required`` or ``optional`` as the rows' schema says (Spark takes it from the DataFrame);
Spark's footer metadata (``org.apache.spark.sql.parquet.row.metadata``,
``org.apache.spark.version``); snappy; statistics by the same footer reader
(:func:`sqlext.log.stats.stats_from_metadata`).
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import math
import os
import uuid
from decimal import Decimal
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from sqlext.engine.io.files import CHANGE_TYPE, WrittenFile, partition_values_of_dirs
from sqlext.errors import SqlextError
from sqlext.log import storage
from sqlext.log.actions import AddCDCFile, AddFile, Metadata
from sqlext.log.column_mapping import FIELD_ID_KEY, ColumnMapping, physical_name
from sqlext.log.layout import CHANGE_DATA_DIR, HIVE_NULL
from sqlext.log.manifest import escape_path_name
from sqlext.log.schema import Field, fields_of, parse_schema
from sqlext.log.stats import DEFAULT_NUM_INDEXED_COLS, stats_from_metadata
from sqlext.log.table import DeltaLog

ROW_METADATA_KEY = "org.apache.spark.sql.parquet.row.metadata"
SPARK_VERSION_KEY = "org.apache.spark.version"
_FIELD_ID = b"PARQUET:field_id"

_PRIMITIVES = {
    "string": pa.string(), "long": pa.int64(), "integer": pa.int32(), "short": pa.int16(),
    "byte": pa.int8(), "float": pa.float32(), "double": pa.float64(), "boolean": pa.bool_(),
    "binary": pa.binary(), "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
}


class LocalWriteError(SqlextError):
    """Rows that cannot be written as the table's files (a column missing or of a type that
    cannot be converted)."""


def write_local_files(spark: SparkSession, log: DeltaLog, snapshot, rows: pa.Table, *,
                      data_change: bool = True, metadata: Metadata | None = None) -> list[AddFile]:
    """Write ``rows`` as data files of the table and return their ``add`` actions (not committed).

    ``rows``: the table's logical columns, partition columns included, in any order, matched by
    name case-insensitively (struct fields too); each column's type is cast to the table's, its
    nullability (``required`` in the file when not nullable) kept, as the Spark writer keeps
    the DataFrame's. ``metadata``: the metadata the files are written under when it is not
    ``snapshot``'s (a commit that stages new metadata; ``snapshot`` may then be None)."""
    return [w.add(data_change) for w in
            write_local(spark, log, metadata or snapshot.metadata, rows, kind="data",
                        version=_version(snapshot))]


def write_change_files(spark: SparkSession, log: DeltaLog, snapshot, rows: pa.Table, *,
                       metadata: Metadata | None = None) -> list[AddCDCFile]:
    """Write ``rows`` (the table's logical columns plus ``_change_type``) as change data files
    under ``_change_data/`` and return their ``cdc`` actions, as the Spark path writes them."""
    return [w.cdc() for w in
            write_local(spark, log, metadata or snapshot.metadata, rows, kind="cdc",
                        version=_version(snapshot))]


def _version(snapshot) -> int | None:
    return snapshot.version if snapshot is not None else None


def write_local(spark: SparkSession, log: DeltaLog, metadata: Metadata, rows: pa.Table, *,
                kind: str = "data", version: int | None = None, tasks: int = 1,
                num_indexed_cols: int = DEFAULT_NUM_INDEXED_COLS) -> list[WrittenFile]:
    """The files of :func:`write_local_files` (``kind="data"``) or :func:`write_change_files`
    (``kind="cdc"``) as :class:`~sqlext.engine.io.files.WrittenFile` s, as ``write_files``
    returns them; no file for no rows. ``version``: the table version written over, named in
    errors. ``tasks``: the Spark path's write tasks over these rows (a local relation of n rows
    runs ``min(n, parallelism)``); the rows are sliced into them as Spark slices a local
    collection, each slice one file per partition (``part-<task>-...``), as Spark's tasks write."""
    mapped = ColumnMapping.of(metadata) is not None
    fields = parse_schema(metadata.schema_string)
    pcols = [next(f for f in fields if f.name.lower() == p.lower())
             for p in metadata.partition_columns]
    data_fields = [f for f in fields if f not in pcols]
    if kind == "cdc":
        data_fields = data_fields + [Field(CHANGE_TYPE, "string")]
    at = f"table {log.name}" + (f", version {version}" if version is not None else "")
    table = _conform_table(rows, data_fields, mapped, at)
    physical_pcols = [_stored_name(f, mapped) for f in pcols]
    session_tz = spark.conf.get("spark.sql.session.timeZone") or "UTC"
    int96 = str(spark.conf.get("spark.sql.parquet.outputTimestampType",
                               "TIMESTAMP_MICROS")).upper() == "INT96"
    stats_fields = parse_schema(json.dumps(_row_metadata(table.schema)))
    prefix = "cdc" if kind == "cdc" else "part"
    out: list[WrittenFile] = []
    try:
        for task, (start, end) in enumerate(_slices(rows.num_rows, tasks)):
            task_rows, task_table = rows.slice(start, end - start), table.slice(start, end - start)
            groups = _partition_groups(task_rows, pcols, session_tz, at)
            for dirs, indices in groups.items():
                part = (task_table.take(pa.array(indices, pa.int64())) if len(groups) > 1
                        else task_table)
                dir_names = [f"{escape_path_name(c)}="
                             f"{HIVE_NULL if v is None else escape_path_name(v)}"
                             for c, v in zip(physical_pcols, dirs)]
                name = f"{prefix}-{task:05d}-{uuid.uuid4()}.c000.snappy.parquet"
                rel = "/".join(([CHANGE_DATA_DIR] if kind == "cdc" else []) + dir_names + [name])
                data = _parquet_bytes(part, spark.version, int96)
                target = log.store.join(log.location, *rel.split("/"))
                mtime = _store(log, target, data)
                out.append(WrittenFile(rel, partition_values_of_dirs(
                    dir_names, physical_pcols, _types(pcols, physical_pcols), session_tz),
                    len(data), mtime, None))
                if kind == "data":
                    footer = pq.read_metadata(pa.BufferReader(data))
                    out[-1].stats = _without_nan_bounds(
                        stats_from_metadata(footer, stats_fields, num_indexed_cols), part)
    except BaseException:
        for written in out:     # nothing will commit them
            log.store.delete(log.store.join(log.location, *written.path.split("/")))
        raise
    return out


def _slices(length: int, tasks: int) -> list[tuple[int, int]]:
    """(start, end) of each task's rows, as Spark's ``ParallelCollectionRDD`` slices a local
    collection of ``length`` rows into ``tasks`` partitions."""
    tasks = max(1, min(tasks, length)) if length else 1
    return [(i * length // tasks, (i + 1) * length // tasks) for i in range(tasks)]


def _without_nan_bounds(stats: str, table: pa.Table) -> str:
    """``stats`` without the bounds of float and double columns holding a NaN: Spark's parquet
    writer records none for them, pyarrow's records the bounds of the other values."""
    nan_paths = [path for path in _float_leaves(table.schema, table.columns, ())
                 if path[1]]
    if not nan_paths:
        return stats
    parsed = json.loads(stats)
    for path, _ in nan_paths:
        for key in ("minValues", "maxValues"):
            _drop(parsed.get(key, {}), path)
    return json.dumps(parsed, separators=(",", ":"), ensure_ascii=False)


def _float_leaves(fields, arrays, prefix: tuple[str, ...]):
    """(path, holds a NaN) of every float/double column, struct fields included."""
    for f, array in zip(fields, arrays):
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if pa.types.is_struct(f.type):
            yield from _float_leaves(list(f.type), array.flatten(), prefix + (f.name,))
        elif pa.types.is_floating(f.type):
            yield prefix + (f.name,), bool(pc.any(pc.is_nan(array)).as_py())


def _drop(tree: dict, path: tuple[str, ...]) -> None:
    for part in path[:-1]:
        tree = tree.get(part)
        if not isinstance(tree, dict):
            return
    tree.pop(path[-1], None)


def _types(pcols: list[Field], physical: list[str]) -> dict[str, object]:
    return {p.lower(): f.type for f, p in zip(pcols, physical)}


def _stored_name(field: Field, mapped: bool) -> str:
    return physical_name(field.name, field.metadata) if mapped else field.name


def _store(log: DeltaLog, target: str, data: bytes) -> int:
    """Write one file; its modification time (ms)."""
    if storage.is_local(target):
        path = storage.normalize_location(target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return os.stat(path).st_mtime_ns // 1_000_000
    log.store.write(target, data)
    parent, _, name = target.rstrip("/").rpartition("/")
    return next(s.modification_time for s in log.store.list_dir(parent) if s.name == name)


def _parquet_bytes(table: pa.Table, spark_version: str, int96: bool) -> bytes:
    row_metadata = json.dumps(_row_metadata(table.schema), separators=(",", ":"))
    sink = io.BytesIO()
    # as Spark's writer: no ARROW:schema, its own two footer entries instead
    with pq.ParquetWriter(sink, table.schema, compression="snappy", store_schema=False,
                          use_compliant_nested_type=True, store_decimal_as_integer=True,
                          coerce_timestamps=None if int96 else "us",
                          use_deprecated_int96_timestamps=int96,
                          write_statistics=True) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata({ROW_METADATA_KEY: row_metadata,
                                       SPARK_VERSION_KEY: spark_version})
    return sink.getvalue()


# --- the rows in the table's parquet schema ------------------------------------------------------

def _conform_table(rows: pa.Table, fields: list[Field], mapped: bool, at: str) -> pa.Table:
    by_name = {n.lower(): i for i, n in enumerate(rows.column_names)}
    arrays, out_fields = [], []
    for f in fields:
        i = by_name.get(f.name.lower())
        if i is None:
            raise LocalWriteError(f"{at}: the rows to write have no column {f.name!r} (columns: "
                                  f"{rows.column_names}); pass every column of the table")
        column = rows.column(i).combine_chunks() if rows.num_rows else pa.array(
            [], rows.schema.field(i).type)
        array, arrow_field = _conform(column, rows.schema.field(i), f, mapped, at)
        arrays.append(array)
        out_fields.append(arrow_field)
    return pa.Table.from_arrays(arrays, schema=pa.schema(out_fields))


def _field(name: str, dtype: pa.DataType, nullable: bool, field: Field | None,
           mapped: bool) -> pa.Field:
    field_id = (field.metadata or {}).get(FIELD_ID_KEY) if (mapped and field) else None
    metadata = {_FIELD_ID: str(int(field_id)).encode()} if field_id is not None else None
    return pa.field(name, dtype, nullable, metadata)


def _conform(array: pa.Array, given: pa.Field, field: Field, mapped: bool, at: str
             ) -> tuple[pa.Array, pa.Field]:
    """``array`` (of ``given``) as the table's ``field`` stores it: physical names, field ids,
    the table's types, ``given``'s nullability."""
    converted = _convert(array, field.type, mapped, at, field.name)
    return converted, _field(_stored_name(field, mapped), converted.type, given.nullable,
                             field, mapped)


def _convert(array: pa.Array, dtype, mapped: bool, at: str, where: str) -> pa.Array:
    mask = array.is_null() if array.null_count else None
    if isinstance(dtype, dict) and dtype.get("type") == "struct":
        if not pa.types.is_struct(array.type):
            raise LocalWriteError(f"{at}: column {where} is a struct in the table but "
                                  f"{array.type} in the rows to write; cast it first")
        children = {array.type.field(i).name.lower(): (array.type.field(i), c)
                    for i, c in enumerate(array.flatten())}
        out, out_fields = [], []
        for child in fields_of(dtype):
            given, values = children.get(child.name.lower(), (None, None))
            if given is None:
                given, values = pa.field(child.name, pa.null()), pa.nulls(len(array))
            converted, arrow_field = _conform(values, given, child, mapped, at)
            out.append(converted)
            out_fields.append(arrow_field)
        return pa.StructArray.from_arrays(out, fields=out_fields, mask=mask)
    if isinstance(dtype, dict) and dtype.get("type") == "array":
        element = array.type.value_field
        values = _convert(array.values, dtype["elementType"], mapped, at, f"{where}.element")
        target = pa.list_(pa.field("element", values.type, element.nullable))
        return pa.ListArray.from_arrays(array.offsets, values, type=target, mask=mask)
    if isinstance(dtype, dict) and dtype.get("type") == "map":
        keys = _convert(array.keys, dtype["keyType"], mapped, at, f"{where}.key")
        items = _convert(array.items, dtype["valueType"], mapped, at, f"{where}.value")
        target = pa.map_(pa.field("key", keys.type, False),
                         pa.field("value", items.type, array.type.item_field.nullable))
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=target, mask=mask)
    target = _primitive(dtype, at, where)
    if pa.types.is_timestamp(array.type) and pa.types.is_timestamp(target) \
            and array.type.tz is None and target.tz is not None:
        array = array.cast(pa.timestamp(array.type.unit, tz="UTC"))  # naive: taken as UTC
    try:
        return array.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise LocalWriteError(f"{at}: column {where} ({array.type}) cannot be written as "
                              f"{dtype}: {e}; cast it to the table's type first") from e


def _primitive(dtype, at: str, where: str) -> pa.DataType:
    if isinstance(dtype, str) and dtype.startswith("decimal"):
        precision, scale = (int(x) for x in dtype[dtype.index("(") + 1:-1].split(","))
        return pa.decimal128(precision, scale)
    if isinstance(dtype, str) and dtype in _PRIMITIVES:
        return _PRIMITIVES[dtype]
    raise LocalWriteError(f"{at}: column {where} has type {dtype}, which the driver-side writer "
                          "does not write; use the Spark path (spark.sqlext.execution.local=off)")


def _row_metadata(schema: pa.Schema | pa.StructType) -> dict:
    """Spark's schema JSON of the file's columns (``org.apache.spark.sql.parquet.row.metadata``)."""
    return {"type": "struct", "fields": [_spark_field(f) for f in schema]}


def _spark_field(f: pa.Field) -> dict:
    field_id = (f.metadata or {}).get(_FIELD_ID)
    return {"name": f.name, "type": _spark_type(f.type), "nullable": f.nullable,
            "metadata": {"parquet.field.id": int(field_id)} if field_id is not None else {}}


def _spark_type(t: pa.DataType):
    if pa.types.is_struct(t):
        return _row_metadata(t)
    if pa.types.is_map(t):
        return {"type": "map", "keyType": _spark_type(t.key_type),
                "valueType": _spark_type(t.item_type),
                "valueContainsNull": t.item_field.nullable}
    if pa.types.is_list(t):
        return {"type": "array", "elementType": _spark_type(t.value_type),
                "containsNull": t.value_field.nullable}
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz else "timestamp_ntz"
    return next(name for name, p in _PRIMITIVES.items() if p == t)


# --- partition directories ----------------------------------------------------------------------

def _partition_groups(rows: pa.Table, pcols: list[Field], session_tz: str, at: str
                      ) -> dict[tuple, list[int]]:
    """Row indices per tuple of partition directory values (None: NULL or ''), in first-seen
    order; ``{(): all rows}`` for an unpartitioned table (none for no rows)."""
    if rows.num_rows == 0:
        return {}
    if not pcols:
        return {(): list(range(rows.num_rows))}
    by_name = {n.lower(): n for n in rows.column_names}
    columns = []
    for f in pcols:
        name = by_name.get(f.name.lower())
        if name is None:
            raise LocalWriteError(f"{at}: the rows to write have no partition column {f.name!r}")
        columns.append([spark_partition_text(v, f.type, session_tz)
                        for v in rows.column(name).to_pylist()])
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(zip(*columns)):
        groups.setdefault(key, []).append(i)
    return groups


def spark_partition_text(value, type_name, session_tz: str = "UTC") -> str | None:
    """A partition value as Spark's writer names its directory (before escaping): Spark's cast
    to string (timestamps in the session time zone, fractions without trailing zeros, doubles
    as Java prints them); None for NULL and for ''."""
    if value is None:
        return None
    if type_name == "boolean":
        return "true" if value else "false"
    if type_name in ("timestamp", "timestamp_ntz") and isinstance(value, _dt.datetime):
        if type_name == "timestamp":
            if value.tzinfo is None:
                value = value.replace(tzinfo=_dt.timezone.utc)
            value = value.astimezone(ZoneInfo(session_tz)).replace(tzinfo=None)
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")
    if type_name == "date" and isinstance(value, _dt.date):
        return value.isoformat()
    if type_name in ("float", "double"):
        return _java_double(float(value), type_name == "float")
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    text = str(value)
    return text or None


def _java_double(x: float, single: bool) -> str:
    """Java's ``Double.toString`` / ``Float.toString`` (how Spark casts them to strings)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1, x) < 0 else "0.0"
    digits = _float32_repr(x) if single else repr(x)
    sign = "-" if x < 0 else ""
    significant = Decimal(digits.lstrip("-"))
    if Decimal("1e-3") <= significant < Decimal("1e7"):
        text = format(significant, "f")
        return sign + (text if "." in text else text + ".0")
    sig_digits = list(significant.as_tuple().digits)
    while len(sig_digits) > 1 and sig_digits[-1] == 0:
        sig_digits.pop()
    tail = "".join(map(str, sig_digits[1:])) or "0"
    return f"{sign}{sig_digits[0]}.{tail}E{significant.adjusted()}"


def _float32_repr(x: float) -> str:
    """The shortest decimal text that reads back as the same 32-bit float."""
    for precision in range(1, 10):
        text = f"{x:.{precision}g}"
        if pa.scalar(float(text), pa.float32()).as_py() == pa.scalar(x, pa.float32()).as_py():
            return text
    return repr(x)
