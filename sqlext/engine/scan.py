"""Reading a snapshot's files as one DataFrame, partition columns filled from the log.

Partition values come from ``partitionValues``, never from directory names: when the file names
are unique (sqlext and delta-spark name every file with a UUID), a broadcast join on Spark's
``_metadata.file_name`` attaches them; otherwise each partition's files are read apart and unioned.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections import defaultdict

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine.schemas import data_schema, spark_schema
from sqlext.errors import DeltaFileNotFoundError
from sqlext.log.actions import AddFile
from sqlext.log.schema import parse_partition_value
from sqlext.log.snapshot import Snapshot
from sqlext.log.storage import is_local
from sqlext.log.table import DeltaLog

FILE_COLUMN = "__sqlext_file"


def _typed(value, dt: T.DataType):
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
    schema = spark_schema(snapshot.metadata.schema_string)
    pcols = snapshot.partition_columns
    stored = data_schema(schema, pcols)
    out_cols = [f"`{f.name.replace('`', '``')}`" for f in schema.fields]
    if with_file_column:
        out_cols.append(FILE_COLUMN)
    if not files:
        fields = list(schema.fields) + ([T.StructField(FILE_COLUMN, T.StringType())]
                                        if with_file_column else [])
        return spark.createDataFrame([], T.StructType(fields))
    check_files_exist(log, snapshot, files)
    paths = [log.data_path(f.path) for f in files]
    names = [os.path.basename(p) for p in paths]
    unique_names = len(set(names)) == len(names)
    if not pcols and not with_file_column:
        return spark.read.schema(stored).parquet(*paths).select(*out_cols)
    if unique_names:
        base = spark.read.schema(stored).parquet(*paths).withColumn(
            "__sqlext_name", F.col("_metadata.file_name"))
        ptypes = {f.name.lower(): f.dataType for f in schema.fields}
        pfields = [T.StructField(c, ptypes[c.lower()]) for c in pcols]
        mapping_schema = T.StructType([T.StructField("__sqlext_name", T.StringType(), False),
                                       T.StructField(FILE_COLUMN, T.StringType(), False), *pfields])
        rows = [(name, f.path, *[_typed(_pv(f, c), ptypes[c.lower()]) for c in pcols])
                for name, f in zip(names, files)]
        mapping = spark.createDataFrame(rows, mapping_schema)
        joined = base.join(F.broadcast(mapping), "__sqlext_name")
        return joined.select(*out_cols)
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, f in enumerate(files):
        groups[tuple(_pv(f, c) for c in pcols)].append(i)
    ptypes = {f.name.lower(): f.dataType for f in schema.fields}
    parts = []
    for key, idxs in groups.items():
        df = spark.read.schema(stored).parquet(*[paths[i] for i in idxs])
        for c, v in zip(pcols, key):
            df = df.withColumn(c, F.lit(_typed(v, ptypes[c.lower()])).cast(ptypes[c.lower()]))
        if with_file_column:
            lookup = F.create_map(*[x for i in idxs for x in (F.lit(names[i]), F.lit(files[i].path))])
            df = df.withColumn(FILE_COLUMN, lookup[F.col("_metadata.file_name")])
        parts.append(df.select(*out_cols))
    result = parts[0]
    for p in parts[1:]:
        result = result.unionByName(p)
    return result


def _pv(f: AddFile, column: str):
    """A file's partition value for a column (matching the column name case-insensitively)."""
    if column in f.partition_values:
        return f.partition_values[column]
    for k, v in f.partition_values.items():
        if k.lower() == column.lower():
            return v
    return None
