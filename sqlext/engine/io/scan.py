"""Reading a snapshot's files as one DataFrame, partition columns filled from the log.

Partition values come from ``partitionValues``, never from directory names: when the file names
are unique (sqlext and delta-spark name every file with a UUID), a broadcast join on Spark's
``_metadata.file_name`` attaches them (and any other per-file values a caller needs, such as a
change feed's commit version); files whose names repeat are read by separate scans, unioned.
"""

from __future__ import annotations

import datetime as _dt
import inspect
import os
from collections import defaultdict
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.utils import AnalysisException as SparkAnalysisException

from sqlext.engine.schemas import data_schema, spark_schema
from sqlext.errors import DeltaFileNotFoundError
from sqlext.log.actions import AddFile
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.schema import parse_partition_value
from sqlext.log.snapshot import Snapshot
from sqlext.log.storage import is_local
from sqlext.log.table import DeltaLog

FILE_COLUMN = "__sqlext_file"
_NAME = "__sqlext_name"


def typed_partition_value(value, dt: T.DataType):
    """A partition value (the log's string) as the Python value Spark takes for type ``dt``."""
    v = parse_partition_value(value, dt.typeName() if not isinstance(dt, T.DecimalType) else "decimal")
    if isinstance(dt, T.TimestampType) and isinstance(v, _dt.datetime):
        return v.replace(tzinfo=_dt.timezone.utc)
    return v


def check_files_exist(log: DeltaLog, snapshot: Snapshot, files: list[AddFile]) -> None:
    """Raise :class:`DeltaFileNotFoundError` when a local data file of the snapshot is gone."""
    if not is_local(log.location):
        return
    for f in files:
        path = log.data_path(f.path)
        if not os.path.exists(path):
            raise DeltaFileNotFoundError(
                f"table {log.name}, version {snapshot.version}: data file {f.path} is missing "
                "(removed by VACUUM, or lost). Versions whose files were vacuumed can no longer be "
                "read; read a later version, or RESTORE from one that is complete.")


def scan(spark: SparkSession, log: DeltaLog, snapshot: Snapshot, files: list[AddFile] | None = None,
         with_file_column: bool = False) -> DataFrame:
    """The rows of ``files`` (default: all live files of ``snapshot``) in the table's schema.

    With ``with_file_column`` the DataFrame has a column ``__sqlext_file`` holding the file's
    action path, so that callers can tell which files hold which rows.
    """
    files = snapshot.files if files is None else files
    check_files_exist(log, snapshot, files)
    extra = [T.StructField(FILE_COLUMN, T.StringType(), False)] if with_file_column else []
    reads = [FileRead(f.path, f.partition_values, (f.path,) if with_file_column else ())
             for f in files]
    try:
        mapping = ColumnMapping.of(snapshot.metadata)
        if mapping is not None:     # physical names in files and partition values
            from sqlext.engine.io.mapped_scan import read_mapped_files
            return read_mapped_files(spark, log, spark_schema(snapshot.metadata.schema_string),
                                     snapshot.partition_columns, reads, mapping, extra)
        return read_files(spark, log, spark_schema(snapshot.metadata.schema_string),
                          snapshot.partition_columns, reads, extra)
    except SparkAnalysisException as exc:
        if "PATH_NOT_FOUND" not in str(exc):
            raise
        # a file vanished between the check above and Spark's listing: VACUUM ran meanwhile
        raise DeltaFileNotFoundError(
            f"table {log.name}, version {snapshot.version}: a data file of this version was "
            f"deleted while the read started (a concurrent VACUUM, or lost): "
            f"{str(exc).splitlines()[0][:300]}. Read again: the latest version, or a version "
            "within the table's delta.deletedFileRetentionDuration, is complete.") from exc


@dataclass(frozen=True)
class FileRead:
    """One file to read: its action path, partition values, and its values of the caller's
    extra per-file columns."""

    path: str
    partition_values: dict[str, str | None]
    extras: tuple = ()


def read_files(spark: SparkSession, log: DeltaLog, schema: T.StructType,
               partition_columns: list[str], files: list[FileRead],
               extra_fields: list[T.StructField] = ()) -> DataFrame:
    """The rows of ``files`` with the columns of ``schema`` followed by ``extra_fields``.

    Partition columns take each file's partition value, the other columns of ``schema`` are read
    from the parquet files (NULL where a file lacks one), and each extra column takes the value
    the file's :class:`FileRead` gives it. All files are read by one parquet scan per set of
    distinct file names (normally one); a file listed several times (e.g. added in one version,
    removed in another) is read once and its rows come out once per listing.
    """
    fields = list(schema.fields) + list(extra_fields)
    out_cols = [_quoted(f.name) for f in fields]
    if not files:
        return spark.createDataFrame([], T.StructType(fields))
    stored = data_schema(schema, partition_columns)
    listings: dict[str, list[FileRead]] = defaultdict(list)
    for f in files:
        listings[log.data_path(f.path)].append(f)
    if not partition_columns and not extra_fields:
        # the stored columns are the table's, in its order
        return spark.read.schema(stored).parquet(*listings)
    ptypes = {f.name.lower(): f.dataType for f in schema.fields}
    pfields = [T.StructField(c, ptypes[c.lower()]) for c in partition_columns]
    mapping_schema = T.StructType([T.StructField(_NAME, T.StringType(), False), *pfields,
                                   *extra_fields])
    result = None
    for layer in _unique_name_layers(list(listings)):
        rows = [(os.path.basename(path), *[typed_partition_value(partition_value(f, c),
                                                                  ptypes[c.lower()])
                                           for c in partition_columns], *f.extras)
                for path in layer for f in listings[path]]
        mapping = local_frame(spark, rows, mapping_schema)
        base = spark.read.schema(stored).parquet(*layer).withColumn(
            _NAME, F.col("_metadata.file_name"))
        part = base.join(F.broadcast(mapping), _NAME).select(*out_cols)
        result = part if result is None else result.unionByName(part)
    return result


def local_frame(spark: SparkSession, rows: list[tuple], schema: T.StructType) -> DataFrame:
    """A small DataFrame of ``rows`` held in the plan itself (a local relation, passed through
    Arrow) rather than an RDD of pickled Python rows, as ``createDataFrame`` of a list makes."""
    import pyarrow as pa

    table = pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows],
                                 schema=arrow_schema(schema))
    return spark.createDataFrame(table)


def arrow_schema(schema: T.StructType):
    """PySpark's Arrow schema for ``schema``, timestamps in UTC, on every PySpark 4.x:
    ``to_arrow_schema`` gained its ``timezone`` argument after 4.0 (4.0's maps timestamps to
    UTC by itself and raises TypeError when given one)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _unique_name_layers(paths: list[str]) -> list[list[str]]:
    """``paths`` split into as few lists as needed for file names to be unique within each (the
    rows of a file are matched to its listing by file name)."""
    layers: list[list[str]] = []
    names: list[set[str]] = []
    for path in paths:
        name = os.path.basename(path)
        for layer, taken in zip(layers, names):
            if name not in taken:
                layer.append(path)
                taken.add(name)
                break
        else:
            layers.append([path])
            names.append({name})
    return layers


def partition_value(f: AddFile, column: str):
    """A file's partition value for a column (matching the column name case-insensitively)."""
    if column in f.partition_values:
        return f.partition_values[column]
    for k, v in f.partition_values.items():
        if k.lower() == column.lower():
            return v
    return None
