"""OPTIMIZE t [WHERE <partition predicate>] [ZORDER BY (cols)], as delta-spark's OptimizeExecutor.

Compaction (bin-packing): the files smaller than the minimum size
(``spark.databricks.delta.optimize.minFileSize``, default: the target size) are grouped per
partition, smallest first, into bins of at most the target size (the table property
``delta.targetFileSize``, else ``spark.databricks.delta.optimize.maxFileSize``, default 1 GiB); each
bin of two or more files is rewritten as one file. Bins run as parallel Spark jobs
(``spark.databricks.delta.optimize.maxThreads``, default 15).

Z-ordering: every file of each selected partition is rewritten, its rows clustered along a
Z-order curve of the given columns. Each column is mapped to a range id: the number of boundary
values below the row's value, with up to 255 boundaries taken from a sample of the column
(NULLs get range 0); the ids' bits are interleaved into one long (8 bits per column, fewer when
more than 7 columns are given). Rows are range-partitioned on that value into
``ceil(partition size / target size)`` files and sorted within each file by it and then by the
columns themselves, so each output file covers a small box of the column space and min/max
statistics skip files for predicates on any of the columns.

Either way the commit has ``dataChange=false`` adds and removes (the change feed shows nothing)
and operation ``OPTIMIZE`` with delta-spark's parameters (``predicate``, ``zOrderBy``) and metrics
(``numAddedFiles``, ``numRemovedFiles``, ``numAddedBytes``, ``numRemovedBytes``, file size
percentiles). The transaction records only the files it rewrote as read: concurrent appends
never conflict with it (nor it with them); a concurrent DELETE/UPDATE/MERGE that removed one of
its files makes it fail with ``ConcurrentDeleteReadException``. No file to compact: no commit.

Deletion vectors: as delta-spark, compaction also takes a file whose deletion vector marks more
than ``spark.databricks.delta.optimize.maxDeletedRowsRatio`` (default 0.05) of its rows, even
alone in its bin, and rewrites it without the deleted rows. ``REORG TABLE t APPLY (PURGE)``
(:func:`optimize` with ``purge=True``, operation ``REORG``) rewrites every file with a deletion
vector.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine.progress import Progress
from sqlext.engine.commit import commit
from sqlext.engine.conditions import resolve_condition
from sqlext.engine.dml.command import begin, spark_job_errors, table_frame
from sqlext.engine.io.files import WrittenFile, write_files
from sqlext.engine.io.partitions import files_matching_partition_predicate
from sqlext.engine.dml.rewrite import total_records
from sqlext.engine.io.scan import partition_value, scan, stable_row_id_columns
from sqlext.engine.schemas import quoted_column, spark_schema
from sqlext.engine.session import parse_size
from sqlext.errors import AnalysisException, SqlextError
from sqlext.log import operations as ops
from sqlext.log.actions import AddFile
from sqlext.log.pruning import Pruner
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import now_ms

OPERATION = ops.Optimize.name
DEFAULT_MAX_FILE_SIZE = 1024 * 1024 * 1024
MAX_FILE_SIZE_CONF = "spark.databricks.delta.optimize.maxFileSize"
MIN_FILE_SIZE_CONF = "spark.databricks.delta.optimize.minFileSize"
MAX_THREADS_CONF = "spark.databricks.delta.optimize.maxThreads"
MAX_DELETED_ROWS_RATIO_CONF = "spark.databricks.delta.optimize.maxDeletedRowsRatio"
REORG_OPERATION = ops.Reorg.name
ZORDER_BITS = 8
ZORDER_SAMPLE_ROWS = 100_000

_SIZE_STATS = T.StructType([T.StructField("min", T.LongType()), T.StructField("max", T.LongType()),
                            T.StructField("avg", T.DoubleType()),
                            T.StructField("totalFiles", T.LongType()),
                            T.StructField("totalSize", T.LongType())])
RESULT_SCHEMA = T.StructType([
    T.StructField("path", T.StringType()),
    T.StructField("metrics", T.StructType([
        T.StructField("numFilesAdded", T.LongType()),
        T.StructField("numFilesRemoved", T.LongType()),
        T.StructField("filesAdded", _SIZE_STATS),
        T.StructField("filesRemoved", _SIZE_STATS),
        T.StructField("partitionsOptimized", T.LongType()),
        T.StructField("numBins", T.LongType()),
        T.StructField("numBatches", T.LongType()),
        T.StructField("totalConsideredFiles", T.LongType()),
        T.StructField("totalFilesSkipped", T.LongType()),
        T.StructField("zOrderBy", T.ArrayType(T.StringType())),
    ])),
])


@dataclass
class OptimizeResult:
    """What OPTIMIZE did: the version it committed (None: nothing to do), files, metrics."""

    location: str
    version: int | None
    removed: list[AddFile] = field(default_factory=list)
    added: list[AddFile] = field(default_factory=list)
    partitions_optimized: int = 0
    num_bins: int = 0
    considered: int = 0
    zorder_by: list[str] = field(default_factory=list)
    metrics: dict[str, int] = field(default_factory=dict)


# --- settings -----------------------------------------------------------------------------------


def file_sizes(spark: SparkSession, snapshot: Snapshot) -> tuple[int, int]:
    """(minimum size of a file left alone, target size of a compacted file) in bytes."""
    target = snapshot.properties.target_file_size
    max_size = parse_size(target if target is not None
                          else spark.conf.get(MAX_FILE_SIZE_CONF, str(DEFAULT_MAX_FILE_SIZE)))
    min_conf = spark.conf.get(MIN_FILE_SIZE_CONF, None)
    min_size = parse_size(min_conf) if min_conf is not None else max_size
    if max_size <= 0:
        raise SqlextError(f"OPTIMIZE: the target file size must be positive, not {max_size}")
    return min_size, max_size


# --- planning -----------------------------------------------------------------------------------


def _partition_key(f: AddFile, pcols: list[str]) -> tuple:
    """The file's partition: its values of ``pcols`` (a column-mapped table's log keys them by
    physical names, which all its files share: then the values as the log keys them)."""
    key = tuple(partition_value(f, c) for c in pcols)
    if pcols and all(v is None for v in key) and f.partition_values:
        return tuple(sorted((k.lower(), v) for k, v in f.partition_values.items()))
    return key


def deleted_ratio(f: AddFile) -> float:
    """The share of a file's rows its deletion vector deletes (0 without one or statistics)."""
    if not f.deletion_vector:
        return 0.0
    physical = (f.parsed_stats() or {}).get("numRecords")
    if not physical:
        return 0.0
    return int(f.deletion_vector.get("cardinality") or 0) / int(physical)


def plan_bins(files: list[AddFile], pcols: list[str], min_size: int, max_size: int,
              zorder: bool, max_deleted_ratio: float = 0.05) -> list[list[AddFile]]:
    """Groups of files, each rewritten as one job (delta-spark's ``groupFilesIntoBins``):
    compaction packs the small files of a partition, smallest first, into bins of at most
    ``max_size`` bytes and keeps the bins with two or more files, or with a file whose deletion
    vector deletes more than ``max_deleted_ratio`` of its rows (any size); z-ordering takes
    every file of a partition as one bin."""
    by_partition: dict[tuple, list[AddFile]] = {}

    def purged(f: AddFile) -> bool:
        return bool(f.deletion_vector) and deleted_ratio(f) > max_deleted_ratio

    for f in files:
        if zorder or f.size < min_size or purged(f):
            by_partition.setdefault(_partition_key(f, pcols), []).append(f)
    bins: list[list[AddFile]] = []
    for key in sorted(by_partition, key=lambda k: tuple((v is None, v or "") for v in k)):
        group = sorted(by_partition[key], key=lambda f: (f.size, f.path))
        if zorder:
            bins.append(group)
            continue
        current: list[AddFile] = []
        size = 0
        for f in group:
            if current and size + f.size > max_size:
                bins.append(current)
                current, size = [], 0
            current.append(f)
            size += f.size
        if current:
            bins.append(current)
    return [b for b in bins if zorder or len(b) > 1 or any(purged(f) for f in b)]


def _selected_files(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                    where) -> tuple[list[AddFile], str | None]:
    if where is None:
        return snapshot.files, None
    cond = resolve_condition(table_frame(spark, snapshot, None), where, log.name,
                             snapshot.version, OPERATION)
    pcols = snapshot.partition_columns
    if not cond.metadata_only(pcols):
        others = sorted(cond.references - {c.lower() for c in pcols})
        raise AnalysisException(
            f"table {log.name}, version {snapshot.version}: OPTIMIZE WHERE may refer to partition "
            f"columns only ({pcols or 'the table has none'}); {cond.sql!r} refers to {others}. "
            "The table is unchanged.", table=log.name, version=snapshot.version)
    candidates = (Pruner.of(cond.predicate, snapshot).prune(snapshot.files)
                  if cond.predicate is not None else snapshot.files)
    with spark_job_errors(log, snapshot, OPERATION):
        return files_matching_partition_predicate(spark, snapshot, candidates, cond.column), cond.sql


def _zorder_columns(log: DeltaLog, snapshot: Snapshot, columns) -> list[str]:
    names = {f.name.lower(): f.name for f in spark_schema(snapshot.metadata.schema_string).fields}
    pcols = {c.lower() for c in snapshot.partition_columns}
    out = []
    for c in columns:
        key = str(c).strip().strip("`").lower()
        if key not in names:
            raise AnalysisException(
                f"table {log.name}, version {snapshot.version}: cannot ZORDER BY {c!r}: no such "
                f"column (columns: {', '.join(names.values())}). The table is unchanged.",
                table=log.name, version=snapshot.version)
        if key in pcols:
            raise AnalysisException(
                f"table {log.name}, version {snapshot.version}: {names[key]!r} is a partition "
                "column; ZORDER BY works within partitions, so give data columns only. The "
                "table is unchanged.", table=log.name, version=snapshot.version)
        dtype = next(f.dataType for f in spark_schema(snapshot.metadata.schema_string).fields
                     if f.name == names[key])
        if isinstance(dtype, (T.StructType, T.ArrayType, T.MapType)):
            raise AnalysisException(
                f"table {log.name}, version {snapshot.version}: cannot ZORDER BY {names[key]!r} "
                f"of type {dtype.simpleString()}; give columns of atomic types. The table is "
                "unchanged.", table=log.name, version=snapshot.version)
        if names[key] not in out:
            out.append(names[key])
    return out


# --- z-order ------------------------------------------------------------------------------------


def _below(value: Column):
    """``b -> b < value`` for ``filter`` (a one-argument function, as pyspark requires)."""
    return lambda b: b < value


def _boundaries(df: DataFrame, column: str, rows: int | None, limit: int) -> list:
    """Up to ``limit`` increasing values splitting a sample of ``column`` into equal ranges."""
    fraction = 1.0 if not rows else min(1.0, ZORDER_SAMPLE_ROWS / rows)
    sample = df.select(quoted_column(column).alias("v")).where(F.col("v").isNotNull())
    if fraction < 1.0:
        sample = sample.sample(False, fraction, seed=17)
    values = sorted(r[0] for r in sample.limit(ZORDER_SAMPLE_ROWS).collect())
    if not values:
        return []
    picks = sorted({values[min(len(values) - 1, (i * len(values)) // (limit + 1))]
                    for i in range(1, limit + 1)})
    return picks


def zorder_frame(df: DataFrame, columns: list[str], num_files: int, rows: int | None) -> DataFrame:
    """``df`` range-partitioned into ``num_files`` partitions along a Z-order curve of
    ``columns`` and sorted within each (see the module doc)."""
    bits = max(1, min(ZORDER_BITS, 62 // len(columns)))
    types = {f.name: f.dataType for f in df.schema.fields}
    z = F.lit(0).cast("long")
    for j, c in enumerate(columns):
        bounds = _boundaries(df, c, rows, (1 << bits) - 1)
        if bounds:
            arr = F.array(*[F.lit(b).cast(types[c]) for b in bounds])
            rid = F.size(F.filter(arr, _below(quoted_column(c)))).cast("long")
        else:
            rid = F.lit(0).cast("long")
        for i in range(bits):
            bit = F.shiftright(rid, i).bitwiseAND(F.lit(1).cast("long"))
            z = z.bitwiseOR(F.shiftleft(bit, i * len(columns) + (len(columns) - 1 - j)))
    zcol = "__sqlext_zorder"
    out = df.withColumn(zcol, z).repartitionByRange(num_files, F.col(zcol))
    out = out.sortWithinPartitions(F.col(zcol), *[quoted_column(c) for c in columns])
    return out.drop(zcol)


# --- the command --------------------------------------------------------------------------------


def _rewrite_bin(spark: SparkSession, log: DeltaLog, snapshot: Snapshot, files: list[AddFile],
                 zorder_by: list[str], max_size: int) -> list[WrittenFile]:
    schema = spark_schema(snapshot.metadata.schema_string)
    # rows keep their stable row ids and commit versions when the table tracks them
    df = scan(spark, log, snapshot, files, stable_row_ids=stable_row_id_columns(snapshot))
    if zorder_by:
        num_files = max(1, math.ceil(sum(f.size for f in files) / max_size))
        df = zorder_frame(df, zorder_by, num_files, total_records(files))
    else:
        df = df.coalesce(1)
    # the rows are the table's own, already checked when they were written
    written = write_files(spark, df, log, snapshot.partition_columns, schema, constraints=[],
                          metadata=snapshot.metadata)
    before, after = total_records(files), total_records([w.add() for w in written])
    if before is not None and after is not None and before != after:
        raise SqlextError(f"table {log.name}, version {snapshot.version}: OPTIMIZE read {before} "
                          f"rows but wrote {after}; nothing was committed",
                          table=log.name, version=snapshot.version)
    return written


def _size_stats(sizes: list[int]) -> tuple:
    if not sizes:
        return (None, None, 0.0, 0, 0)
    return (min(sizes), max(sizes), sum(sizes) / len(sizes), len(sizes), sum(sizes))


def optimize(spark: SparkSession, log: DeltaLog, where=None, zorder_by=None,
             purge: bool = False) -> OptimizeResult:
    """Compact (or, with ``zorder_by``, z-order) the files of the table, or of the partitions
    matching ``where`` (a SQL string or Column on partition columns); see the module doc.
    ``purge``: ``REORG TABLE ... APPLY (PURGE)``, rewrite the files with deletion vectors."""
    operation = REORG_OPERATION if purge else OPERATION
    txn, snapshot = begin(log, None, operation, removes_data=False)
    zorder = _zorder_columns(log, snapshot, zorder_by) if zorder_by else []
    files, where_sql = _selected_files(spark, log, snapshot, where)
    min_size, max_size = file_sizes(spark, snapshot)
    pcols = snapshot.partition_columns
    if purge:
        files = [f for f in files if f.deletion_vector]
    max_ratio = -1.0 if purge else float(spark.conf.get(MAX_DELETED_ROWS_RATIO_CONF, "0.05"))
    bins = plan_bins(files, pcols, min_size, max_size, bool(zorder), max_ratio)
    result = OptimizeResult(log.location, None, considered=len(files), zorder_by=zorder,
                            num_bins=len(bins),
                            partitions_optimized=len({_partition_key(b[0], pcols) for b in bins}))
    if not bins:
        result.metrics = {"numAddedFiles": 0, "numRemovedFiles": 0}
        return result
    progress = Progress(spark, operation, log.name)
    progress(f"rewriting {sum(len(b) for b in bins)} of {len(files)} file(s) in {len(bins)} "
             "bin(s)")
    threads = max(1, int(spark.conf.get(MAX_THREADS_CONF, "15")))
    with spark_job_errors(log, snapshot, OPERATION):
        with ThreadPoolExecutor(max_workers=min(threads, len(bins))) as pool:
            outputs = list(pool.map(
                lambda b: _rewrite_bin(spark, log, snapshot, b, zorder, max_size), bins))
    removed = [f for b in bins for f in b]
    added = [w.add(data_change=False) for out in outputs for w in out]
    txn.read_files(removed)
    txn.row_ids_preserved = stable_row_id_columns(snapshot) is not None
    ts = now_ms()
    actions = [f.remove(ts, data_change=False) for f in removed] + added
    sizes = sorted(a.size for a in added)
    n = len(sizes)
    metrics = {"numAddedFiles": n, "numRemovedFiles": len(removed),
               "numAddedBytes": sum(sizes), "numRemovedBytes": sum(f.size for f in removed),
               "minFileSize": sizes[0] if sizes else 0, "p25FileSize": sizes[n // 4] if n else 0,
               "p50FileSize": sizes[n // 2] if n else 0,
               "p75FileSize": sizes[n * 3 // 4] if n else 0,
               "maxFileSize": sizes[-1] if sizes else 0,
               "numDeletionVectorsRemoved": sum(1 for f in removed if f.deletion_vector),
               "numDeletionVectorRowsRemoved": sum(int(f.deletion_vector.get("cardinality") or 0)
                                                   for f in removed if f.deletion_vector)}
    done = ops.Reorg(where_sql) if purge else ops.Optimize(where_sql, tuple(zorder))
    progress(f"committing {len(added)} new file(s), removing {len(removed)}")
    result.version = commit(spark, txn, actions, done, metrics=metrics)
    progress(f"committed version {result.version}")
    result.removed, result.added, result.metrics = removed, added, metrics
    return result


def result_frame(spark: SparkSession, result: OptimizeResult) -> DataFrame:
    """OPTIMIZE's result as delta-spark returns it: ``path`` and a ``metrics`` struct."""
    added = [a.size for a in result.added]
    removed = [f.size for f in result.removed]
    row = (result.location, (len(added), len(removed), _size_stats(added), _size_stats(removed),
                             result.partitions_optimized, result.num_bins, result.num_bins,
                             result.considered, result.considered - len(removed),
                             list(result.zorder_by)))
    return spark.createDataFrame([row], RESULT_SCHEMA)
