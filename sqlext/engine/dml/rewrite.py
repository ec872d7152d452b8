"""The touched-files pattern shared by DELETE, UPDATE, MERGE and ``replaceWhere``: find the files
that really hold rows matching a condition, and rewrite only those.

Building blocks: :func:`count_matches` (one scan: which candidates hold matching rows, how many),
:func:`deleting` / :func:`updating` (the rewritten rows, with their change rows), and
:func:`rewrite_files` (one Spark job writing data and change files for the touched files).
:func:`delete_matching_rows` and :func:`update_matching_rows` combine them; MERGE can build its
own output DataFrame and call :func:`rewrite_files`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from sqlext.engine import codegen
from sqlext.engine.constraints import table_constraints
from sqlext.engine.generated import recompute_generated
from sqlext.engine.io import storage_bridge
from sqlext.engine.io.files import CHANGE_TYPE, WrittenFile, write_files
from sqlext.engine.schemas import quote_identifier, quoted_column
from sqlext.engine.io.scan import FILE_COLUMN, scan, stable_row_id_columns
from sqlext.engine.schemas import spark_schema
from sqlext.log.actions import AddFile
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog


@dataclass
class Rewrite:
    """The outcome of rewriting touched files: what to remove, add and record as changes."""

    removed: list[AddFile] = field(default_factory=list)
    added: list[WrittenFile] = field(default_factory=list)
    changes: list[WrittenFile] = field(default_factory=list)
    metrics: dict[str, int] = field(default_factory=dict)
    # the rows copied or updated kept their stable row ids and (copied) row commit versions
    row_ids_preserved: bool = False


def scan_rows(spark: SparkSession, log: DeltaLog, snapshot: Snapshot, files: list[AddFile],
              alias: str | None = None, with_file_column: bool = False,
              stable_row_ids: tuple[str, str] | None = None) -> DataFrame:
    """The rows of ``files``, aliased as the statement names the table (for ``t.col``); with
    ``stable_row_ids``, also their materialized row tracking columns
    (:func:`sqlext.engine.io.scan.scan`), which the rewritten files then carry."""
    df = scan(spark, log, snapshot, files, with_file_column=with_file_column,
              stable_row_ids=stable_row_ids)
    return df.alias(alias) if alias else df


def count_matches(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                  candidates: list[AddFile], condition: Column,
                  alias: str | None = None) -> dict[str, int]:
    """``{action path: rows where condition is true}`` for the candidate files holding any such
    row (one Spark scan of the candidates)."""
    if not candidates:
        return {}
    df = scan_rows(spark, log, snapshot, candidates, alias, with_file_column=True)
    rows = df.filter(condition.eqNullSafe(F.lit(True))).groupBy(FILE_COLUMN).count().collect()
    return {r[0]: r[1] for r in rows}


def total_records(files: list[AddFile]) -> int | None:
    total = 0
    for f in files:
        n = f.num_records
        if n is None:
            return None
        total += n
    return total


def rewrite_files(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                  touched: list[AddFile], output: DataFrame, with_changes: bool) -> Rewrite:
    """Replace the ``touched`` files by the rows of ``output``, in one Spark job.

    ``output`` has the table's columns and, ``with_changes``, ``_change_type``: rows where it is
    NULL are the new data, the others go to ``_change_data/`` as change rows (one job, so data
    and change rows come from the same evaluation of every expression). Nothing is committed.
    """
    schema = spark_schema(snapshot.metadata.schema_string)
    written = write_files(spark, output, log, snapshot.partition_columns, schema,
                          constraints=table_constraints(schema, snapshot.configuration),
                          kind="mixed" if with_changes else "data",
                          metadata=snapshot.metadata)
    return Rewrite(list(touched), [w for w in written if not w.is_change_file],
                   [w for w in written if w.is_change_file])


def deleting(rows: DataFrame, matches: Column, with_changes: bool) -> DataFrame:
    """The output (see :func:`rewrite_files`) that deletes the rows where ``matches`` is true:
    the other rows are kept, the deleted ones become ``delete`` change rows."""
    if with_changes:
        return rows.withColumn(CHANGE_TYPE, F.when(matches, F.lit("delete")))
    return rows.filter(~matches)


def updating(rows: DataFrame, matches: Column, assignments: dict[str, Column],
             with_changes: bool, regenerate: tuple | None = None,
             flag: str | None = None) -> DataFrame:
    """The output (see :func:`rewrite_files`) that updates the rows where ``matches`` is true:
    ``assignments`` (column name -> value of the table's type, computed from the old row) replace
    their columns; with changes, each updated row also yields its ``update_preimage`` and
    ``update_postimage`` change rows. Rows that do not match are copied unchanged.

    ``regenerate`` (table schema, generated column names) recomputes those generated columns
    from the updated row (:func:`sqlext.engine.generated.recompute_generated`).

    ``flag`` (without changes only): the output also has ``matches`` as a column of that name,
    after the others."""
    names = rows.columns
    matched = "__sqlext_matched"
    new = {name: f"__sqlext_new_{i}" for i, name in enumerate(assignments)}
    # new values are computed in their own projection, once per row: the data row and the
    # postimage then agree even for non-deterministic values ("*": ``names``, in one Column)
    staged = rows.select(F.col("*"), matches.alias(matched),
                         *[F.when(matches, v).alias(new[c]) for c, v in assignments.items()])
    if regenerate and regenerate[1]:
        after = [F.when(F.col(matched), F.col(new[c])).otherwise(quoted_column(c)).alias(c)
                 if c in new else quoted_column(c) for c in names]
        old = {c: f"__sqlext_old_{i}" for i, c in enumerate(names)}
        staged = staged.select(*after, F.col(matched),
                               *[quoted_column(c).alias(old[c]) for c in names])
        staged = recompute_generated(staged, regenerate[0],
                                     {g: F.col(matched) for g in regenerate[1]})
        after = [quoted_column(c) for c in names]
        if not with_changes:
            return staged.select(*after, *([F.col(matched).alias(flag)] if flag else []))
        before = [F.col(old[c]).alias(c) for c in names]
        return _update_images(staged, matched, before, after)
    # the output expressions as SQL text (only quoted column names and fixed literals), parsed
    # by one py4j call each: built from Column functions they took a few round trips a column
    after = [f"CASE WHEN `{matched}` THEN `{new[c]}` ELSE {quote_identifier(c)} END AS "
             f"{quote_identifier(c)}" if c in new else quote_identifier(c) for c in names]
    if not with_changes:
        return staged.selectExpr(*after, *([f"`{matched}` AS {quote_identifier(flag)}"]
                                           if flag else []))
    before = [f"{quote_identifier(c)} AS {quote_identifier(c)}" for c in names]
    kind = quote_identifier(CHANGE_TYPE)
    data = f"struct({', '.join(after)}, CAST(NULL AS STRING) AS {kind})"
    pre = f"struct({', '.join(before)}, 'update_preimage' AS {kind})"
    post = f"struct({', '.join(after)}, 'update_postimage' AS {kind})"
    return staged.selectExpr(f"inline(CASE WHEN `{matched}` THEN array({data}, {pre}, {post}) "
                             f"ELSE array({data}) END)")


def _update_images(staged: DataFrame, matched: str, before: list[Column], after: list[Column]
                   ) -> DataFrame:
    """Each row as its data row and, where ``matched``, its pre- and postimage change rows."""
    data = F.struct(*after, F.lit(None).cast("string").alias(CHANGE_TYPE))
    pre = F.struct(*before, F.lit("update_preimage").alias(CHANGE_TYPE))
    post = F.struct(*after, F.lit("update_postimage").alias(CHANGE_TYPE))
    return staged.select(F.inline(F.when(F.col(matched), F.array(data, pre, post))
                                  .otherwise(F.array(data))))


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _added_records(rewrite: Rewrite) -> int | None:
    return total_records([w.add() for w in rewrite.added])


def _rewrite_matching(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                      candidates: list[AddFile], condition: Column | None, alias: str | None,
                      output, with_changes: bool) -> tuple[Rewrite, int | None, int | None]:
    """Rewrite the candidates holding rows where ``condition`` is true (all candidates when it
    is None) with ``output(rows, matches)``. Returns the rewrite (with its timings), the number
    of matching rows (None when not counted) and the number of data rows written (None when a
    written file has no statistics).

    A single candidate (a narrow condition on well-clustered data) is rewritten straight away,
    its matches counted by the same Spark job, and the new files are discarded when it held
    none: one job instead of a scan to find the file and a second one to rewrite it. Few small
    candidates are read and rewritten without code generation (:mod:`sqlext.engine.codegen`).
    """
    with codegen.interpreted_when_small(spark, sum(f.size or 0 for f in candidates)):
        return _rewrite_candidates(spark, log, snapshot, candidates, condition, alias, output,
                                   with_changes)


def _rewrite_candidates(spark, log, snapshot, candidates, condition, alias, output,
                        with_changes) -> tuple[Rewrite, int | None, int | None]:
    started = time.monotonic()
    if condition is not None and len(candidates) == 1:
        return _rewrite_single(spark, log, snapshot, candidates, condition, alias, output,
                               with_changes, started)
    if condition is None:
        touched, matched, matches = list(candidates), None, F.lit(True)
    else:
        counts = count_matches(spark, log, snapshot, candidates, condition, alias)
        touched = [f for f in candidates if f.path in counts]
        matched, matches = sum(counts.values()), condition.eqNullSafe(F.lit(True))
    scan_ms = _ms_since(started)
    result, written = Rewrite(), 0
    if touched:
        stable = stable_row_id_columns(snapshot)
        rows = scan_rows(spark, log, snapshot, touched, alias, stable_row_ids=stable)
        result = rewrite_files(spark, log, snapshot, touched, output(rows, matches), with_changes)
        result.row_ids_preserved = stable is not None
        written = _added_records(result)
    result.metrics = {"scanTimeMs": scan_ms, "rewriteTimeMs": _ms_since(started) - scan_ms}
    return result, matched, written


def _rewrite_single(spark, log, snapshot, candidates, condition, alias, output, with_changes,
                    started) -> tuple[Rewrite, int, int | None]:
    matches = condition.eqNullSafe(F.lit(True))
    observed = Observation()
    stable = stable_row_id_columns(snapshot)
    rows = scan_rows(spark, log, snapshot, candidates, alias, stable_row_ids=stable).observe(
        observed, F.sum(F.when(matches, 1).otherwise(0)).alias("matched"))
    result = rewrite_files(spark, log, snapshot, candidates, output(rows, matches), with_changes)
    result.row_ids_preserved = stable is not None
    matched = observed.get.get("matched") or 0
    if not matched:
        discard(spark, log, result.added + result.changes)
        result, written = Rewrite(), 0
    else:
        written = _added_records(result)
    result.metrics = {"scanTimeMs": 0, "rewriteTimeMs": _ms_since(started)}
    return result, matched, written


def discard(spark: SparkSession, log: DeltaLog, written: list[WrittenFile]) -> None:
    """Delete files a statement wrote but will not commit (they are not in the log yet)."""
    for w in written:
        storage_bridge.remove_tree(spark, log.store.join(log.location, *w.path.split("/")))


def with_new_row_commit_version(snapshot: Snapshot, assignments: dict[str, Column]
                                ) -> dict[str, Column]:
    """``assignments`` that also clear an updated row's materialized row commit version (the
    row then takes its new file's, the commit's version) when the table preserves stable row
    ids; the row keeps its materialized row id."""
    stable = stable_row_id_columns(snapshot)
    if stable is None:
        return assignments
    return {**assignments, stable[1]: F.lit(None).cast("long")}


def delete_matching_rows(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                         candidates: list[AddFile], condition: Column,
                         write_change_data: bool, alias: str | None = None) -> Rewrite:
    """Rewrite the candidate files that hold rows where ``condition`` is true, keeping the rows
    where ``NOT (condition <=> true)``; the deleted rows go to the change feed when asked.
    Metrics: ``numDeletedRows``, ``numCopiedRows``, ``scanTimeMs``, ``rewriteTimeMs``."""
    result, deleted, copied = _rewrite_matching(
        spark, log, snapshot, candidates, condition, alias,
        lambda rows, matches: deleting(rows, matches, write_change_data), write_change_data)
    if copied is None:
        before = total_records(result.removed)
        copied = before - deleted if before is not None else None
    result.metrics.update(numDeletedRows=deleted, numCopiedRows=copied)
    return result


def update_matching_rows(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                         candidates: list[AddFile], condition: Column | None,
                         assignments: dict[str, Column], write_change_data: bool,
                         alias: str | None = None, regenerate: tuple | None = None) -> Rewrite:
    """Rewrite the candidate files that hold rows where ``condition`` is true (``None``: every
    row of every candidate matches, no scan needed to find them), applying ``assignments`` to
    those rows; ``update_preimage``/``update_postimage`` change rows for the updated rows when
    asked. Metrics: ``numUpdatedRows``, ``numCopiedRows``, ``scanTimeMs``, ``rewriteTimeMs``."""
    assignments = with_new_row_commit_version(snapshot, assignments)
    result, updated, total = _rewrite_matching(
        spark, log, snapshot, candidates, condition, alias,
        lambda rows, matches: updating(rows, matches, assignments, write_change_data,
                                       regenerate),
        write_change_data)
    if total is None:
        total = total_records(result.removed)
    if updated is None:
        updated = total
    result.metrics.update(numUpdatedRows=updated,
                          numCopiedRows=None if total is None or updated is None
                          else total - updated)
    return result
