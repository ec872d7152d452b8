"""Reading a snapshot's files as one DataFrame, partition columns filled from the log.

Partition values come from ``partitionValues``, never from directory names: when the file names
are unique (sqlext and delta-spark name every file with a UUID), a broadcast join on Spark's
``_metadata.file_name`` attaches them (and any other per-file values a caller needs, such as a
change feed's commit version); files whose names repeat are read by separate scans, unioned.
"""

from __future__ import annotations

import inspect
import contextlib
import os
from collections import defaultdict
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.utils import AnalysisException as SparkAnalysisException

from sqlext.engine.schemas import data_schema, quote_identifier, spark_schema
from sqlext.engine.session import is_connect
from sqlext.errors import DeletionVectorError, DeltaFileNotFoundError, UnsupportedTableFeatureError
from sqlext.log import row_tracking
from sqlext.log.actions import AddFile
from sqlext.log.deletion_vectors import DeletionVectorReader
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.file_reader import ROW_INDEX_COLUMN
from sqlext.log.schema import partition_value as typed_value
from sqlext.log.snapshot import Snapshot
from sqlext.log.storage import is_local
from sqlext.log.table import DeltaLog

FILE_COLUMN = "__sqlext_file"
_NAME = "__sqlext_name"
_LISTING = "__sqlext_listing"
_ROW = "__sqlext_row"


def typed_partition_value(value, dt: T.DataType):
    """A partition value (the log's string) as the Python value Spark takes for type ``dt``
    (:func:`sqlext.log.schema.partition_value`)."""
    return typed_value(value, dt.typeName() if not isinstance(dt, T.DecimalType) else "decimal")


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


#: reader features whose files may hold shredded variants (a ``typed_value`` beside ``value``)
SHREDDING_FEATURES = ("variantShredding", "variantShredding-preview")


def check_shredded_variants_readable(log: DeltaLog, snapshot: Snapshot,
                                     spark_version: str | None = None) -> None:
    """Raise :class:`UnsupportedTableFeatureError` when the table may hold shredded variant files
    and this Spark (``spark_version``, default pyspark's) cannot rebuild them: Spark 4.0's
    parquet reader fails on them (a NullPointerException, even with
    ``spark.sql.variant.allowReadingShredded``); 4.1 and later read them."""
    if spark_version is None:
        import pyspark
        spark_version = pyspark.__version__
    used = [f for f in SHREDDING_FEATURES if f in (snapshot.protocol.reader_features or ())]
    if used and tuple(int(p) for p in spark_version.split(".")[:2]) < (4, 1):
        raise UnsupportedTableFeatureError(
            f"cannot read table {log.name} at version {snapshot.version}: it has the Delta table "
            f"feature {used[0]} (shredded variant files), which Spark {spark_version} cannot read; "
            "use pyspark 4.1 or later")


def scan(spark: SparkSession, log: DeltaLog, snapshot: Snapshot, files: list[AddFile] | None = None,
         with_file_column: bool = False, with_row_index: bool = False,
         stable_row_ids: tuple[str, str] | None = None) -> DataFrame:
    """The rows of ``files`` (default: all live files of ``snapshot``) in the table's schema.

    With ``with_file_column`` the DataFrame has a column ``__sqlext_file`` holding the file's
    action path, so that callers can tell which files hold which rows; with ``with_row_index``
    a last column ``__sqlext_row_index``, the row's position in its file (what a deletion
    vector marks). ``stable_row_ids`` (the materialized row id and row commit version column
    names of a table with row tracking, :func:`stable_row_id_columns`):
    two more columns of those names with each row's stable row id and row commit version (the
    materialized value, else the file's ``baseRowId`` + row position and its
    ``defaultRowCommitVersion``).
    """
    files = snapshot.files if files is None else files
    check_shredded_variants_readable(log, snapshot)
    check_files_exist(log, snapshot, files)
    schema = spark_schema(snapshot.metadata.schema_string)
    extra = [T.StructField(FILE_COLUMN, T.StringType(), False)] if with_file_column else []
    if stable_row_ids is not None:
        schema, extra = _with_row_tracking_fields(schema, extra, stable_row_ids)
    reads = [FileRead(f.path, f.partition_values,
                      ((f.path,) if with_file_column else ())
                      + (_row_tracking_values(f) if stable_row_ids is not None else ()),
                      f.deletion_vector)
             for f in files]
    # fresh row ids are baseRowId + the row's position
    row_index = with_row_index or stable_row_ids is not None
    try:
        mapping = ColumnMapping.of(snapshot.metadata)
        if mapping is not None:     # physical names in files and partition values
            from sqlext.engine.io.mapped_scan import read_mapped_files
            # the materialized columns carry no physical name: read by their own names
            df = read_mapped_files(spark, log, schema, snapshot.partition_columns, reads,
                                   mapping, extra, version=snapshot.version, row_index=row_index)
        else:
            df = read_files(spark, log, schema, snapshot.partition_columns, reads, extra,
                            version=snapshot.version, row_index=row_index)
        return df if stable_row_ids is None else _stable_row_id_frame(df, stable_row_ids,
                                                                      with_row_index)
    except SparkAnalysisException as exc:
        if "PATH_NOT_FOUND" not in str(exc):
            raise
        # a file vanished between the check above and Spark's listing: VACUUM ran meanwhile
        raise DeltaFileNotFoundError(
            f"table {log.name}, version {snapshot.version}: a data file of this version was "
            f"deleted while the read started (a concurrent VACUUM, or lost): "
            f"{str(exc).splitlines()[0][:300]}. Read again: the latest version, or a version "
            "within the table's delta.deletedFileRetentionDuration, is complete.") from exc


_BASE_ROW_ID = "__sqlext_base_row_id"
_DEFAULT_COMMIT_VERSION = "__sqlext_default_row_commit_version"


def stable_row_id_columns(snapshot: Snapshot) -> tuple[str, str] | None:
    """The materialized row id and row commit version column names when DML on the table
    preserves stable row ids (row tracking enabled); else None."""
    conf = snapshot.metadata.configuration
    if (not row_tracking.enabled(conf)
            or not row_tracking.assigns_row_ids(snapshot.protocol, snapshot.metadata)):
        return None
    names = (conf.get(row_tracking.ROW_ID_COLUMN_KEY),
             conf.get(row_tracking.COMMIT_VERSION_COLUMN_KEY))
    return names if all(names) else None


def _with_row_tracking_fields(schema: T.StructType, extra: list[T.StructField],
                              columns: tuple[str, str]
                              ) -> tuple[T.StructType, list[T.StructField]]:
    """The read's schema with the two materialized columns (NULL where a file lacks them), and
    its per-file columns with each file's ``baseRowId`` and ``defaultRowCommitVersion``."""
    row_id, commit_version = columns
    schema = T.StructType(list(schema.fields) + [T.StructField(row_id, T.LongType(), True),
                                                 T.StructField(commit_version, T.LongType(),
                                                               True)])
    return schema, extra + [T.StructField(_BASE_ROW_ID, T.LongType(), True),
                            T.StructField(_DEFAULT_COMMIT_VERSION, T.LongType(), True)]


def _row_tracking_values(f: AddFile) -> tuple:
    return (f.extra.get(row_tracking.BASE_ROW_ID), f.extra.get(row_tracking.DEFAULT_COMMIT_VERSION))


def _stable_row_id_frame(df: DataFrame, columns: tuple[str, str], with_row_index: bool
                         ) -> DataFrame:
    """``df`` with each row's stable row id and commit version in the materialized columns
    (the materialized value, else ``baseRowId`` + row position / ``defaultRowCommitVersion``)."""
    row_id, commit_version = columns
    df = (df.withColumn(row_id, F.coalesce(F.col(quote_identifier(row_id)),
                                           F.col(_BASE_ROW_ID) + F.col(ROW_INDEX_COLUMN)))
          .withColumn(commit_version, F.coalesce(F.col(quote_identifier(commit_version)),
                                                 F.col(_DEFAULT_COMMIT_VERSION))))
    drop = [_BASE_ROW_ID, _DEFAULT_COMMIT_VERSION] + ([] if with_row_index else
                                                      [ROW_INDEX_COLUMN])
    return df.drop(*drop)


@dataclass(frozen=True)
class FileRead:
    """One file to read: its action path, partition values, its values of the caller's extra
    per-file columns, and its deletion vector (the ``deletionVector`` of its action: rows not
    to read), if any."""

    path: str
    partition_values: dict[str, str | None]
    extras: tuple = ()
    deletion_vector: dict | None = None
    # (deletion vector A, deletion vector B or None): read only the rows A deletes and B does not
    # (a change feed's rows of a file whose deletion vector grew); ``deletion_vector`` is then None
    selection: tuple[dict, dict | None] | None = None


def read_files(spark: SparkSession, log: DeltaLog, schema: T.StructType,
               partition_columns: list[str], files: list[FileRead],
               extra_fields: list[T.StructField] = (), version: int | None = None,
               row_index: bool = False) -> DataFrame:
    """The rows of ``files`` with the columns of ``schema`` followed by ``extra_fields``.

    Partition columns take each file's partition value, the other columns of ``schema`` are read
    from the parquet files (NULL where a file lacks one), and each extra column takes the value
    the file's :class:`FileRead` gives it. All files are read by one parquet scan per set of
    distinct file names (normally one); a file listed several times (e.g. added in one version,
    removed in another) is read once and its rows come out once per listing.

    Files with a deletion vector are read apart (:func:`_read_by_row_index`), their deleted
    rows dropped by their parquet row index; the others are read as if there were none. A
    deletion vector that cannot be read raises :class:`DeletionVectorError` naming the table
    (and ``version``, the version read, when given). ``row_index``: a last column
    ``__sqlext_row_index`` holds each row's position in its file.
    """
    fields = list(schema.fields) + list(extra_fields)
    if row_index:
        fields.append(T.StructField(ROW_INDEX_COLUMN, T.LongType(), False))
    if not files:
        return empty_frame(spark, T.StructType(fields))
    if not any(f.deletion_vector or f.selection for f in files):
        return _read_listed(spark, log, schema, partition_columns, files, extra_fields, row_index)
    plain = [f for f in files if not (f.deletion_vector or f.selection)]
    try:
        parts = [_read_by_row_index(spark, log, schema, partition_columns, group, extra_fields,
                                    how, row_index)
                 for group, how in (([f for f in files if f.deletion_vector], "left_anti"),
                                    ([f for f in files if f.selection], "left_semi")) if group]
    except DeletionVectorError as exc:
        where = f"table {log.name}" + ("" if version is None else f", version {version}")
        raise DeletionVectorError(f"{where}: {exc}; the rows of that file cannot be told "
                                  "apart from deleted ones, so nothing was read") from exc
    if plain:
        parts.insert(0, _read_listed(spark, log, schema, partition_columns, plain, extra_fields,
                                     row_index))
    result = parts[0]
    for part in parts[1:]:
        result = result.unionByName(part)
    return result


#: Spark lists more root paths than this (its default) with a Spark job
_PARALLEL_LISTING_KEY = "spark.sql.sources.parallelPartitionDiscovery.threshold"
_PARALLEL_LISTING_DEFAULT = 32


def parquet_files(spark: SparkSession, schema: T.StructType, paths: list[str]) -> DataFrame:
    """``spark.read.schema(schema).parquet(*paths)``; local files are looked up on the driver.

    Spark lists more than 32 root paths with a Spark job (one task per path, to reach remote
    file systems in parallel) when the DataFrame is created: a table of a few hundred small
    files paid a whole job for ``stat`` calls a local file system answers in microseconds. For
    local paths the session's threshold is raised to their number for this call only; remote
    ones keep Spark's parallel listing."""
    with _listed_on_driver(spark, paths):
        return spark.read.schema(schema).parquet(*paths)


@contextlib.contextmanager
def _listed_on_driver(spark: SparkSession, paths: list[str]):
    if len(paths) <= _PARALLEL_LISTING_DEFAULT or not all(map(is_local, paths)):
        yield
        return
    previous = spark.conf.get(_PARALLEL_LISTING_KEY, None)
    if previous is not None and int(previous) >= len(paths):
        yield
        return
    spark.conf.set(_PARALLEL_LISTING_KEY, str(len(paths)))
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(_PARALLEL_LISTING_KEY)
        else:
            spark.conf.set(_PARALLEL_LISTING_KEY, previous)


def _read_listed(spark: SparkSession, log: DeltaLog, schema: T.StructType,
                 partition_columns: list[str], files: list[FileRead],
                 extra_fields: list[T.StructField], row_index: bool = False) -> DataFrame:
    """:func:`read_files` of files without deletion vectors."""
    fields = list(schema.fields) + list(extra_fields)
    out_cols = [quote_identifier(f.name) for f in fields]
    if row_index:
        out_cols.append(ROW_INDEX_COLUMN)
    stored = data_schema(schema, partition_columns)
    listings: dict[str, list[FileRead]] = defaultdict(list)
    for f in files:
        listings[log.data_path(f.path)].append(f)
    if not partition_columns and not extra_fields:
        # the stored columns are the table's, in its order
        df = parquet_files(spark, stored, list(listings))
        return df.select("*", F.col("_metadata.row_index").alias(ROW_INDEX_COLUMN)) \
            if row_index else df
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
        base = parquet_files(spark, stored, layer).withColumn(
            _NAME, F.col("_metadata.file_name"))
        if row_index:
            base = base.withColumn(ROW_INDEX_COLUMN, F.col("_metadata.row_index"))
        part = base.join(F.broadcast(mapping), _NAME).select(*out_cols)
        result = part if result is None else result.unionByName(part)
    return result


def _read_by_row_index(spark: SparkSession, log: DeltaLog, schema: T.StructType,
                       partition_columns: list[str], files: list[FileRead],
                       extra_fields: list[T.StructField], how: str,
                       row_index: bool = False) -> DataFrame:
    """:func:`read_files` of files with deletion vectors (``how="left_anti"``: the rows they do
    not delete) or with a selection (``how="left_semi"``: the selected rows). The parquet scan
    gives each row's file name and row index (``_metadata.row_index``, its position in the
    file); a broadcast join on the file name numbers the listings and attaches their per-file
    values, and a join on (listing, row index) with the rows the bitmaps name, decoded on the
    driver into a small two-column frame, drops or keeps them. No row reaches Python."""
    fields = list(schema.fields) + list(extra_fields)
    out_cols = [quote_identifier(f.name) for f in fields]
    if row_index:
        out_cols.append(F.col(_ROW).alias(ROW_INDEX_COLUMN))
    stored = data_schema(schema, partition_columns)
    listings: dict[str, list[tuple[int, FileRead]]] = defaultdict(list)
    for i, f in enumerate(files):
        listings[log.data_path(f.path)].append((i, f))
    marked = spark.createDataFrame(marked_rows_table(log, files))
    ptypes = {f.name.lower(): f.dataType for f in schema.fields}
    pfields = [T.StructField(c, ptypes[c.lower()]) for c in partition_columns]
    mapping_schema = T.StructType([T.StructField(_NAME, T.StringType(), False),
                                   T.StructField(_LISTING, T.IntegerType(), False), *pfields,
                                   *extra_fields])
    result = None
    for layer in _unique_name_layers(list(listings)):
        rows = [(os.path.basename(path), i, *[typed_partition_value(partition_value(f, c),
                                                                     ptypes[c.lower()])
                                              for c in partition_columns], *f.extras)
                for path in layer for i, f in listings[path]]
        mapping = local_frame(spark, rows, mapping_schema)
        base = parquet_files(spark, stored, layer).select(
            "*", F.col("_metadata.file_name").alias(_NAME),
            F.col("_metadata.row_index").alias(_ROW))
        part = (base.join(F.broadcast(mapping), _NAME)
                .join(marked, [_LISTING, _ROW], how).select(*out_cols))
        result = part if result is None else result.unionByName(part)
    return result


def marked_rows_table(log: DeltaLog, files: list[FileRead]):
    """A pyarrow table of the rows the files' bitmaps name (the rows their deletion vector
    deletes, or their selection): the file's position in ``files`` (``__sqlext_listing``) and the
    row index (``__sqlext_row``), one row each."""
    import numpy as np
    import pyarrow as pa

    listing_parts, row_parts = [], []
    load = DeletionVectorReader.of(log).load

    for i, f in enumerate(files):
        if f.selection:
            bitmap = load(f.selection[0]).difference(load(f.selection[1]))
        elif f.deletion_vector:
            bitmap = load(f.deletion_vector)
        else:
            continue
        rows = bitmap.row_index_array()
        row_parts.append(rows)
        listing_parts.append(np.full(len(rows), i, dtype=np.int32))
    listings = np.concatenate(listing_parts) if listing_parts else np.zeros(0, np.int32)
    rows = np.concatenate(row_parts) if row_parts else np.zeros(0, np.int64)
    return pa.table({_LISTING: pa.array(listings, pa.int32()), _ROW: pa.array(rows, pa.int64())})


def local_frame(spark: SparkSession, rows: list[tuple], schema: T.StructType) -> DataFrame:
    """A small DataFrame of ``rows`` held in the plan itself (a local relation, passed through
    Arrow) rather than an RDD of pickled Python rows, as ``createDataFrame`` of a list makes.
    Map values may be dicts. On pyspark 4.3 and later the Arrow rows are decoded in the JVM by
    Spark's ``ArrowConverters`` (:func:`sqlext.engine.local.relation.frame_from_arrow`: a
    few py4j round trips, where ``createDataFrame`` of Arrow makes about forty)."""
    import pyarrow as pa

    from sqlext.engine.local import policy, relation

    table = pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows],
                                 schema=arrow_schema(schema))
    if policy.AVAILABLE:
        return relation.frame_from_arrow(spark, table, schema)
    return spark.createDataFrame(table)


def empty_frame(spark: SparkSession, schema: T.StructType) -> DataFrame:
    """A DataFrame of no rows with ``schema`` (nullability and field metadata, such as column
    comments, kept): an empty local relation built in the JVM by three py4j calls. Spark's
    optimizer knows it is empty (a query over it needs no job), and no RDD comes from Python as
    with ``createDataFrame([], schema)``, which Spark Connect still uses."""
    if is_connect(spark):
        return spark.createDataFrame([], schema)
    jspark = spark._jsparkSession
    return DataFrame(jspark.createDataFrame(spark._jvm.java.util.ArrayList(),
                                            jspark.parseDataType(schema.json())), spark)


def arrow_schema(schema: T.StructType):
    """PySpark's Arrow schema for ``schema``, timestamps in UTC, on every PySpark 4.x:
    ``to_arrow_schema`` gained its ``timezone`` argument after 4.0 (4.0's maps timestamps to
    UTC by itself and raises TypeError when given one)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema)


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


def partition_value(f: AddFile, column: str, mapping: ColumnMapping | None = None):
    """A file's partition value for a column (matching the column name case-insensitively;
    ``mapping``: the table's column mapping, whose log keys the values by physical names)."""
    if mapping is not None:
        column = mapping.physical_name(column)
    if column in f.partition_values:
        return f.partition_values[column]
    for k, v in f.partition_values.items():
        if k.lower() == column.lower():
            return v
    return None
