"""Writing data files: Spark writes parquet into a private staging directory, then each file moves
to its Hive-style partition directory under the table with a unique name, and gets its ``add`` (or
``cdc``) action with statistics from its footer.

Staging keeps concurrent writers apart (Spark's file committer shares ``_temporary`` per output
directory) and means a failed write leaves no file where the table's data lives.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import re
import uuid
from dataclasses import dataclass
from urllib.parse import unquote
from zoneinfo import ZoneInfo

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine.constraints import Constraint, enforce
from sqlext.engine.io import storage_bridge
from sqlext.engine.io.mapped_scan import physical_field, physical_type
from sqlext.engine.schemas import quote_identifier, quoted_column, spark_schema
from sqlext.log.actions import AddCDCFile, AddFile, Metadata, encode_path
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.layout import CHANGE_DATA_DIR, HIVE_NULL, STAGING_DIR
from sqlext.log.schema import Field, parse_schema
from sqlext.log.stats import DEFAULT_NUM_INDEXED_COLS, file_stats
from sqlext.log.table import DeltaLog

_PART_NO = re.compile(r"^part-(\d+)")
CHANGE_TYPE = "_change_type"
# virtual first partition column of a ``kind="mixed"`` write: true for change rows (as delta-spark's
# ``__is_cdc``); its directory never reaches the table. No leading "_": listings skip those.
_IS_CHANGE = "sqlext__is_cdc"
# virtual outermost partition column of a write with ``group_column`` (renamed: no leading "_")
_GROUP = "sqlext__group"


@dataclass
class WrittenFile:
    path: str                       # relative to the table, not encoded
    partition_values: dict[str, str | None]
    size: int
    modification_time: int
    stats: str | None
    group: str | None = None        # the value of write_files' ``group_column`` of its rows

    def add(self, data_change: bool = True) -> AddFile:
        return AddFile(encode_path(self.path), self.partition_values, self.size,
                       self.modification_time, data_change, self.stats)

    def cdc(self) -> AddCDCFile:
        return AddCDCFile(encode_path(self.path), self.partition_values, self.size, False)

    @property
    def is_change_file(self) -> bool:
        """Whether this is a change data file (under ``_change_data/``)."""
        return self.path.startswith(CHANGE_DATA_DIR + "/")

    @property
    def num_records(self) -> int | None:
        return self.add().num_records


def partition_values_of_dirs(dirs: list[str], partition_columns: list[str],
                             types: dict[str, object], session_tz: str) -> dict[str, str | None]:
    """The ``partitionValues`` of a file in the Hive-style directories ``dirs`` (``c=v`` as
    Spark's writer names them; ``types`` by lowercased column name): timestamps turned from the
    session time zone to UTC, missing columns NULL."""
    values: dict[str, str | None] = {}
    for part in dirs:
        name, _, raw = part.partition("=")
        value = None if raw == HIVE_NULL else unquote(raw)
        col = next((c for c in partition_columns if c.lower() == unquote(name).lower()), None)
        if col is None:
            continue
        if value is not None and types.get(col.lower()) == "timestamp" and session_tz != "UTC":
            local = _dt.datetime.fromisoformat(value).replace(tzinfo=ZoneInfo(session_tz))
            utc = local.astimezone(_dt.timezone.utc).replace(tzinfo=None)
            value = utc.strftime("%Y-%m-%d %H:%M:%S") + (f".{utc.microsecond:06d}"
                                                         if utc.microsecond else "")
        values[col] = value
    for col in partition_columns:
        values.setdefault(col, None)
    return values


@contextlib.contextmanager
def _unsorted_if(spark: SparkSession, condition: bool):
    """With ``condition``, let each task keep a writer open per output directory instead of
    sorting its rows by the partition columns first (Spark's concurrent output writers).

    A mixed write of an unpartitioned table has two output directories (data and change rows);
    the sort it saves is a large share of a one-file DELETE. The setting is the session's, so it
    is set only for this write, and a value the user chose is left alone."""
    key = "spark.sql.maxConcurrentOutputFileWriters"
    if not condition or str(spark.conf.get(key, "0")) != "0":
        yield
        return
    spark.conf.set(key, "2")
    try:
        yield
    finally:
        spark.conf.unset(key)


@dataclass(frozen=True)
class FileWrite:
    """How :func:`write_table_files` turns a DataFrame into files of a table (the parameters of
    :func:`write_files`, which documents each)."""
    partition_columns: tuple[str, ...]
    table_schema: T.StructType
    constraints: tuple[Constraint, ...]
    kind: str = "data"
    num_indexed_cols: int = DEFAULT_NUM_INDEXED_COLS
    metadata: Metadata | None = None
    group_column: str | None = None


def write_files(spark: SparkSession, df: DataFrame, log: DeltaLog, partition_columns: list[str],
                table_schema: T.StructType, *, constraints: list[Constraint], kind: str = "data",
                num_indexed_cols: int = DEFAULT_NUM_INDEXED_COLS,
                metadata: Metadata | None = None,
                group_column: str | None = None) -> list[WrittenFile]:
    """Write ``df`` (whose columns are the table's, in any order, plus ``_change_type`` for
    ``kind="cdc"`` and ``kind="mixed"``) as parquet files of the table. Returns the files, not
    yet committed.

    ``kind="mixed"`` writes data and change rows in one Spark job, as delta-spark does: rows whose
    ``_change_type`` is NULL become data files (which then carry an all-NULL ``_change_type``
    column, ignored by readers, as delta-spark's do), the others change files; tell them apart
    with :attr:`WrittenFile.is_change_file`. One job means expressions are evaluated once per
    row, so data and change rows agree even for ``rand()`` or ``current_timestamp()``.

    ``constraints`` (:func:`sqlext.engine.constraints.table_constraints` of the table written)
    are checked on every data row by the same job (change rows are not checked): a violating
    row fails the job, the staged files are removed and nothing reaches the table. Pass an
    empty list only for rows already in the table (OPTIMIZE).

    ``metadata``: the table's metadata the files are written under (the snapshot's, or the one
    the same commit stages). When it has column mapping (``name`` mode), the files hold the
    physical names (nested struct fields too, each with its id as parquet field id), and
    ``partitionValues`` and statistics are keyed by physical names (:func:`physical_frame`);
    ``df``, ``partition_columns`` and ``table_schema`` stay logical.

    ``group_column``: a string column of ``df`` (not written) whose rows go to files of their
    own per value, each file's :attr:`WrittenFile.group` (e.g. the input file a row came from,
    so that the rewrite of a file that turns out unchanged can be discarded).
    """
    return write_table_files(spark, df, log, FileWrite(
        tuple(partition_columns), table_schema, tuple(constraints), kind, num_indexed_cols,
        metadata, group_column))


def write_table_files(spark: SparkSession, df: DataFrame, log: DeltaLog,
                      spec: FileWrite) -> list[WrittenFile]:
    """:func:`write_files` with its options in one :class:`FileWrite`: Spark writes the
    output frame (:func:`_output_frame`) into a private staging directory, then each file is
    moved into the table (:func:`_place`)."""
    staging = log.store.join(log.location, STAGING_DIR, uuid.uuid4().hex)
    df, partition_columns, table_schema, write_partitions = _output_frame(df, spec)
    hidden = len(write_partitions) > len(partition_columns)
    moved: list[str] = []    # files already in the table's directory, deleted if this fails
    try:
        with _unsorted_if(spark, hidden and not partition_columns):
            (df.write.mode("error").partitionBy(*write_partitions)
             .option("compression", "snappy").parquet(staging))
        fields = [f for f in parse_schema(table_schema.json())
                  if f.name.lower() not in {p.lower() for p in partition_columns}]
        if spec.kind == "cdc":
            fields = fields + [Field(CHANGE_TYPE, "string")]
        types = {f.name.lower(): f.type for f in parse_schema(table_schema.json())}
        session_tz = spark.conf.get("spark.sql.session.timeZone") or "UTC"
        out = []
        for rel, size, mtime in sorted(storage_bridge.list_files(spark, staging)):
            if not rel.endswith(".parquet"):
                continue
            target_rel, dirs, group_value, file_kind = _target(rel, spec)
            target = log.store.join(log.location, *target_rel.split("/"))
            storage_bridge.move_file(spark, log.store.join(staging, *rel.split("/")), target)
            moved.append(target)
            stats = file_stats(storage_bridge.open_for_footer(spark, target), fields,
                               spec.num_indexed_cols) if file_kind == "data" else None
            out.append(WrittenFile(target_rel, partition_values_of_dirs(dirs, partition_columns,
                                                                       types, session_tz),
                                   size, mtime, stats, group_value))
        return out
    except BaseException:
        # nothing will commit these files: leave the table's directory as it was
        for target in moved:
            storage_bridge.remove_tree(spark, target)
        raise
    finally:
        storage_bridge.remove_tree(spark, staging)
        # the shared parent too, unless a concurrent write is staging files in it
        storage_bridge.remove_empty_dir(spark, log.store.join(log.location, STAGING_DIR))


def _output_frame(df: DataFrame, spec: FileWrite
                  ) -> tuple[DataFrame, list[str], T.StructType, list[str]]:
    """What Spark's writer gets: ``df`` with the constraints checked, physical names under
    column mapping, data columns first, then the hidden partition columns (the group, the
    change-row marker of a mixed write), then the table's; and the partition columns, table
    schema and ``partitionBy`` list it is written with."""
    mixed, group_column = spec.kind == "mixed", spec.group_column
    partition_columns, table_schema = list(spec.partition_columns), spec.table_schema
    hidden = ([_GROUP] if group_column else []) + ([_IS_CHANGE] if mixed else [])
    if spec.kind != "cdc":
        df = enforce(df, list(spec.constraints),
                     F.col(CHANGE_TYPE).isNull() if mixed else None)
    if ColumnMapping.of(spec.metadata) is not None:
        df, partition_columns, table_schema = physical_frame(df, partition_columns,
                                                             spec.metadata)
        part_columns = list(partition_columns)
    else:
        part_columns = [next(c for c in df.columns if c.lower() == p.lower())
                        for p in partition_columns]
    data_columns = [c for c in df.columns if c != group_column
                    and c.lower() not in {p.lower() for p in partition_columns}]
    # SQL text of quoted names (fewer py4j round trips than a Column per name)
    marker = [f"{quote_identifier(CHANGE_TYPE)} IS NOT NULL AS {quote_identifier(_IS_CHANGE)}"
              ] if mixed else []
    group = [f"{quote_identifier(group_column)} AS {_GROUP}"] if group_column else []
    if marker or group or data_columns + part_columns != df.columns:
        df = df.selectExpr(*[quote_identifier(c) for c in data_columns], *group, *marker,
                           *[quote_identifier(c) for c in part_columns])
    return df, partition_columns, table_schema, hidden + list(partition_columns)


def _target(rel: str, spec: FileWrite) -> tuple[str, list[str], str | None, str]:
    """Where the staged file ``rel`` goes in the table: (its path there, its partition
    directories, its group value, its kind: "data" or "cdc")."""
    parts = rel.split("/")
    dirs, name = parts[:-1], parts[-1]
    file_kind, group_value = spec.kind, None
    if spec.group_column:
        raw = dirs[0].partition("=")[2]
        group_value = None if raw == HIVE_NULL else unquote(raw)
        dirs = dirs[1:]
    if spec.kind == "mixed":
        file_kind = "cdc" if dirs[0] == f"{_IS_CHANGE}=true" else "data"
        dirs = dirs[1:]
    m = _PART_NO.match(name)
    prefix = "cdc" if file_kind == "cdc" else "part"
    new_name = f"{prefix}-{int(m.group(1)) if m else 0:05d}-{uuid.uuid4()}.c000.snappy.parquet"
    target_rel = "/".join(([CHANGE_DATA_DIR] if file_kind == "cdc" else []) + dirs + [new_name])
    return target_rel, dirs, group_value, file_kind


def _physical_of(dtype: T.DataType, table_type: T.DataType) -> T.DataType:
    """``dtype`` (a column's type as the DataFrame has it) with its struct fields named as the
    table's type ``table_type`` names them physically, carrying their ids as parquet field ids;
    nullability stays the DataFrame's, so that a cast to it is always allowed."""
    if isinstance(dtype, T.StructType) and isinstance(table_type, T.StructType):
        known = {f.name.lower(): f for f in table_type.fields}
        out = []
        for f in dtype.fields:
            match = known.get(f.name.lower())
            if match is None:
                out.append(f)
                continue
            target = physical_field(match, match.dataType, True)
            out.append(T.StructField(target.name, _physical_of(f.dataType, match.dataType),
                                     f.nullable, target.metadata))
        return T.StructType(out)
    if isinstance(dtype, T.ArrayType) and isinstance(table_type, T.ArrayType):
        return T.ArrayType(_physical_of(dtype.elementType, table_type.elementType),
                           dtype.containsNull)
    if isinstance(dtype, T.MapType) and isinstance(table_type, T.MapType):
        return T.MapType(_physical_of(dtype.keyType, table_type.keyType),
                         _physical_of(dtype.valueType, table_type.valueType),
                         dtype.valueContainsNull)
    return dtype


def physical_frame(df: DataFrame, partition_columns: list[str], metadata: Metadata
                   ) -> tuple[DataFrame, list[str], T.StructType]:
    """``df`` (logical column names, any order, maybe extra columns such as ``_change_type``),
    ``partition_columns`` and the table's schema by their physical names under the column
    mapping of ``metadata``: each column of the table renamed (struct fields too, by a cast to
    the same type with physical field names, which carry their ids as parquet field ids) and
    aliased with its field id; other columns kept as they are."""
    mapping = ColumnMapping.of(metadata)
    schema = spark_schema(metadata.schema_string)
    by_name = {f.name.lower(): f for f in schema.fields}
    columns = []
    for column_field in df.schema.fields:
        name, dtype = column_field.name, column_field.dataType
        field = by_name.get(name.lower())
        if field is None:
            columns.append(quoted_column(name))
            continue
        target = physical_field(field, field.dataType, True)
        physical = _physical_of(dtype, field.dataType)
        column = quoted_column(name)
        if physical != dtype:
            column = column.cast(physical)
        columns.append(column.alias(target.name, metadata=target.metadata))
    table = T.StructType([physical_field(f, physical_type(f.dataType, True), True)
                          for f in schema.fields])
    return (df.select(*columns), [mapping.physical_name(c) for c in partition_columns], table)
