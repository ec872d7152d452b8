"""DELETE and UPDATE of a few small files without a Spark job (issue 30).

The candidate files (already pruned by partition values and statistics) are read on the driver
(:mod:`sqlext.log.file_reader`: logical columns, partition values, deletion vectors applied) and
handed to Spark as local relations (:mod:`.relation`) holding only what Spark must evaluate:
the columns the condition reads, of every row, to find the matching rows; for UPDATE then the
matching rows, every column, for the new values (as delta-spark too evaluates the SET on
matching rows only). The other rows never leave Arrow; they are written back in their order.
An UPDATE of at most :data:`ONE_RELATION_ROWS` candidate rows hands Spark one relation of every
row instead, the condition and the SET evaluated together (the SET only where the condition
holds).
Spark evaluates the statement's own condition and SET columns, built by
:mod:`sqlext.engine.dml` exactly as for the Spark path
(:func:`~sqlext.engine.dml.rewrite.updating`, the table's constraints with
:func:`~sqlext.engine.constraints.enforce`), so analysis, casts, ANSI errors, CHECK and NOT NULL
constraints and generated columns mean the same (constraints are checked on the updated rows:
the copied ones are the table's, which met them when written); its optimizer folds the
projection into a local relation, and collecting that runs no job. Only files holding matching
rows are rewritten, with pyarrow on the driver (:mod:`.writer`); change data rows go to change files.

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
#: the row position column of a relation that carries none of the table's columns
POSITION = "__sqlext_local_row"
#: candidate rows up to which an UPDATE hands Spark one relation of every row (condition and
#: SET evaluated together; a second relation and its analysis cost more than they save there);
#: above it, the condition's columns of every row, then the matching rows
ONE_RELATION_ROWS = 2_000


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

    def frame(self, spark: SparkSession, alias: str | None, extra: list[tuple] = (),
              columns: frozenset[str] | None = None, take: np.ndarray | None = None
              ) -> DataFrame:
        """The rows as a local relation named as the statement names the table; ``extra``:
        (name, Arrow array, Spark type) columns after the table's. ``columns``: only the table's
        columns of these lowercased names (None: all); ``take``: only the rows at these
        indexes (None: all). Only what Spark evaluates need cross to the JVM."""
        table, schema = self.rows, self.schema
        if take is not None:
            table = table.take(pa.array(take, pa.int64()))
        if columns is not None:
            keep = [i for i, f in enumerate(schema.fields) if f.name.lower() in columns]
            table = table.select(keep)
            schema = T.StructType([schema.fields[i] for i in keep])
            if not keep:    # a relation needs a column to keep its row count
                extra = [(POSITION, pa.array(np.arange(table.num_rows), pa.int64()),
                          T.LongType())] + list(extra)
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


def _matching(spark: SparkSession, rows: Candidates, condition: Column, alias: str | None,
              references: frozenset[str] | None) -> np.ndarray | None:
    """``condition <=> true`` for each row as Spark evaluates it over a relation of only the
    columns the condition reads (``references``, lowercased; None: all): the same rows, the
    same values and errors, fewer bytes. None: Spark cannot evaluate it without a job."""
    frame = rows.frame(spark, alias, columns=references)
    flags = collect_arrow(frame.select(condition.eqNullSafe(F.lit(True)).alias(MATCHED)))
    return None if flags is None else true_mask(flags.column(MATCHED))


def delete_rows(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                candidates: list[AddFile], condition: Column, write_change_data: bool,
                alias: str | None = None, references: frozenset[str] | None = None
                ) -> Rewrite | None:
    """:func:`~sqlext.engine.dml.rewrite.delete_matching_rows` on the driver, or None when the
    statement is not for the driver path (see the module). ``references``: the lowercased
    names of the columns ``condition`` reads (None: all), the only ones Spark is handed."""
    if not supported(spark, log, snapshot, candidates):
        return None
    started = time.monotonic()
    rows = Candidates(log, snapshot, candidates)
    matched = _matching(spark, rows, condition, alias, references)
    if matched is None:
        return None
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


def _evaluated_update(snapshot: Snapshot, staged: DataFrame, matches: Column,
                      assignments: dict[str, Column], regenerate: tuple | None,
                      flag: str | None = None) -> pa.Table | None:
    """``staged``'s rows (those where ``matches`` is true updated) after the statement's SET,
    regenerated columns and the table's constraints, as
    :func:`~sqlext.engine.dml.rewrite.updating` builds them for the Spark path (with ``flag``:
    ``matches`` as a column of that name, after the others); None: Spark cannot evaluate it
    without a job."""
    output = updating(staged, matches, assignments, False, regenerate, flag=flag)
    schema = spark_schema(snapshot.metadata.schema_string)
    return collect_arrow(enforce(output, table_constraints(schema, snapshot.configuration)))


def _updated(spark: SparkSession, snapshot: Snapshot, rows: Candidates, at: np.ndarray,
             assignments: dict[str, Column], alias: str | None,
             regenerate: tuple | None) -> pa.Table | None:
    """The new values of the rows at indexes ``at`` (all the table's columns, in Spark's
    Arrow types), evaluated by Spark over those rows alone. The flag column marking them is
    data (all true), not a literal, so Spark analyses and types the output as over the whole
    file. None: Spark cannot evaluate it without a job."""
    flags = [(MATCHED, pa.array(np.ones(len(at), bool)), T.BooleanType())]
    staged = rows.frame(spark, alias, extra=flags, take=at)
    new = _evaluated_update(snapshot, staged, F.col(MATCHED), assignments, regenerate)
    return None if new is None else new.drop_columns([MATCHED])


def _updated_in_one_relation(spark: SparkSession, snapshot: Snapshot, rows: Candidates,
                             condition: Column, assignments: dict[str, Column],
                             alias: str | None, regenerate: tuple | None
                             ) -> tuple[np.ndarray, pa.Table] | None:
    """(which rows match, their new values) with the condition and the SET evaluated over one
    relation of every row: for a few rows one relation costs less than two. None: Spark
    cannot evaluate it without a job."""
    # the condition is evaluated in the update's projection (no projection of its own)
    out = _evaluated_update(snapshot, rows.frame(spark, alias), condition.eqNullSafe(True),
                            assignments, regenerate, flag=MATCHED)
    if out is None:
        return None
    matched = true_mask(out.column(MATCHED))
    return matched, out.filter(pa.array(matched)).drop_columns([MATCHED])


def _in_place(rows: pa.Table, at: np.ndarray, new: pa.Table) -> pa.Table:
    """``rows`` (cast to ``new``'s schema) with the rows at indexes ``at`` replaced by
    ``new``'s, in their order."""
    combined = pa.concat_tables([rows.cast(new.schema), new])
    order = np.arange(rows.num_rows)
    order[at] = rows.num_rows + np.arange(len(at))
    return combined.take(pa.array(order, pa.int64()))


def update_rows(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                candidates: list[AddFile], condition: Column | None,
                assignments: dict[str, Column], write_change_data: bool,
                alias: str | None = None, regenerate: tuple | None = None,
                references: frozenset[str] | None = None) -> Rewrite | None:
    """:func:`~sqlext.engine.dml.rewrite.update_matching_rows` on the driver, or None when the
    statement is not for the driver path (see the module). ``condition`` None: every row of
    the candidates matches; ``references``: the lowercased names of the columns it reads (None:
    all). Spark sees the condition's columns of every row, then the matching rows whole; the
    other rows stay Arrow here (a few rows: one relation of every row)."""
    if not supported(spark, log, snapshot, candidates):
        return None
    started = time.monotonic()
    rows = Candidates(log, snapshot, candidates)
    if condition is not None and rows.rows.num_rows <= ONE_RELATION_ROWS:
        found = _updated_in_one_relation(spark, snapshot, rows, condition, assignments, alias,
                                         regenerate)
        if found is None:
            return None
        matched, new = found
        at = np.flatnonzero(matched)
    else:
        matched = (np.ones(rows.rows.num_rows, bool) if condition is None
                   else _matching(spark, rows, condition, alias, references))
        if matched is None:
            return None
        at = np.flatnonzero(matched)
        new = _updated(spark, snapshot, rows, at, assignments, alias, regenerate) if len(at) \
            else rows.rows.slice(0, 0)
        if new is None:
            return None
    scan_ms = _ms_since(started)
    copied = rows.copied(matched)
    if _writes_an_empty_file(snapshot, matched, copied + len(at), write_change_data):
        return None
    changes, change_files = None, None
    if write_change_data:
        changes = pa.concat_tables([
            _with_change_type(rows.rows.take(pa.array(at, pa.int64())), "update_preimage"),
            _with_change_type(new.cast(rows.rows.schema), "update_postimage")])
        change_files = np.concatenate([rows.file_of_row[matched]] * 2)
    data = _in_place(rows.rows, at, new) if len(at) else rows.rows
    result = _write(spark, log, snapshot, rows, matched, data, np.ones(len(matched), bool),
                    changes, change_files)
    result.metrics = {"scanTimeMs": scan_ms, "rewriteTimeMs": _ms_since(started) - scan_ms,
                      "numUpdatedRows": len(at), "numCopiedRows": copied}
    return result
