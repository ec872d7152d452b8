"""Reads of a few small files without a Spark job (issue 30): table reads (time travel too) and
change feed reads.

On the driver path the logical rows of the files a read selects (after pruning) are read on
the driver (:mod:`sqlext.log.file_reader`: partition values, column mapping, deletion vectors,
widened types) and handed to Spark as a local relation
(:func:`~sqlext.engine.local.relation.frame_from_arrow`) instead of a parquet scan. Spark's optimizer folds filters and projections over it, so collecting a small
``SELECT ... FROM t VERSION AS OF n WHERE ...`` runs no job. The files are read when the
DataFrame is built: the scan reads the same snapshot's files, so the rows are the same (unless
the files are vacuumed between building the DataFrame and running it: then this frame still
has the rows, where the scan would fail).

Taken under ``auto`` when the files hold at most ``localReadMaxBytes`` (256 KB: above that the
scan is cheaper) and a SQL query over them can run without a job (one table, projections,
filters, LIMIT: :mod:`sqlext.sql.plan_read`), and always under ``force``
(:mod:`sqlext.engine.local.policy`). The relation is handed to Spark below an ``OFFSET 0``
(:func:`_as_scan`), so a query over it means what it means over the scan. Not for this path
(the caller scans as before): Spark Connect sessions (the client may not see the files), files
whose size the log does not give, tables with variant columns, reads of no file, change feeds
reading parts of a file (a deletion vector that grew), and SQL statements that ask for a row's
file (``input_file_name()``, ``_metadata``: :mod:`sqlext.sql.plan_read`). Like the scan (whose
file-name join hides it), the frames offer no ``_metadata`` column.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from sqlext.engine.io.mapped_scan import logical_type
from sqlext.engine.io.scan import scan
from sqlext.engine.local import policy
from sqlext.engine.local.relation import frame_from_arrow
from sqlext.engine.schemas import spark_schema
from sqlext.engine.session import is_connect
from sqlext.log.actions import AddFile, Metadata
from sqlext.log.changes_plan import CHANGE_TYPE, ChangeFile, ChangePlan
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.deletion_vectors import DeletionVectorReader
from sqlext.log.file_reader import read_logical
from sqlext.log.schema import parse_schema
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog

def read_schema(schema: T.StructType) -> T.StructType:
    """The schema a scan of a table of ``schema`` gives: every field, element and value
    nullable (as Spark reads data files), no column mapping metadata."""
    text = logical_type(schema).json()
    for key in ("nullable", "containsNull", "valueContainsNull"):
        text = text.replace(f'"{key}":false', f'"{key}":true')
    return T.StructType.fromJson(json.loads(text))


def _on_driver(spark: SparkSession, metadata: Metadata, files: list, where: str,
               job_free: bool = True) -> bool:
    """Whether reading ``files`` (add or change files) takes the driver path
    (:func:`sqlext.engine.local.policy.use_driver` of their bytes); a query that runs a job
    over the rows anyway (not ``job_free``) takes it only under ``force``."""
    if is_connect(spark) or not files or '"variant"' in (metadata.schema_string or ""):
        return False
    sizes = [f.size for f in files]
    if not job_free or None in sizes:       # (a remove action need not give its size)
        return policy.mode(spark, where) == "force"
    return policy.use_driver(spark, sum(sizes), where, query=True)


def _as_scan(frame: DataFrame) -> DataFrame:
    """``frame`` (a local relation) below an ``OFFSET 0``, which Spark's optimizer removes only
    among its operator optimizations. Directly over a local relation, Spark evaluates a query's
    filters and projections on its rows before anything else (``ConvertToLocalRelation``, the
    optimizer's first batches), so ``SELECT CAST('x' AS INT) FROM t WHERE <no row>`` returned no
    row where the scan (and delta-spark) fails when folding the constant, and a filter above a
    subquery's failing projection ran after it instead of being pushed below it. Below the
    offset, constants are folded and filters pushed first, as over the scan; the relation is
    still evaluated without a job (the optimizer's last local-relation batch)."""
    return frame.offset(0)


def table_frame(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                files: list[AddFile] | None = None, on_driver: bool = True,
                job_free: bool = True) -> DataFrame:
    """The rows of ``files`` (default: the snapshot's) as :func:`~sqlext.engine.io.scan.scan`
    gives them: a local relation when they are small (see the module) and ``on_driver``, else
    the scan. ``job_free``: the query over them may run without a Spark job (else the driver
    path is taken only under ``force``)."""
    files = snapshot.files if files is None else files
    local = local_table_frame(spark, log, snapshot, files, job_free) if on_driver else None
    return local if local is not None else scan(spark, log, snapshot, files)


def local_table_frame(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                      files: list[AddFile], job_free: bool = True) -> DataFrame | None:
    """The rows of ``files`` as a local relation, or None when the read is not for the driver
    path (see the module and :func:`table_frame`)."""
    where = f"table {log.name}, version {snapshot.version}"
    if not _on_driver(spark, snapshot.metadata, files, where, job_free):
        return None
    dvs = DeletionVectorReader.of(log)
    parts = [read_logical(log.location, f, snapshot.metadata, version=snapshot.version,
                          table=log.name, deletion_vectors=dvs) for f in files]
    schema = read_schema(spark_schema(snapshot.metadata.schema_string))
    return _as_scan(frame_from_arrow(spark, pa.concat_tables(parts), schema))


def local_change_frame(spark: SparkSession, log: DeltaLog, plan: ChangePlan,
                       schema: T.StructType, change_fields: list[T.StructField]
                       ) -> DataFrame | None:
    """The recorded changes of ``plan`` (the table's columns of ``schema``, then
    ``change_fields``: change type, commit version, commit timestamp) as a local relation, or
    None when the read is not for the driver path (see the module)."""
    where = f"table {log.name}, versions {plan.start} to {plan.end}"
    if any(f.selection for f in plan.files) or not _on_driver(
            spark, plan.metadata, plan.files, where):
        return None
    dvs = DeletionVectorReader.of(log)
    layouts = _Layouts(plan.metadata)
    parts = [_change_rows(log, f, layouts.of(f), dvs) for f in plan.files]
    result = read_schema(T.StructType(schema.fields + change_fields))
    return _as_scan(frame_from_arrow(spark, pa.concat_tables(parts), result))


class _Layouts:
    """The metadata to read each change file with: the range's schema (with ``_change_type``
    for change data files), partitioned as the file is (a range may repartition the table: the
    file's ``partitionValues`` keys say which columns its rows take from the log)."""

    def __init__(self, metadata: Metadata):
        self.metadata = metadata
        mapping = ColumnMapping.of(metadata)
        fields = parse_schema(metadata.schema_string)
        # partition values are keyed by physical names in a column-mapped table
        self.names = {(mapping.physical_name(f.name) if mapping else f.name).lower(): f.name
                      for f in fields}
        self.known: dict[tuple, Metadata] = {}

    def of(self, f: ChangeFile) -> Metadata:
        """The metadata to read ``f`` with."""
        layout = tuple(sorted(self.names[k.lower()] for k in f.partition_values
                              if k.lower() in self.names))
        key = (layout, f.change_type is None)
        if key not in self.known:
            schema = json.loads(self.metadata.schema_string)
            if f.change_type is None:    # a change data file holds the change type
                schema["fields"] = schema["fields"] + [
                    {"name": CHANGE_TYPE, "type": "string", "nullable": True, "metadata": {}}]
            self.known[key] = dataclasses.replace(self.metadata, schema_string=json.dumps(schema),
                                                  partition_columns=list(layout))
        return self.known[key]


def _change_rows(log: DeltaLog, f: ChangeFile, metadata: Metadata,
                 dvs: DeletionVectorReader) -> pa.Table:
    """One file's change rows: the table's columns, ``_change_type`` (a change data file's own
    column, else the file's), commit version and commit time."""
    add = AddFile(f.path, f.partition_values, 0, 0, deletion_vector=f.deletion_vector)
    rows = read_logical(log.location, add, metadata, version=f.version, table=log.name,
                        deletion_vectors=dvs)
    if f.change_type is not None:
        rows = rows.append_column(CHANGE_TYPE, pa.array([f.change_type] * rows.num_rows,
                                                        pa.string()))
    when = _dt.datetime.fromtimestamp(f.timestamp / 1000, _dt.timezone.utc)
    n = rows.num_rows
    rows = rows.append_column("_commit_version", pa.array(np.full(n, f.version, np.int64)))
    return rows.append_column("_commit_timestamp",
                              pa.array([when] * n, pa.timestamp("us", tz="UTC")))
