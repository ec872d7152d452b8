"""MERGE, as delta-spark's MergeIntoCommand does it: only target files holding matched rows (or rows
a NOT MATCHED BY SOURCE clause changes) are rewritten.

1. Analysis (:class:`~sqlext.engine.merge.plan.MergePlan`): clauses, scopes, types, schema
   evolution. Bad input fails here, before any data is read.
2. Candidate files: target-only conjuncts of the ON condition prune by partition values and
   statistics; one pass over the source counts its rows and collects its join keys' ranges, which
   prune further (:mod:`sqlext.engine.merge.prune`). NOT MATCHED BY SOURCE clauses add the files
   their conditions may select.
3. Touched files: one join of the source with the candidates finds, per target row, how many
   source rows match it and which clause acts. Several source rows matching one target row raise
   :class:`~sqlext.errors.MultipleSourceRowMatchError` (whatever the clause conditions say; one
   unconditional WHEN MATCHED DELETE is the exception, as in delta-spark); nothing is written.
4. Rewrite: the touched files, joined with the source once more (full outer with inserts), give
   every output row: copied, updated, inserted target rows as data, and with the change feed on,
   ``insert``/``delete``/``update_preimage``/``update_postimage`` change rows, all in one Spark
   job. A MERGE with only WHEN NOT MATCHED clauses anti-joins the source with the candidates and
   only appends.
5. One commit: remove the touched files, add the new ones, with delta-spark's parameters and
   metrics. Concurrent writers are checked against the region and files read.

Steps 3 and 4 run on the driver without a Spark job (:mod:`sqlext.engine.local.merge`) when the
source is held in the plan and the candidate files are few and small
(:mod:`sqlext.engine.local.policy`): same files, actions, metrics and errors.

On a table with ``delta.enableDeletionVectors=true`` (merge-on-read, as delta-spark): the join
also carries each target row's ``_metadata.row_index``; the rows updated or deleted are marked in
deletion vectors (:mod:`sqlext.engine.dml.marking`) and only updated and inserted rows (and the
change rows) are written; unchanged rows of the touched files stay where they are.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from pyspark.errors import PySparkException
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Observation, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.engine import codegen
from sqlext.engine.progress import Progress
from sqlext.engine.commit import auto_merge, begin_idempotent, commit, skips_empty_commit
from sqlext.engine.constraints import table_constraints
from sqlext.engine.generated import (IdentityValues, computed_columns, generated_columns,
                                     identities, recompute_generated, with_identity_values)
from sqlext.engine.dml.command import Timer, begin, removes, spark_job_errors
from sqlext.engine.dml.marking import (Marking, discarded_on_failure, mark_rows,
                                       rows_by_file, uses_deletion_vectors)
from sqlext.engine.io.files import CHANGE_TYPE, WrittenFile, write_files
from sqlext.engine.local.insert import write_without_job
from sqlext.engine.merge import eager
from sqlext.engine.merge.clauses import MATCHED, NOT_MATCHED, NOT_MATCHED_BY_SOURCE, Clause
from sqlext.engine.merge.infallible import cannot_fail
from sqlext.engine.merge.plan import (CLAUSE, COPY, DELETE, INSERT, KIND, OPERATION,
                                      TARGET_PRESENT, UPDATE, MergePlan, source_alias)
from sqlext.engine.merge.prune import analyse_on, broadcastable, summarize_source
from sqlext.engine.schemas import quote_identifier
from sqlext.engine.session import conf_bytes
from sqlext.engine.io.plain_parquet import local_parquet_files
from sqlext.engine.post_commit import result_row
from sqlext.engine.dml.rewrite import discard, total_records
from sqlext.engine.io.scan import FILE_COLUMN, ROW_INDEX_COLUMN, scan, stable_row_id_columns
from sqlext.engine.schemas import quoted_column
from sqlext.engine.pyspark_errors import spark_fields
from sqlext.errors import AnalysisException, MultipleSourceRowMatchError, SqlextError
from sqlext.log.actions import AddFile, decode_path
from sqlext.log.generated import with_high_water_marks
from sqlext.log.pruning import Pruner
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import Transaction

ROW_ID = "__sqlext_m_row"
SOURCE_ROW_ID = "__sqlext_m_srow"
_FILE = "__sqlext_m_file"
_ROW_INDEX = "__sqlext_m_row_index"     # the target row's position in its file (deletion vectors)
_MATCHED = "__sqlext_m_matched"
_RANK = "__sqlext_m_rank"
_GROUP = "__sqlext_m_group"         # the position of a target row's file among the candidates
# a target row's stable row id and row commit version (tables whose DML preserves them)
_STABLE_ID = "__sqlext_m_row_id"
_STABLE_VERSION = "__sqlext_m_row_commit_version"
#: candidate files up to this many bytes are joined with the source once (the join cached);
#: beyond, twice, as delta-spark does
SINGLE_PASS_CONF = "spark.sqlext.merge.singlePassMaxBytes"
SINGLE_PASS_DEFAULT = 256 * 1024 * 1024
#: up to AT_ONCE_MAX_FILES candidate files of at most this many bytes in all are rewritten in one
#: pass (the rewrites of the untouched ones discarded) instead of being joined twice
AT_ONCE_CONF = "spark.sqlext.merge.atOnceMaxBytes"
AT_ONCE_DEFAULT = 16 * 1024 * 1024
AT_ONCE_MAX_FILES = 32

RESULT_SCHEMA = T.StructType([T.StructField(n, T.LongType()) for n in (
    "num_affected_rows", "num_updated_rows", "num_deleted_rows", "num_inserted_rows")])

MULTIPLE_MATCH_MESSAGE = (
    "Cannot perform Merge as multiple source rows matched and attempted to modify the same "
    "target row in the Delta table in possibly conflicting ways. By SQL semantics of Merge, when "
    "multiple source rows match on the same target row, the result may be ambiguous as it is "
    "unclear which source row should be used to update or delete the matching target row. You "
    "can preprocess the source table to eliminate the possibility of multiple matches.")


# a source broadcast to the join's tasks goes through the driver: only worth it when tiny
_BROADCAST_BYTES = 1024 * 1024


_PLAIN_NAME = re.compile(r"^[A-Za-z0-9._=-]+$")


def _basename(f: AddFile) -> str:
    return decode_path(f.path).rsplit("/", 1)[-1]


def _width(dt: T.DataType) -> int:
    """A rough size in bytes of a value of ``dt`` in memory."""
    if isinstance(dt, (T.StringType, T.BinaryType)):
        return 32
    if isinstance(dt, T.StructType):
        return sum(_width(f.dataType) for f in dt.fields)
    if isinstance(dt, (T.ArrayType, T.MapType)):
        return 128
    return 8


def materialized_source(source: DataFrame) -> DataFrame:
    """The source, computed once when reading it again would cost more than keeping it, or could
    give other rows (as delta-spark materializes MERGE sources): a MERGE reads its source two or
    three times (key summary, touched files, rewrite). A plain scan of local parquet files or rows
    held in the plan is read again. Anything else (views with joins, aggregates or subqueries,
    non-deterministic columns, Python rows) is computed by one job: rows Spark estimates small
    enough to broadcast come to the driver and become rows held in the plan (later passes need
    no job to read them, and the key summary is taken on the driver), larger ones are kept by
    the executors (memory, then disk)."""
    try:
        plan = source._jdf.queryExecution().optimizedPlan()
        if plan.nodeName() == "LocalRelation" or local_parquet_files(source) is not None:
            return source
    except Exception:  # noqa: BLE001 - no JVM plan (e.g. Spark Connect): read it as it is
        return source
    alias = source_alias(source)
    kept = _held_in_plan(source) if broadcastable(source) else None
    if kept is None:
        kept = source.localCheckpoint(eager=True)
    return kept.alias(alias) if alias else kept


def _held_in_plan(source: DataFrame) -> DataFrame | None:
    """``source``'s rows brought to the driver (through Arrow) as a local relation with the same
    schema; None when a type does not make the trip unchanged (the caller keeps the rows in
    Spark instead)."""
    try:
        rows = source.toArrow()
        kept = source.sparkSession.createDataFrame(rows, schema=source.schema)
    except (PySparkException, TypeError, ValueError, NotImplementedError):
        return None
    return kept if kept.schema == source.schema else None


@dataclass
class MergeResult:
    """What a MERGE did: the version it committed (None: nothing changed) and its metrics."""

    version: int | None
    metrics: dict[str, int] = field(default_factory=dict)
    table: str = ""
    #: the session's txnAppId/txnVersion was committed already: nothing ran
    skipped: bool = False

    def summary(self, spark: SparkSession) -> DataFrame:
        """delta-spark's one-row result of ``execute()`` (no row for a skipped MERGE, as
        delta-spark's)."""
        if self.skipped:
            from sqlext.engine.io.scan import empty_frame
            return empty_frame(spark, RESULT_SCHEMA)
        m = self.metrics
        updated, deleted = m.get("numTargetRowsUpdated", 0), m.get("numTargetRowsDeleted", 0)
        inserted = m.get("numTargetRowsInserted", 0)
        return result_row(spark, (updated + deleted + inserted, updated, deleted, inserted),
                          RESULT_SCHEMA, table=self.table, version=self.version)


@dataclass
class _Touched:
    """Per touched-candidate file: what the join of source and target found."""

    rewrite: bool
    any_match: bool
    max_matched: int
    max_acting: int
    matched_updated: int
    matched_deleted: int
    source_updated: int
    source_deleted: int


def merge(spark: SparkSession, log: DeltaLog, source: DataFrame, condition,
          clauses: tuple[Clause, ...], *, alias: str | None = None,
          schema_evolution: bool | None = None, txn: Transaction | None = None) -> MergeResult:
    """MERGE ``source`` into the table: ``condition`` (SQL string or Column) matches source rows
    to target rows, ``clauses`` say what happens (see :class:`~sqlext.tables.
    DeltaMergeBuilder`). ``alias`` is the target's name in conditions; ``txn`` a transaction
    already started (default: a new one on the latest version). ``schema_evolution`` (WITH
    SCHEMA EVOLUTION) not given: the session's ``spark.databricks.delta.schema.autoMerge.enabled``."""
    return _Merge(spark, log, source, condition, tuple(clauses), alias,
                  auto_merge(spark, schema_evolution), txn).run()


class _Merge:
    def __init__(self, spark, log, source, condition, clauses, alias, schema_evolution, txn):
        self.spark, self.log, self.alias = spark, log, alias
        self.timer = Timer()
        removes_data = any(c.kind != NOT_MATCHED for c in clauses)
        self.txn, self.snapshot = begin(log, txn, OPERATION, removes_data=removes_data)
        # the session's txnAppId/txnVersion already in the log: a no-op, as delta-spark
        self.skipped = not begin_idempotent(spark, self.txn)
        if self.skipped:
            return
        self._dv = uses_deletion_vectors(self.snapshot)
        # the materialized row tracking columns the rewritten rows carry, or None
        self._stable = stable_row_id_columns(self.snapshot)
        self.txn.row_ids_preserved = self._stable is not None
        self._marking: Marking | None = None
        self._identity = IdentityValues()      # identity values the last write generated
        with spark_job_errors(log, self.snapshot, OPERATION), codegen.interpreted_when_small(
                spark, codegen.input_bytes(source)):
            source = materialized_source(source)
        try:
            self.plan = MergePlan(spark, log.name, self.snapshot, source, condition, clauses,
                                  alias, schema_evolution)
        except SqlextError:     # sqlext's own (pyspark's classes too): as they are
            raise
        except PySparkException as exc:
            raise AnalysisException(f"table {log.name}, version {self.snapshot.version}: the "
                                    f"MERGE is invalid: {str(exc).splitlines()[0]}. The table is "
                                    "unchanged.", table=log.name, version=self.snapshot.version,
                                    **spark_fields(exc)) from exc
        # delta-spark evaluates a condition on unmatched source rows: the join keeps them
        self._source_rows = eager.source_rows_evaluated(self.plan, self._dv)
        self.metrics: dict[str, int] = {}
        self._names = False
        self._matches = False       # whether the ON condition matched a target row

    # --- driver ------------------------------------------------------------------------------

    def run(self) -> MergeResult:
        if self.skipped:
            return MergeResult(None, {}, self.log.name, skipped=True)
        plan, snapshot = self.plan, self.snapshot
        if plan.schema_changed:
            # staged before the files are written: new columns of a column-mapped table get
            # their physical names here, and the files must use them (committed only with actions)
            self.txn.update_metadata(dataclasses.replace(
                snapshot.metadata, schema_string=plan.new_schema.json()))
        progress = Progress(self.spark, OPERATION, self.log.name)
        with spark_job_errors(self.log, snapshot, OPERATION):
            progress("finding the files the source touches")
            candidates = self._candidates()
            progress(f"{len(candidates)} candidate file(s); "
                     + ("writing the inserted rows" if plan.insert_only or not candidates
                        else "joining them with the source, writing the new files"))
            with codegen.interpreted_when_small(self.spark, self._bytes_read(candidates)):
                driver = None if plan.insert_only else self._on_driver(candidates)
                if driver is not None:
                    removed, written, touched = driver
                elif plan.insert_only or not candidates:
                    # no target file can hold a match (the source's keys lie outside every
                    # file's range, or the table is empty): the rows NOT MATCHED clauses insert
                    # are all there is to write, no join needed
                    removed, written = [], self._insert_only(candidates)
                    touched = None
                else:
                    removed, written, touched = self._rewrite_or_insert(candidates)
        marking = self._marking
        self._record_reads(candidates, marking.removed if marking else removed)
        added = [w for w in written if not w.is_change_file]
        changes = [w for w in written if w.is_change_file]
        self._finish_metrics(removed, added, changes, touched)
        if marking is not None:
            actions = marking.actions() + [w.add() for w in added] + [c.cdc() for c in changes]
        else:
            actions = removes(removed) + [w.add() for w in added] + [c.cdc() for c in changes]
        if not actions and not self._reaches_rows() and skips_empty_commit(
                self.spark, self.txn, actions):
            # nothing to commit: delta-spark 4.4 makes no commit either (measured with the
            # delta-spark oracle in tests/deltaspark/test_deltaspark_empty_commits.py)
            self.metrics["executionTimeMs"] = self.timer.total()
            return MergeResult(None, self.metrics, self.log.name)
        self.metrics["executionTimeMs"] = self.timer.total()
        marks = self._identity.high_water_marks()
        if marks:
            # the identity values the inserts got are recorded in this commit's metadata
            metadata = self.txn.metadata
            self.txn.update_metadata(dataclasses.replace(
                metadata, schema_string=with_high_water_marks(metadata.schema_string, marks)))
        progress(f"committing {len(added)} new file(s), {len(changes)} change file(s), "
                 f"{len(actions) - len(added) - len(changes)} other action(s)")
        with discarded_on_failure(self.spark, self.log, marking or Marking(), written):
            version = commit(self.spark, self.txn, actions, plan.operation(), None, self.metrics)
        progress(f"committed version {version}")
        return MergeResult(version, self.metrics, self.log.name)

    def _on_driver(self, candidates: list[AddFile]
                   ) -> tuple[list[AddFile], list[WrittenFile], dict[str, _Touched]] | None:
        """The rewrite on the driver, without a Spark job (:mod:`sqlext.engine.local.merge`),
        answered as :meth:`_rewrite_at_once` answers; None when the MERGE is not for it."""
        # imported here: sqlext.engine.local.merge builds on this package's plan
        from sqlext.engine.local.merge import merge_on_driver
        done = merge_on_driver(self.spark, self.log, self.snapshot, self.plan, candidates,
                               self._join_type(), self._source_rows)
        if done is None:
            return None
        if done.several:
            self._refuse_several_matches()
        self._matches = done.matches
        # the counts are the statement's: _finish_metrics only adds them up over the files
        touched = {f.path: _Touched(True, done.matches, int(done.matches), 1,
                                    *(done.counts if i == 0 else (0, 0, 0, 0)))
                   for i, f in enumerate(done.rewrite)}
        self.metrics.update(scanTimeMs=0, rewriteTimeMs=done.time_ms)
        return done.rewrite, done.written, touched

    def _rewrite_or_insert(self, candidates: list[AddFile]
                           ) -> tuple[list[AddFile], list[WrittenFile], dict | None]:
        """:meth:`_rewrite`; when that fails on a condition evaluated for an unmatched source
        row and no source row matches a target row, the inserts alone, as delta-spark (which
        then skips its join and evaluates no WHEN MATCHED condition)."""
        try:
            return self._rewrite(candidates)
        except SqlextError:
            raise
        except Exception:  # noqa: BLE001 - a failed Spark job: re-raised unless it is that case
            if not self._source_rows or self.plan.of(NOT_MATCHED_BY_SOURCE):
                raise
            if not self.plan.has_insert:
                if self._touches_any(candidates):
                    raise
                return [], [], None
            if self._any_match(candidates):
                raise
        return [], self._insert_only(candidates), None

    def _any_match(self, candidates: list[AddFile]) -> bool:
        """Whether a source row matches a row of ``candidates``."""
        target = self._target(candidates, with_file=False, row_ids=False)
        return bool(self.plan.source.join(target, self.plan.on.column, "left_semi").take(1))

    def _touches_any(self, candidates: list[AddFile]) -> bool:
        """Whether delta-spark's first join of this MERGE of WHEN MATCHED clauses only touches a
        file of ``candidates`` (:func:`eager.touching`; raises where that fails). An aggregate
        over the pairs: a filter on source columns would be pushed below the join, to every
        source row."""
        target = self._target(candidates, with_file=False, row_ids=False)
        pairs = self.plan.source.join(target, self.plan.on.column, "inner")
        found = pairs.select(F.max(eager.touching(self.plan).cast("int")).alias("t")).first()
        return bool(found["t"])

    def _join_type(self) -> str:
        """Full when the join must keep unmatched source rows (inserts, or conditions
        delta-spark evaluates on them), else left."""
        return "full" if self.plan.has_insert or self._source_rows else "left"

    def _reaches_rows(self) -> bool:
        """Whether delta-spark would rewrite target files (and so commit) although no row
        changes: its MERGE rewrites every file holding a row its join keeps, whatever the
        clauses then do with the row. With NOT MATCHED BY SOURCE clauses the join keeps every
        target row; with WHEN NOT MATCHED and WHEN MATCHED clauses, every matched one; with
        WHEN MATCHED clauses only, the rows a clause acts on (then a row changes anyway);
        with WHEN NOT MATCHED only, none (inserts only). On a table with deletion vectors
        unchanged rows are not rewritten, and nothing is committed. sqlext commits then too
        (an empty commit: the rows stay in their files)."""
        if self._dv:
            return False
        plan = self.plan
        if plan.of(NOT_MATCHED_BY_SOURCE):
            return bool(self.snapshot.files)
        return plan.has_insert and not plan.insert_only and self._matches

    # --- 2. candidate files ------------------------------------------------------------------

    def _candidates(self) -> list[AddFile]:
        plan, snapshot = self.plan, self.snapshot
        files = snapshot.files
        on = analyse_on(plan.on.predicate, self.alias, plan.source_alias,
                        [f.name for f in plan.old_schema.fields], plan.source.columns)
        self._target_only = on.target_only
        matchable = files
        if on.target_only is not None:
            matchable = Pruner.of(on.target_only, snapshot).prune(matchable)
        types = {f.name.lower(): f.dataType for f in plan.old_schema.fields}
        self.summary = summarize_source(plan.source, snapshot, matchable, on.keys, types)
        matchable = self.summary.prune(snapshot, matchable)
        self.metrics["numSourceRows"] = self.summary.num_rows
        self.metrics["numTargetFilesBeforeSkipping"] = len(files)
        by_source = plan.of(NOT_MATCHED_BY_SOURCE)
        if not by_source:
            candidates = matchable
        else:
            predicates = [c.condition.predicate if c.condition is not None else None
                          for c in by_source]
            selected = files
            # delta-spark joins every file with the source then, and evaluates WHEN MATCHED
            # conditions on their unmatched rows too: no pruning by NOT MATCHED BY SOURCE
            # conditions, which would skip rows where a WHEN MATCHED condition fails; nor by
            # conditions delta-spark evaluates on every row and that may fail on one
            if all(p is not None for p in predicates) and \
                    all(c.condition is None for c in plan.of(MATCHED)) and \
                    self._skips_by_source(predicates, types):
                either = predicates[0]
                for p in predicates[1:]:
                    either = exp.or_(either, p)
                selected = Pruner.of(either, snapshot).prune(files)
            keep = {f.path for f in matchable} | {f.path for f in selected}
            candidates = [f for f in files if f.path in keep]
        self.metrics["numTargetFilesAfterSkipping"] = len(candidates)
        # a row's file is known by its name when the names are unique and plain (no mapping
        # join needed), else by the scan's file column
        names = [_basename(f) for f in candidates]
        self._names = (len(set(names)) == len(names) and all(map(_PLAIN_NAME.match, names))
                       and not self._dv)
        return candidates

    def _skips_by_source(self, predicates: list[exp.Expression], types: dict) -> bool:
        """Whether files the NOT MATCHED BY SOURCE conditions ``predicates`` (over target
        columns of ``types``) rule out may be
        skipped without changing which rows delta-spark evaluates them on. delta-spark
        evaluates them on every row (measured), except on a table with deletion vectors in a
        MERGE of one such clause only, whose condition filters the scan: Parquet skips the
        files its top-level conjuncts rule out. Otherwise only conditions that cannot fail on
        any row (:func:`infallible.cannot_fail`) may skip files."""
        if self._dv and len(self.plan.clauses) == 1:
            return True
        return all(cannot_fail(p, types, self.alias) for p in predicates)

    def _record_reads(self, candidates: list[AddFile], removed: list[AddFile]) -> None:
        """The region read: target-only conjuncts and the source's key ranges (the whole table
        with NOT MATCHED BY SOURCE clauses), and the candidate files kept (a concurrent removal
        of a removed file is reported as a delete-delete conflict)."""
        predicate = None
        if not self.plan.of(NOT_MATCHED_BY_SOURCE):
            for part in (self._target_only, self.summary.read_predicate()):
                if part is not None:
                    predicate = part if predicate is None else exp.and_(predicate, part)
        if predicate is None:
            self.txn.read_whole_table()
        else:
            self.txn.read_predicate(predicate)
        gone = {f.path for f in removed}
        self.txn.read_files([f for f in candidates if f.path not in gone])

    def _target(self, files: list[AddFile], with_file: bool, row_ids: bool) -> DataFrame:
        """The target rows of ``files`` (aliased, with the NOT MATCHED BY SOURCE columns); with
        ``with_file`` a column FILE_COLUMN naming each row's file by :meth:`_file_key`."""
        by_name = with_file and self._names
        df = scan(self.spark, self.log, self.snapshot, files,
                  with_file_column=with_file and not by_name,
                  with_row_index=with_file and self._dv,
                  stable_row_ids=self._stable if row_ids else None)
        if by_name:
            # the file's name, as Spark's scan saw it: no mapping join needed to know it
            df = df.withColumn(FILE_COLUMN, F.element_at(F.split(F.input_file_name(), "/"), -1))
        if row_ids:
            df = df.withColumn(ROW_ID, F.monotonically_increasing_id())
        return self.plan.target_side(df)

    def _file_key(self, f: AddFile) -> str:
        """How FILE_COLUMN names a file: its name, or its action path."""
        return _basename(f) if self._names else f.path

    def _small(self, num_rows: int | None, schema: T.StructType) -> bool:
        """Whether rows are few enough to broadcast to every task of a join (Spark cannot tell
        for a source it has no statistics for; the row counts are known here)."""
        if num_rows is None:
            return False
        return num_rows * sum(_width(f.dataType) for f in schema.fields) <= _BROADCAST_BYTES

    def _bytes_read(self, candidates: list[AddFile]) -> int | None:
        """The bytes of the candidate files plus what the source reads (None: unknown)."""
        source = codegen.input_bytes(self.plan.source)
        return None if source is None else source + sum(f.size or 0 for f in candidates)

    def _at_once(self, candidates: list[AddFile]) -> bool:
        """Whether to rewrite the candidates in one pass (:meth:`_rewrite_at_once`): one file of
        any size, or a few small ones (the rewrites of untouched ones are thrown away, so they
        must be cheap); all with row counts, not merge-on-read."""
        if not candidates or self._dv or any(f.num_records is None for f in candidates):
            return False
        if len(candidates) == 1:
            return True
        limit = conf_bytes(self.spark, AT_ONCE_CONF, AT_ONCE_DEFAULT)
        return len(candidates) <= AT_ONCE_MAX_FILES and sum(f.size for f in candidates) <= limit

    # --- 3. the join: touched files -----------------------------------------------------------

    def _joined(self, files: list[AddFile], how: str, ids: bool = True) -> DataFrame:
        """The target rows of ``files`` joined with the source rows, one row per pair (and per
        unpaired row the join keeps): the target row's file and id, the source row's id, whether
        it is a match, the clause that acts (CLAUSE), the row's fate (KIND), the new values
        (``__n<i>``) and, with the change feed, the old ones (``__o<i>``). Without ``ids``, no
        file names and row ids are computed: ROW_ID is 0 for target rows, NULL otherwise."""
        plan = self.plan
        target = self._target(files, with_file=ids, row_ids=ids)
        source = plan.source_side()
        if ids:
            source = source.withColumn(SOURCE_ROW_ID, F.monotonically_increasing_id())
        if how != "full" and self._small(self.summary.num_rows, plan.source.schema):
            source = F.broadcast(source)
        rows = target.join(source, plan.on.column, how)
        rows = rows.withColumn(CLAUSE, plan.clause_index(target, source, self._source_rows))
        clause = F.col(CLAUSE)
        old = plan.old_values(target) if self.snapshot.change_data_feed_enabled else []
        if ids:
            file, row, source_row = target[FILE_COLUMN], target[ROW_ID], source[SOURCE_ROW_ID]
        else:
            file, source_row = F.lit(None).cast("string"), F.lit(None).cast("long")
            row = F.when(target[TARGET_PRESENT].isNotNull(), F.lit(0).cast("long"))
        row_index = [target[ROW_INDEX_COLUMN].alias(_ROW_INDEX)] if ids and self._dv else []
        kind = plan.kind(clause, target)
        stable = []
        if ids and self._stable is not None:
            # a copied row keeps its id and commit version, an updated one its id (it takes the
            # commit's version); an inserted row has neither, so its new file's baseRowId and
            # the commit give them (as delta-spark's MERGE)
            copied = kind == F.lit(COPY)
            stable = [target[quote_identifier(self._stable[0])].alias(_STABLE_ID),
                      F.when(copied, target[quote_identifier(self._stable[1])])
                      .alias(_STABLE_VERSION)]
        return plan.with_late_values(rows.select(
            file.alias(_FILE), row.alias(ROW_ID), source_row.alias(SOURCE_ROW_ID), *row_index,
            plan.matched(target, source).alias(_MATCHED), clause, kind.alias(KIND),
            *[c.alias(f"__n{i}") for i, c in enumerate(plan.new_values(clause, target, source))],
            *[c.alias(f"__o{i}") for i, c in enumerate(old)], *stable,
            *plan.packed_sides(target, source)))

    def _touched(self, joined: DataFrame, files: list[AddFile],
                 every_target_row: bool) -> dict[str, _Touched]:
        """Per target file (by :meth:`_file_key`): does a clause change a row of it, how many
        source rows match one of its rows (at most), how many rows each kind of clause updates
        and deletes. Raises :class:`MultipleSourceRowMatchError` when several source rows match
        one row (unless the only WHEN MATCHED clause is an unconditional DELETE).

        When ``joined`` holds every target row of ``files`` (a left or full join), one
        aggregation by file suffices in the common case: a file's rows appear exactly
        ``numRecords`` times when no row has several matches. Otherwise (or without statistics)
        the pairs are first grouped by target row."""
        matched, clause = F.col(_MATCHED), F.col(CLAUSE)
        pairs = joined.filter(F.col(_FILE).isNotNull()).select(
            F.col(_FILE).alias("f"), F.col(ROW_ID).alias("r"), matched.cast("int").alias("nm"),
            F.when(matched, clause).alias("mc"), F.when(~matched, clause).alias("nc"))
        found = None
        if every_target_row:
            pairs = pairs.withColumn("na", F.col("mc").isNotNull().cast("int"))
            rows = {r["f"]: r for r in self._per_file(pairs, F.count(F.lit(1)).alias("n"))}
            records = {self._file_key(f): f.num_records for f in files}
            if all(records.get(k) == r["n"] for k, r in rows.items()):
                found = {k: self._summary(r) for k, r in rows.items() if r["rewrite"]
                         or r["any_match"]}
        if found is None:
            rows = pairs.filter((F.col("nm") == 1) | F.col("nc").isNotNull()).groupBy("f", "r").agg(
                F.sum("nm").alias("nm"), F.count("mc").alias("na"), F.min("mc").alias("mc"),
                F.max("nc").alias("nc"))
            found = {r["f"]: self._summary(r) for r in self._per_file(rows)}
        # delta-spark's rule: any target row matched by several source rows is an error, whether
        # or not a clause's condition holds for the pairs; one unconditional DELETE is the only
        # clause list for which the result cannot depend on which source row is used
        if any(t.max_matched > 1 for t in found.values()) and not self.plan.only_unconditional_delete:
            self._refuse_several_matches()
        return found

    def _refuse_several_matches(self) -> None:
        raise MultipleSourceRowMatchError(
            f"{self.plan.where}: {MULTIPLE_MATCH_MESSAGE} Nothing was committed; the table "
            "is unchanged.", table=self.log.name, version=self.snapshot.version)

    def _per_file(self, rows: DataFrame, *extra) -> list:
        """Aggregate per-row results (nm matches, na acting matches, mc/nc the acting clause)
        by file; one small row per file comes back."""
        return rows.groupBy("f").agg(
            F.max(((F.col("na") > 0) | F.col("nc").isNotNull()).cast("int")).alias("rewrite"),
            F.max((F.col("nm") > 0).cast("int")).alias("any_match"),
            F.max("nm").alias("max_matched"), F.max("na").alias("max_acting"),
            *self._clause_counts(F.col("mc"), F.col("nc")), *extra).collect()

    def _clause_counts(self, matched_clause: Column, source_clause: Column) -> list[Column]:
        """How many rows matched clauses update (mu) and delete (md), and NOT MATCHED BY SOURCE
        clauses update (su) and delete (sd), given each row's acting clause of either kind
        (NULL where none acts)."""
        plan = self.plan

        def count_in(clause: Column, action: str, kind: str, name: str) -> Column:
            idx = plan.indexes(action, kind)
            return (F.sum(clause.isin(idx).cast("int")) if idx else F.lit(0)).alias(name)

        return [count_in(matched_clause, "update", MATCHED, "mu"),
                count_in(matched_clause, "delete", MATCHED, "md"),
                count_in(source_clause, "update", NOT_MATCHED_BY_SOURCE, "su"),
                count_in(source_clause, "delete", NOT_MATCHED_BY_SOURCE, "sd")]

    @staticmethod
    def _summary(r) -> _Touched:
        return _Touched(bool(r["rewrite"]), bool(r["any_match"]), r["max_matched"] or 0,
                        r["max_acting"] or 0, r["mu"] or 0, r["md"] or 0, r["su"] or 0,
                        r["sd"] or 0)

    # --- 4. output rows ----------------------------------------------------------------------

    def _insert_only(self, candidates: list[AddFile]) -> list[WrittenFile]:
        plan = self.plan
        timer = Timer()
        # conditions evaluated after the join are not computed on the source (a projection of
        # rows held in the plan is computed while Spark plans the query, for every row)
        source = plan.source_side(conditions=not eager.conditions_after_join(plan))
        rows = source.withColumn(CLAUSE, eager.insert_index(plan, source))
        if candidates:
            target = self._target(candidates, with_file=False, row_ids=False)
            if self._small(total_records(candidates), plan.old_schema):
                target = F.broadcast(target)
            if eager.conditions_after_join(plan):
                rows = source.join(target, plan.on.column, "left")
                clause = eager.insert_index(plan, rows, target[TARGET_PRESENT].isNull())
                rows = rows.withColumn(CLAUSE, clause).filter(F.col(CLAUSE).isNotNull()).select(
                    *[source[quote_identifier(c)] for c in source.columns], F.col(CLAUSE))
            else:
                rows = source.join(target, plan.on.column, "left_anti")
                rows = rows.withColumn(CLAUSE, eager.insert_index(plan, rows))
        out = rows.filter(F.col(CLAUSE).isNotNull()).select(
            *plan.new_values(F.col(CLAUSE), None, source), F.col(CLAUSE))
        out = self._computed(out, F.lit(True)).drop(CLAUSE)
        written = self._write(out, with_changes=False)
        self.metrics["rewriteTimeMs"] = timer.total()
        return written

    def _rewrite(self, candidates: list[AddFile]
                 ) -> tuple[list[AddFile], list[WrittenFile], dict[str, _Touched]]:
        """Find the touched files and write their new rows (and the inserted ones).

        Small candidate sets are joined with the source once: the join is cached, the touched
        files are found from it, and the output is written from it. Larger ones are joined twice
        (as delta-spark does): the candidates to find the touched files, then only the files to
        rewrite (and the files with matches, whose source rows must not be inserted)."""
        plan = self.plan
        if self._at_once(candidates):
            done = self._rewrite_at_once(candidates)
            if done is not None:
                return done
        timer = Timer()
        how = self._join_type()
        single = sum(f.size for f in candidates) <= conf_bytes(
            self.spark, SINGLE_PASS_CONF, SINGLE_PASS_DEFAULT)
        if single:
            joined = self._joined(candidates, how).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            if single:
                touched = self._touched(joined, candidates, every_target_row=True)
            elif candidates:
                by_source = bool(plan.of(NOT_MATCHED_BY_SOURCE))
                touched = self._touched(
                    self._joined(candidates, "left" if by_source else "inner"), candidates,
                    every_target_row=by_source)
            else:
                touched = {}
            self.metrics["scanTimeMs"] = timer.lap()
            touched = {f.path: touched[self._file_key(f)] for f in candidates
                       if self._file_key(f) in touched}
            rewrite = [f for f in candidates if f.path in touched and touched[f.path].rewrite]
            self._matches = any(t.any_match for t in touched.values())
            if not rewrite and not plan.has_insert:
                return [], [], touched
            read = candidates
            if not single:
                # files with matches but no change are read (their source rows are not inserted)
                read = [f for f in candidates if f.path in touched and (
                    touched[f.path].rewrite or (plan.has_insert and touched[f.path].any_match))]
                joined = self._joined(read, how)
            rows = joined
            if len(read) != len(rewrite):
                keep = [self._file_key(f) for f in rewrite]
                rows = rows.filter(F.col(_FILE).isNull() | F.col(_FILE).isin(keep))
            if any(touched[f.path].max_matched > 1 for f in rewrite):
                # a target row matched by several source rows (at most one of them acting) comes
                # out once: the acting pair if there is one
                window = Window.partitionBy(
                    F.col(ROW_ID), F.when(F.col(ROW_ID).isNull(), F.col(SOURCE_ROW_ID))
                ).orderBy(F.col(CLAUSE).isNull().asc())
                rows = rows.withColumn(_RANK, F.row_number().over(window)).filter(
                    F.col(_RANK) == 1)
            with_changes = self.snapshot.change_data_feed_enabled and bool(rewrite)
            if self._dv:
                rows = self._mark(rows, rewrite)
            written = self._write(self._output(rows, with_changes), with_changes)
            self.metrics["rewriteTimeMs"] = timer.lap()
            return rewrite, written, touched
        finally:
            if single:
                joined.unpersist()

    def _mark(self, rows: DataFrame, rewrite: list[AddFile]) -> DataFrame:
        """Merge-on-read: mark the target rows updated or deleted in deletion vectors (one Spark
        job brings their file and row index back) and return the rows left to write: all but
        the copied ones, which stay in their files."""
        kind = F.col(KIND)
        hits = rows.filter(F.col(_FILE).isNotNull() & kind.isin(UPDATE, DELETE))
        self._marking = mark_rows(self.log, rewrite, rows_by_file(hits, _FILE, _ROW_INDEX))
        return rows.filter(kind.isNull() | (kind != COPY))

    def _rewrite_at_once(self, candidates: list[AddFile]
                         ) -> tuple[list[AddFile], list[WrittenFile], dict[str, _Touched]] | None:
        """Few small candidate files: join, rewrite and count in one pass (one Spark job per
        stage of the join), as the common upsert wants. Every candidate's rows are written to
        files of their own (grouped by the file they come from, inserted rows apart); the
        rewrites of candidates no clause changes are then discarded, so the commit removes
        exactly the touched files. The
        candidates' rows must come out of the join exactly ``numRecords`` times in all (no row
        matched by several source rows); otherwise everything written is discarded and None
        sends the MERGE down the general path."""
        timer = Timer()
        joined = self._joined(candidates, self._join_type())
        target, clause = F.col(ROW_ID).isNotNull(), F.col(CLAUSE)
        matched = F.coalesce(F.col(_MATCHED), F.lit(False))

        def count(condition, name: str):
            return F.sum(F.when(condition, 1).otherwise(0)).alias(name)

        # a file's rows are grouped by its position in the list (a path can be too long to be
        # a directory name); inserted rows have none
        keys = [self._file_key(f) for f in candidates]
        positions = F.create_map(*[F.lit(x) for i, k in enumerate(keys) for x in (k, str(i))])
        joined = joined.withColumn(_GROUP, positions[F.col(_FILE)])
        observed = Observation()
        rows = joined.observe(
            observed, count(target, "rows"), count(matched, "matches"),
            # the files with an acting row, as bits of a number (an observed array comes back
            # as a Java object on pyspark 4.0)
            F.bit_or(F.when(target & clause.isNotNull(), F.expr(
                f"shiftleft(CAST(1 AS BIGINT), CAST(`{_GROUP}` AS INT))"))).alias("acting"),
            *self._clause_counts(F.when(matched, clause), F.when(target & ~matched, clause)))
        with_changes = self.snapshot.change_data_feed_enabled
        written = self._write(self._output(rows, with_changes, group=_GROUP), with_changes,
                              group=_GROUP)
        seen = observed.get
        if seen.get("rows") != sum(f.num_records for f in candidates):
            discard(self.spark, self.log, written)
            return None
        bits = seen.get("acting") or 0
        self._matches = bool(seen.get("matches"))
        acting = {str(i) for i in range(len(candidates)) if bits >> i & 1}
        discard(self.spark, self.log, [w for w in written if w.group is not None
                                       and w.group not in acting])
        written = [w for w in written if w.group is None or w.group in acting]
        rewrite = [f for i, f in enumerate(candidates) if str(i) in acting]
        # the counts are the statement's: _finish_metrics only adds them up over the files
        touched = {f.path: _Touched(True, bool(seen["matches"]), 1 if seen["matches"] else 0, 1,
                                    *((seen["mu"] or 0, seen["md"] or 0, seen["su"] or 0,
                                       seen["sd"] or 0) if i == 0 else (0, 0, 0, 0)))
                   for i, f in enumerate(rewrite)}
        self.metrics.update(scanTimeMs=0, rewriteTimeMs=timer.total())
        return rewrite, written, touched

    def _output(self, rows: DataFrame, with_changes: bool, group: str | None = None
                ) -> DataFrame:
        """The rows to write: data rows, and with ``with_changes`` change rows too. Joined rows
        of no kind (source rows no clause inserts) yield nothing. ``group``: a column of
        ``rows`` kept alongside."""
        rows = self._computed_new_values(rows)
        if with_changes:
            return self._with_change_rows(rows, group)
        return rows.filter(F.col(KIND).isin(COPY, UPDATE, INSERT)).select(
            *[F.col(f"__n{i}").alias(f.name) for i, f in enumerate(self.plan.new_schema.fields)],
            *[F.col(c).alias(name) for c, name in self._stable_columns()],
            *([F.col(group)] if group else []))

    def _stable_columns(self) -> list[tuple[str, str]]:
        """(joined column, materialized column) of the stable row ids the rows carry, if any."""
        if self._stable is None:
            return []
        return [(_STABLE_ID, self._stable[0]), (_STABLE_VERSION, self._stable[1])]

    def _computed_new_values(self, rows: DataFrame) -> DataFrame:
        """Joined rows with their new values (``__n<i>``) of generated and identity columns
        computed where the acting clause leaves them out."""
        fields = self.plan.new_schema.fields
        computed = set(computed_columns(self.plan.new_schema))
        if not computed:
            return rows
        named = rows.withColumns({f.name: F.col(f"__n{i}") for i, f in enumerate(fields)})
        named = self._computed(named, F.col(KIND).isin(UPDATE, INSERT))
        return named.withColumns({f"__n{i}": quoted_column(f.name) for i, f in enumerate(fields)
                                  if f.name in computed}).drop(*[f.name for f in fields])

    def _computed(self, rows: DataFrame, acting: Column) -> DataFrame:
        """``rows`` (the new schema's columns by name, CLAUSE, ...) with identity values
        generated for the rows inserted by clauses that leave the identity column out, and
        generated columns computed for the rows inserted or updated by clauses that leave them
        out (from the new row, as delta-spark)."""
        plan, schema = self.plan, self.plan.new_schema
        clause = F.col(CLAUSE)

        def leaving_out(name: str, actions: tuple[str, ...]) -> Column | None:
            idx = [c.index for c in plan.clauses
                   if c.action in actions and name.lower() not in c.given]
            return acting & clause.isin(idx) if idx else None

        generate = {n: leaving_out(n, ("insert",)) for n in identities(schema)}
        generate = {n: c for n, c in generate.items() if c is not None}
        if generate:
            rows, self._identity = with_identity_values(rows, schema, set(), generate)
        recompute = {g: leaving_out(g, ("update", "insert")) for g in generated_columns(schema)}
        return recompute_generated(rows, schema,
                                   {g: c for g, c in recompute.items() if c is not None})

    def _with_change_rows(self, rows: DataFrame, group: str | None = None) -> DataFrame:
        """Data rows (``_change_type`` NULL) and change rows, from one evaluation per row: each
        kind of row becomes its array of images, which one generator spreads into rows (each
        with the row's ``group`` column, if given)."""
        names = [f.name for f in self.plan.new_schema.fields]
        # the stable row ids ride along in change rows too (readers ignore them there)
        carried = "".join(f", `{c}` AS {quote_identifier(name)}"
                          for c, name in self._stable_columns())
        carried += f", `{group}` AS `{group}`" if group else ""

        # one SQL expression, parsed by one py4j call (built from Column functions it took
        # about a hundred round trips); the text holds only sqlext's own column names, quoted
        # names of the table's columns and fixed literals
        def image(prefix: str, change_type: str | None) -> str:
            fields = [f"`{prefix}{i}` AS {quote_identifier(n)}" for i, n in enumerate(names)]
            kind = f"'{change_type}'" if change_type else "CAST(NULL AS STRING)"
            return (f"struct({', '.join(fields)}, {kind} AS {quote_identifier(CHANGE_TYPE)}"
                    f"{carried})")

        data = image("__n", None)
        images = {COPY: [data],
                  UPDATE: [data, image("__o", "update_preimage"), image("__n", "update_postimage")],
                  INSERT: [data, image("__n", "insert")],
                  DELETE: [image("__o", "delete")]}
        cases = " ".join(f"WHEN `{KIND}` = '{code}' THEN array({', '.join(row_images)})"
                         for code, row_images in images.items())
        return rows.selectExpr(f"inline(CASE {cases} END)")

    def _write(self, out: DataFrame, with_changes: bool, group: str | None = None
               ) -> list[WrittenFile]:
        constraints = table_constraints(self.plan.new_schema, self.snapshot.configuration)
        if group is None and not with_changes and not self._dv:
            # rows Spark computes without a job (inserts of a source held in the plan, no
            # target file read) are written on the driver
            local = write_without_job(self.spark, out, self.log, self.txn.metadata, constraints,
                                      self.snapshot.version, codegen.input_bytes(out))
            if local is not None:
                return local
        written = write_files(self.spark, out, self.log, self.snapshot.partition_columns,
                              self.plan.new_schema, constraints=constraints,
                              kind="mixed" if with_changes else "data",
                              metadata=self.txn.metadata, group_column=group)
        # Spark writes an empty file for an empty output: it adds nothing to the table
        return [w for w in written if w.is_change_file or w.num_records != 0]

    # --- 5. metrics --------------------------------------------------------------------------

    def _finish_metrics(self, removed: list[AddFile], added: list[WrittenFile],
                        changes: list[WrittenFile], touched: dict[str, _Touched] | None) -> None:
        m = self.metrics
        gone = {f.path for f in removed}
        rows = [t for p, t in (touched or {}).items() if p in gone]
        mu, md = sum(t.matched_updated for t in rows), sum(t.matched_deleted for t in rows)
        su, sd = sum(t.source_updated for t in rows), sum(t.source_deleted for t in rows)
        output = total_records([w.add() for w in added]) or 0
        if self._marking is not None:
            # merge-on-read: no row copied; files removed are those left without rows
            marked = self._marking.metrics
            before = mu + md + su + sd
            m.update(numTargetDeletionVectorsAdded=marked["numDeletionVectorsAdded"],
                     numTargetDeletionVectorsRemoved=marked["numDeletionVectorsRemoved"],
                     numTargetDeletionVectorsUpdated=marked["numDeletionVectorsUpdated"])
            kept = {a.path for a in self._marking.added}
            removed = [f for f in removed if f.path not in kept]
        else:
            before = total_records(removed)
        if before is None:
            before = scan(self.spark, self.log, self.snapshot, removed).count()
        copied = before - mu - md - su - sd
        m.update({
            "numTargetRowsInserted": output - copied - mu - su,
            "numTargetRowsUpdated": mu + su, "numTargetRowsMatchedUpdated": mu,
            "numTargetRowsNotMatchedBySourceUpdated": su,
            "numTargetRowsDeleted": md + sd, "numTargetRowsMatchedDeleted": md,
            "numTargetRowsNotMatchedBySourceDeleted": sd,
            "numTargetRowsCopied": copied, "numOutputRows": output,
            "numTargetFilesAdded": len(added), "numTargetFilesRemoved": len(removed),
            "numTargetChangeFilesAdded": len(changes),
            "numTargetBytesAdded": sum(w.size for w in added),
            "numTargetBytesRemoved": sum(f.size for f in removed),
            "numTargetChangeFileBytes": sum(c.size for c in changes)})
        m.setdefault("scanTimeMs", 0)
        m.setdefault("rewriteTimeMs", 0)
