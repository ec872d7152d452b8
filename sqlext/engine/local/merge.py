"""MERGE of a small source into a few small files without a Spark job (issue 30).

The source must be a local relation (its rows held in the plan: VALUES, a collected small
source); the candidate files are read on the driver (:class:`~sqlext.engine.local.dml.
Candidates`). Spark evaluates each side's columns of the MERGE (:meth:`MergePlan.target_side`,
:meth:`MergePlan.source_side`, the ON clause's source key expressions) over its local relation;
the rows are joined here on the ON clause's equi-keys (:mod:`.merge_keys`: Spark's equality of
NULL, NaN, -0.0, decimals and strings); Spark then evaluates the whole ON condition over the
candidate pairs (its residual, non-equi part decides) and the clauses over the joined rows.

The joined rows are one ``LocalRelation`` whose output attributes are the two sides' own (same
expression ids and qualifiers, made nullable as an outer join makes them): the MERGE's
expressions, built for the Spark path's join (``t.id``, ``source["v"]``, ...), resolve over it
unchanged, so :meth:`MergePlan.clause_index`, :meth:`MergePlan.kind` and
:meth:`MergePlan.new_values` mean what they mean there, and the projection folds into a local
relation: collecting it runs no job.

The files are then written as the Spark path's one-pass rewrite (``_rewrite_at_once``) writes
them: each touched file's rows apart (one file per partition value), the inserted rows apart,
and with the change feed on, change files per group likewise. Anything this path does not
cover answers None before a file is written, and the caller runs the Spark path.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine.constraints import enforce, table_constraints
from sqlext.engine.generated import computed_columns
from sqlext.engine.io.files import CHANGE_TYPE, WrittenFile
from sqlext.engine.io.scan import stable_row_id_columns
from sqlext.engine.local import policy
from sqlext.engine.local.dml import Candidates, supported, true_mask
from sqlext.engine.local.merge_keys import key_pairs
from sqlext.engine.local.relation import collect_arrow, frame_from_arrow
from sqlext.engine.local.writer import write_local
from sqlext.engine.merge.clauses import MATCHED, NOT_MATCHED_BY_SOURCE
from sqlext.engine.merge.plan import CLAUSE, COPY, DELETE, INSERT, KIND, UPDATE, MergePlan
from sqlext.engine.merge.prune import analyse_on
from sqlext.engine.session import is_connect, session_constant
from sqlext.log.actions import AddFile
from sqlext.log.pruning import conjuncts
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog

_ROW = "__sqlext_lm_row"          # the joined row's target row (index into the candidates' rows)
_SOURCE_ROW = "__sqlext_lm_srow"  # its source row
_MATCHES = "__sqlext_lm_on"       # ON <=> true over a candidate pair
_PAIRED = "__sqlext_lm_matched"


@dataclass
class DriverMerge:
    """What the driver path did: the candidate files it rewrote, the files it wrote (data and
    change files, not committed), whether any target row matched, and how many rows WHEN
    MATCHED clauses updated and deleted and NOT MATCHED BY SOURCE clauses updated and
    deleted. ``several``: a target row matched several source rows (nothing written)."""

    rewrite: list[AddFile] = field(default_factory=list)
    written: list[WrittenFile] = field(default_factory=list)
    matches: bool = False
    counts: tuple[int, int, int, int] = (0, 0, 0, 0)
    several: bool = False
    time_ms: int = 0


def _plan_classes(spark: SparkSession) -> SimpleNamespace:
    """Spark's ``LocalRelation``, ``Join`` and ``Dataset`` classes and a full outer join's type,
    empty condition and hint (found once per session: each step of a JVM name is a py4j round
    trip)."""
    def find():
        jvm = spark._jvm
        logical = jvm.org.apache.spark.sql.catalyst.plans.logical
        return SimpleNamespace(
            local=logical.LocalRelation, join=logical.Join,
            full=jvm.org.apache.spark.sql.catalyst.plans.JoinType.apply("full_outer"),
            none=jvm.scala.Option.empty(), hint=logical.JoinHint.NONE(),
            dataset=jvm.org.apache.spark.sql.classic.Dataset)
    return session_constant(spark, "local_merge_classes", find)


def _nullable_output(spark: SparkSession, frames: list[DataFrame]):
    """The JVM output attributes of ``frames``' analysed plans, in order, made nullable: the
    output of their full outer join (a few round trips, not two per column)."""
    c = _plan_classes(spark)
    plans = [f._jdf.queryExecution().analyzed() for f in frames]
    plan = plans[0]
    for other in plans[1:]:
        plan = c.join(plan, other, c.full, c.none, c.hint)
    return plan.output()


def _relation(spark: SparkSession, rows: pa.Table, schema: T.StructType, attributes
              ) -> DataFrame:
    """``rows`` (of ``schema``'s types, by position) as a ``LocalRelation`` whose output is
    ``attributes`` (a Scala ``Seq`` of JVM attributes of other plans, one per column, in order):
    expressions bound to those plans resolve over it."""
    c = _plan_classes(spark)
    data = frame_from_arrow(spark, rows, schema)._jdf.queryExecution().analyzed()
    relation = c.local(attributes, data.data(), False, data.stream())
    return DataFrame(c.dataset.ofRows(spark._jsparkSession, relation), spark)


def _plain(snapshot: Snapshot, plan: MergePlan) -> bool:
    """Whether the MERGE is one this path covers: no schema change, no deletion vectors, stable
    row ids, computed columns or values evaluated over one side's carried columns."""
    from sqlext.engine.dml.marking import uses_deletion_vectors
    return not (plan.schema_changed or plan.late_kinds() or uses_deletion_vectors(snapshot)
                or stable_row_id_columns(snapshot) is not None
                or computed_columns(plan.new_schema))


class _Sides:
    """The two sides of the MERGE as Arrow rows and as Spark frames."""

    def __init__(self, spark, log, snapshot, plan: MergePlan, candidates, keys):
        self.rows = Candidates(log, snapshot, candidates)
        self.target = plan.target_side(self.rows.frame(spark, None))
        self.source = plan.source_side()
        target_values = collect_arrow(self.target)
        exprs = [F.expr(k.source.sql(dialect="spark")).alias(f"__sqlext_lm_k{i}")
                 for i, k in enumerate(keys)]
        keyed = self.source.select("*", *exprs)
        source_values = collect_arrow(keyed)
        self.ok = target_values is not None and source_values is not None
        if not self.ok:
            return
        source_fields = keyed.schema.fields
        width = len(source_fields) - len(keys)
        self.target_values = target_values
        self.source_values = source_values.select(list(range(width)))
        self.source_keys = source_values.select(list(range(width, source_values.num_columns)))
        self.source_types = [f.dataType for f in source_fields[width:]]
        marks = spark.range(0).selectExpr(f"CAST(NULL AS BIGINT) AS {_ROW}",
                                          f"CAST(NULL AS BIGINT) AS {_SOURCE_ROW}")
        self.attributes = _nullable_output(spark, [self.target, self.source, marks])
        types = ([f.dataType for f in self.target.schema.fields]
                 + [f.dataType for f in source_fields[:width]] + [T.LongType(), T.LongType()])
        self.schema = T.StructType([T.StructField(f"c{i}", t, True)
                                    for i, t in enumerate(types)])

    def joined(self, spark, target_rows: list, source_rows: list) -> DataFrame:
        """The joined rows (target row ``target_rows[k]`` with source row ``source_rows[k]``,
        None for a side's absence) as one local relation, with ``_ROW`` and ``_SOURCE_ROW``."""
        t = pa.array(target_rows, pa.int64())
        s = pa.array(source_rows, pa.int64())
        columns = (self.target_values.take(t).columns + self.source_values.take(s).columns
                   + [t, s])
        table = pa.Table.from_arrays(columns, names=[f"c{i}" for i in range(len(columns))])
        return _relation(spark, table, self.schema, self.attributes)


def merge_on_driver(spark: SparkSession, log: DeltaLog, snapshot: Snapshot, plan: MergePlan,
                    candidates: list[AddFile], join_type: str, source_rows: bool
                    ) -> DriverMerge | None:
    """The MERGE's rewrite of ``candidates`` on the driver (see the module), or None when the
    statement is not for this path. ``join_type``: ``full`` or ``left``, the Spark path's join
    (whether unmatched source rows are kept); ``source_rows``: WHEN MATCHED conditions are
    evaluated on unmatched source rows too (:func:`sqlext.engine.merge.eager.
    source_rows_evaluated`)."""
    if is_connect(spark) or not _plain(snapshot, plan):
        return None
    if not candidates:
        # no target row can match: without inserts there is nothing to do
        where = f"table {log.name}, version {snapshot.version}"
        return DriverMerge() if not plan.has_insert and policy.use_driver(spark, 0, where) \
            else None
    if not supported(spark, log, snapshot, candidates):
        return None
    started = time.monotonic()
    on = analyse_on(plan.on.predicate, plan.target_alias, plan.source_alias,
                    [f.name for f in plan.old_schema.fields], plan.source.columns)
    if not on.keys:
        return None
    try:
        sides = _Sides(spark, log, snapshot, plan, candidates, on.keys)
        if not sides.ok:
            return None
        pairs = key_pairs(on.keys, plan.old_schema, sides.rows.rows, sides.source_types,
                           sides.source_keys)
        if pairs is None:
            return None
        # an ON of key equalities alone holds exactly for the pairs the keys gave
        residual = len(conjuncts(plan.on.predicate)) != len(on.keys)
        joined = _evaluate(spark, plan, sides, pairs, join_type, source_rows, residual)
    except Exception:  # noqa: BLE001 - any failure is the Spark path's to raise (or not)
        return None
    if joined is None:
        return None
    if isinstance(joined, DriverMerge):
        return joined
    result = _write(spark, log, snapshot, plan, sides.rows, joined)
    result.time_ms = int((time.monotonic() - started) * 1000)
    return result


def _evaluate(spark, plan: MergePlan, sides: _Sides, pairs: list[tuple[int, int]],
              join_type: str, source_rows: bool, residual: bool):
    """The joined rows with CLAUSE, KIND, the new values (by column name) and old ones
    (``__o<i>``) as Arrow; a DriverMerge marking several matches; None: not for this path.
    ``residual``: the ON condition has more than the key equalities (Spark evaluates it over
    the pairs the keys gave)."""
    matched = pairs
    if pairs and residual:
        candidates = sides.joined(spark, [t for t, _ in pairs], [s for _, s in pairs])
        flags = collect_arrow(candidates.select(plan.on.column.eqNullSafe(F.lit(True))
                                                .alias(_MATCHES)))
        if flags is None:
            return None
        matched = [p for p, ok in zip(pairs, true_mask(flags.column(_MATCHES))) if ok]
    per_target = np.bincount([t for t, _ in matched], minlength=sides.rows.rows.num_rows)
    if per_target.size and per_target.max() > 1:
        return None if plan.only_unconditional_delete else DriverMerge(several=True)
    target_rows: list = [t for t, _ in matched]
    source_rows_: list = [s for _, s in matched]
    target_rows += [int(i) for i in np.flatnonzero(per_target == 0)]
    source_rows_ += [None] * (len(target_rows) - len(source_rows_))
    if join_type == "full":
        paired = {s for _, s in matched}
        unpaired = [j for j in range(sides.source_values.num_rows) if j not in paired]
        target_rows += [None] * len(unpaired)
        source_rows_ += unpaired
    rows = sides.joined(spark, target_rows, source_rows_)
    target, source = sides.target, sides.source
    rows = rows.withColumn(CLAUSE, plan.clause_index(target, source, source_rows))
    clause = F.col(CLAUSE)
    # new values keep the column names new_values gives them (constraints name them)
    named = rows.select(
        F.col(_ROW), plan.matched(target, source).alias(_PAIRED), clause,
        plan.kind(clause, target).alias(KIND), *plan.new_values(clause, target, source),
        *[c.alias(f"__o{i}") for i, c in enumerate(plan.old_values(target))])
    constraints = table_constraints(plan.new_schema, plan.snapshot.configuration)
    if constraints:     # (the written-row filter alone is ~20 py4j round trips)
        named = enforce(named, constraints, F.col(KIND).isin(COPY, UPDATE, INSERT))
    return collect_arrow(named)


def _counts(plan: MergePlan, result: pa.Table) -> tuple[int, int, int, int]:
    """Rows updated and deleted by WHEN MATCHED clauses, then by NOT MATCHED BY SOURCE ones."""
    clause = result.column(CLAUSE).to_numpy(zero_copy_only=False)
    paired = true_mask(result.column(_PAIRED))
    target = ~np.asarray(result.column(_ROW).is_null().to_numpy(zero_copy_only=False))

    def count(action: str, kind: str, rows: np.ndarray) -> int:
        return int((np.isin(clause, plan.indexes(action, kind)) & rows).sum())

    unpaired = target & ~paired
    return (count("update", MATCHED, paired), count("delete", MATCHED, paired),
            count("update", NOT_MATCHED_BY_SOURCE, unpaired),
            count("delete", NOT_MATCHED_BY_SOURCE, unpaired))


def _images(result: pa.Table, names: list[str], selected: np.ndarray, old: bool,
            change_type: str | None) -> pa.Table:
    """The rows of ``result`` where ``selected``: their new (or ``old``) values, named as the
    table's columns, with a ``_change_type`` column when ``change_type`` is given."""
    rows = result.filter(pa.array(selected))
    columns = [rows.column(f"__o{i}" if old else n) for i, n in enumerate(names)]
    table = pa.Table.from_arrays(columns, names=names)
    if change_type is not None:
        table = table.append_column(CHANGE_TYPE,
                                    pa.array([change_type] * table.num_rows, pa.string()))
    return table


def _write(spark, log: DeltaLog, snapshot: Snapshot, plan: MergePlan, rows: Candidates,
           result: pa.Table) -> DriverMerge:
    """Write the touched files' new rows, the inserted rows and (change feed) the change rows,
    grouped as the Spark path's one-pass rewrite groups them."""
    names = [f.name for f in plan.new_schema.fields]
    kind = np.asarray(result.column(KIND).to_numpy(zero_copy_only=False), dtype=object)
    clause = result.column(CLAUSE)
    row = result.column(_ROW)
    target = ~np.asarray(row.is_null().to_numpy(zero_copy_only=False))
    file_of = np.full(len(kind), -1)
    file_of[target] = rows.file_of_row[np.asarray(row.drop_null().to_numpy(), dtype=np.int64)]
    acting = target & ~np.asarray(clause.is_null().to_numpy(zero_copy_only=False))
    touched = np.unique(file_of[acting])
    changes = snapshot.change_data_feed_enabled
    out = DriverMerge(rewrite=[rows.files[i] for i in touched],
                      matches=bool(true_mask(result.column(_PAIRED)).any()),
                      counts=_counts(plan, result))

    def put(table: pa.Table, what: str) -> None:
        if table.num_rows:
            out.written.extend(write_local(spark, log, snapshot.metadata, table, kind=what,
                                           version=snapshot.version))

    try:
        for group in [file_of == i for i in touched] + [~target]:
            put(_images(result, names, group & np.isin(kind, [COPY, UPDATE, INSERT]), False,
                        None), "data")
            if changes:
                put(pa.concat_tables([
                    _images(result, names, group & (kind == UPDATE), True, "update_preimage"),
                    _images(result, names, group & (kind == UPDATE), False, "update_postimage"),
                    _images(result, names, group & (kind == DELETE), True, "delete"),
                    _images(result, names, group & (kind == INSERT), False, "insert")]), "cdc")
    except BaseException:
        for written in out.written:     # nothing will commit them
            log.store.delete(log.store.join(log.location, *written.path.split("/")))
        raise
    return out
