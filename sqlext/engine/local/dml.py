"""DELETE and UPDATE of a few small files without a Spark job (issue 30).

The candidate files (already pruned by partition values and statistics) are read on the driver
(:mod:`sqlext.log.file_reader`: logical columns, partition values, deletion vectors applied) and
handed to Spark as one local relation (:mod:`.relation`). Spark evaluates the statement's own
condition and SET columns over it, built by :mod:`sqlext.engine.dml` exactly as for the Spark
path (:func:`~sqlext.engine.dml.rewrite.updating`, the table's constraints with
:func:`~sqlext.engine.constraints.enforce`), so analysis, casts, ANSI errors, CHECK and NOT NULL
constraints and generated columns mean the same; its optimizer folds the projection into a
local relation, and collecting that runs no job. Only files holding matching rows are
rewritten, with pyarrow on the driver (:mod:`.writer`); change data rows go to change files.

:func:`delete_rows` and :func:`update_rows` answer the same :class:`Rewrite` as
:func:`~sqlext.engine.dml.rewrite.delete_matching_rows` and
:func:`~sqlext.engine.dml.rewrite.update_matching_rows`, or None when the statement is not for
this path; the caller then runs the Spark path. Not for this path: Spark Connect sessions, tables
that keep stable row ids (row tracking) or have variant columns, more bytes than
:mod:`.policy` allows, and expressions Spark cannot fold over a local relation (a subquery, a
Python UDF): nothing is written before that is known.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine.constraints import enforce, table_constraints
from sqlext.engine.dml.rewrite import Rewrite, updating
from sqlext.engine.io.files import CHANGE_TYPE
from sqlext.engine.io.scan import stable_row_id_columns
from sqlext.engine.local import policy
from sqlext.engine.local.relation import collect_arrow, frame_from_arrow
from sqlext.engine.local.tasks import scan_tasks
from sqlext.engine.local.writer import write_local
from sqlext.engine.schemas import spark_schema
from sqlext.engine.session import is_connect
from sqlext.log.actions import AddFile
from sqlext.log.deletion_vectors import DeletionVectorReader
from sqlext.log.file_reader import read_logical
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog

#: the boolean column carrying ``condition <=> true`` through the local relation
MATCHED = "__sqlext_local_matched"


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def supported(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
              candidates: list[AddFile]) -> bool:
    """Whether a statement over ``candidates`` can run on the driver (session, table features,
    policy and size allow it)."""
    if is_connect(spark) or not candidates or stable_row_id_columns(snapshot) is not None:
        return False
    if '"variant"' in snapshot.metadata.schema_string:
        return False
    where = f"table {log.name}, version {snapshot.version}"
    return policy.use_driver(spark, sum(f.size or 0 for f in candidates), where)


def _as_nullable(schema: T.StructType) -> T.StructType:
    """``schema`` with every field, element and value nullable, as Spark reads data files (the
    Spark path's rows come from such a scan, so expressions are analysed the same way)."""
    text = schema.json()
    for key in ("nullable", "containsNull", "valueContainsNull"):
        text = text.replace(f'"{key}":false', f'"{key}":true')
    return T.StructType.fromJson(json.loads(text))


class Candidates:
    """The live rows of the candidate files as one Arrow table, with each row's file."""

    def __init__(self, log: DeltaLog, snapshot: Snapshot, files: list[AddFile]):
        self.files = files
        self.schema = _as_nullable(spark_schema(snapshot.metadata.schema_string))
        dvs = DeletionVectorReader.of(log)
        parts = [read_logical(log.location, f, snapshot.metadata, version=snapshot.version,
                              table=log.name, deletion_vectors=dvs) for f in files]
        self.rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        self.file_of_row = np.repeat(np.arange(len(files)), [p.num_rows for p in parts])

    def frame(self, spark: SparkSession, alias: str | None, extra: list[tuple] = ()
              ) -> DataFrame:
        """The rows as a local relation named as the statement names the table; ``extra``:
        (name, Arrow array, Spark type) columns after the table's."""
        table, schema = self.rows, self.schema
        for name, array, dtype in extra:
            table = table.append_column(name, array)
            schema = T.StructType(schema.fields + [T.StructField(name, dtype)])
        df = frame_from_arrow(spark, table, schema)
        return df.alias(alias) if alias else df

    def touched(self, matched: np.ndarray) -> np.ndarray:
        """The indexes of the files holding a matching row."""
        return np.unique(self.file_of_row[matched])

    def copied(self, matched: np.ndarray) -> int:
        """How many rows of the touched files do not match (the rows a rewrite copies)."""
        return int((np.isin(self.file_of_row, self.touched(matched)) & ~matched).sum())


def true_mask(array) -> np.ndarray:
    """A boolean Arrow array as a numpy mask, NULL as false."""
    return np.asarray(pc.fill_null(array, False).to_numpy(zero_copy_only=False), dtype=bool)


def _with_change_type(rows: pa.Table, kind: str) -> pa.Table:
    return rows.append_column(CHANGE_TYPE, pa.array([kind] * rows.num_rows, pa.string()))


def _write(spark: SparkSession, log: DeltaLog, snapshot: Snapshot, rows: Candidates,
           matched: np.ndarray, data: pa.Table, keep: np.ndarray, changes: pa.Table | None,
           change_file_of_row: np.ndarray | None) -> Rewrite:
    """Rewrite the files holding a matching row: the rows of ``data`` (aligned with
    ``rows.file_of_row``) where ``keep`` is true, and ``changes`` (their files in
    ``change_file_of_row``), written per read task of the Spark path (:mod:`.tasks`), each
    task's rows as one file per partition. Nothing is committed."""
    touched = rows.touched(matched)
    result = Rewrite([rows.files[i] for i in touched])
    for task in scan_tasks(spark, [rows.files[i].size or 0 for i in touched]):
        files = touched[task]
        kept = data.filter(pa.array(np.isin(rows.file_of_row, files) & keep))
        if kept.num_rows:
            result.added += write_local(spark, log, snapshot.metadata, kept, kind="data",
                                        version=snapshot.version)
        if changes is not None:
            mine = changes.filter(pa.array(np.isin(change_file_of_row, files)))
            if mine.num_rows:
                result.changes += write_local(spark, log, snapshot.metadata, mine, kind="cdc",
                                              version=snapshot.version)
    return result


def _writes_an_empty_file(snapshot: Snapshot, matched: np.ndarray, kept_rows: int,
                          write_change_data: bool) -> bool:
    """Whether the Spark path would write one empty data file: its write of an unpartitioned
    table that yields no row at all (every row of the touched files deleted) still writes one
    file, which this path does not imitate (it answers None then)."""
    return (bool(matched.any()) and kept_rows == 0 and not write_change_data
            and not snapshot.partition_columns)


def delete_rows(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                candidates: list[AddFile], condition: Column, write_change_data: bool,
                alias: str | None = None) -> Rewrite | None:
    """:func:`~sqlext.engine.dml.rewrite.delete_matching_rows` on the driver, or None when the
    statement is not for the driver path (see the module)."""
    if not supported(spark, log, snapshot, candidates):
        return None
    started = time.monotonic()
    rows = Candidates(log, snapshot, candidates)
    flags = collect_arrow(rows.frame(spark, alias).select(
        condition.eqNullSafe(F.lit(True)).alias(MATCHED)))
    if flags is None:
        return None
    matched = true_mask(flags.column(MATCHED))
    scan_ms = _ms_since(started)
    copied = rows.copied(matched)
    if _writes_an_empty_file(snapshot, matched, copied, write_change_data):
        return None
    changes, change_files = None, None
    if write_change_data:
        changes = _with_change_type(rows.rows.filter(pa.array(matched)), "delete")
        change_files = rows.file_of_row[matched]
    result = _write(spark, log, snapshot, rows, matched, rows.rows, ~matched, changes,
                    change_files)
    result.metrics = {"scanTimeMs": scan_ms, "rewriteTimeMs": _ms_since(started) - scan_ms,
                      "numDeletedRows": int(matched.sum()),
                      "numCopiedRows": copied}
    return result


def update_rows(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                candidates: list[AddFile], condition: Column | None,
                assignments: dict[str, Column], write_change_data: bool,
                alias: str | None = None, regenerate: tuple | None = None) -> Rewrite | None:
    """:func:`~sqlext.engine.dml.rewrite.update_matching_rows` on the driver, or None when the
    statement is not for the driver path (see the module). ``condition`` None: every row of
    the candidates matches."""
    if not supported(spark, log, snapshot, candidates):
        return None
    started = time.monotonic()
    rows = Candidates(log, snapshot, candidates)
    frame = rows.frame(spark, alias)
    matches = F.lit(True) if condition is None else condition.eqNullSafe(F.lit(True))
    # the condition is evaluated once: the flag column carries it to the data and change rows
    staged = frame.select("*", matches.alias(MATCHED))
    staged = staged.alias(alias) if alias else staged
    output = updating(staged, F.col(MATCHED), assignments, False, regenerate)
    schema = spark_schema(snapshot.metadata.schema_string)
    output = enforce(output, table_constraints(schema, snapshot.configuration))
    new = collect_arrow(output)
    if new is None:
        return None
    matched = true_mask(new.column(MATCHED))
    scan_ms = _ms_since(started)
    new = new.drop_columns([MATCHED])
    copied = rows.copied(matched)
    if _writes_an_empty_file(snapshot, matched, copied + int(matched.sum()), write_change_data):
        return None
    changes, change_files = None, None
    if write_change_data:
        changes = pa.concat_tables([
            _with_change_type(rows.rows.filter(pa.array(matched)), "update_preimage"),
            _with_change_type(new.filter(pa.array(matched)).cast(rows.rows.schema),
                              "update_postimage")])
        change_files = np.concatenate([rows.file_of_row[matched]] * 2)
    result = _write(spark, log, snapshot, rows, matched, new, np.ones(len(matched), bool),
                    changes, change_files)
    result.metrics = {"scanTimeMs": scan_ms, "rewriteTimeMs": _ms_since(started) - scan_ms,
                      "numUpdatedRows": int(matched.sum()), "numCopiedRows": copied}
    return result
