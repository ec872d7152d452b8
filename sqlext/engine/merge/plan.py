"""A MERGE statement analysed before any data is read: clauses checked, ``*`` expanded, schema
evolution decided, every condition and value resolved in its scope and cast to its column's type.

Scopes are delta-spark's: WHEN MATCHED conditions and values see target and source, WHEN NOT
MATCHED ones the source only, WHEN NOT MATCHED BY SOURCE ones the target only. Every value is
evaluated after the join, inside the CASE WHEN branch of its clause, so only for the rows the
clause takes, as delta-spark evaluates them (a value that would fail for other rows, e.g. an
overflowing cast of a matched row's source value in an INSERT clause, does not fail the MERGE).
Conditions are evaluated eagerly, on the rows delta-spark evaluates them on whatever clause
takes the row (:mod:`sqlext.engine.merge.eager`): those of the last two kinds are computed on
their own side before the join (``target_side`` / ``source_side``), for every row of that side
(``WHEN NOT MATCHED AND 10 / s.b > 1`` fails for a matched source row with ``b = 0`` in both),
a NOT MATCHED BY SOURCE condition also over the joined rows when it analyses there. A value of those kinds that names without
a qualifier a column both sides have (which the joined rows cannot tell apart) is evaluated after
the join over its side's columns alone, carried through the join as a struct (:meth:`MergePlan.
with_late_values`).

The expressions the execution needs over the joined rows (which clause acts, what kind of change
that is, the new and old values of each column) come from :meth:`MergePlan.clause_index` and
friends; :mod:`sqlext.engine.merge.command` runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine import connect_plans
from sqlext.engine.dml.assignments import assign, split_name, target_path
from sqlext.engine.conditions import Condition, resolve_condition
from sqlext.engine.dml.command import table_frame
from sqlext.engine.merge import eager
from sqlext.engine.merge.clauses import (KIND_NAMES, MATCHED, NOT_MATCHED, NOT_MATCHED_BY_SOURCE,
                                         Clause, omits_condition_early)
from sqlext.engine.generated import (computed_columns, refuse_explicit_identity,
                                     refuse_identity_update)
from sqlext.engine.schemas import (nested_type, quote_identifier, refuse_dependent_widening,
                                   spark_schema, widened_at, written_metadata)
from sqlext.engine.session import is_connect
from sqlext.errors import AnalysisException
from sqlext.log import operations as ops
from sqlext.log import type_widening
from sqlext.log.snapshot import Snapshot

OPERATION = ops.Merge.name
TARGET_PRESENT = "__sqlext_m_tp"
SOURCE_PRESENT = "__sqlext_m_sp"
CLAUSE = "__sqlext_m_clause"
KIND = "__sqlext_m_kind"
UPDATE, DELETE, INSERT, COPY = "U", "D", "I", "C"
#: the struct of a side's columns that joined rows carry for the values in ``late``
PACKED = {NOT_MATCHED: "__sqlext_m_source_row", NOT_MATCHED_BY_SOURCE: "__sqlext_m_target_row"}


def source_alias(df: DataFrame) -> str | None:
    """The alias of a DataFrame (``df.alias("s")``), or None."""
    if is_connect(df.sparkSession):
        return connect_plans.dataframe_alias(df)
    try:
        plan = df._jdf.queryExecution().analyzed()
        return str(plan.alias()) if plan.nodeName() == "SubqueryAlias" else None
    except Exception:  # noqa: BLE001 - no JVM plan (e.g. Spark Connect): conditions still work
        return None


@dataclass
class ResolvedClause:
    """A clause with its condition and values resolved (values cast to the column types)."""

    clause: Clause
    index: int                               # position among all clauses: the CLAUSE value
    condition: Condition | None
    values: dict[str, Column] | None = None  # new-schema column -> value; absent: unchanged
    #: new-schema column -> the column of the clause's side its value is, unchanged (a one-sided
    #: clause's plain column values are read from that side after the join, not copied before it)
    plain: dict[str, str] = field(default_factory=dict)
    #: lower-case names of the columns the clause gives a value (generated and identity columns
    #: it leaves out are computed)
    given: set[str] = field(default_factory=set)
    #: (one-sided clauses) the values that resolve the same over the joined rows and are
    #: evaluated there, in the clause's branch; the others are computed on the clause's side
    #: before the join
    deferred: set[str] = field(default_factory=set)
    #: (one-sided clauses) values that analyse over the clause's side only (an unqualified name
    #: both sides have): evaluated after the join over that side's carried columns
    late: set[str] = field(default_factory=set)
    #: (WHEN NOT MATCHED BY SOURCE) the condition analyses over the joined rows too: it is
    #: evaluated there, so also on unmatched source rows (as delta-spark)
    condition_joined: bool = False
    #: (WHEN NOT MATCHED BY SOURCE) the condition with its target names qualified, when that
    #: is what analyses over the joined rows
    joined_condition: Column | None = None

    @property
    def kind(self) -> str:
        return self.clause.kind

    @property
    def action(self) -> str:
        return self.clause.action

    def condition_column(self) -> str:
        return f"__sqlext_m{self.index}_c"

    def value_column(self, position: int) -> str:
        return f"__sqlext_m{self.index}_v{position}"

    def predicate_parameter(self) -> dict:
        """delta-spark's ``MergePredicate`` for ``operationParameters``."""
        out = {"predicate": self.condition.sql} if self.condition is not None else {}
        out["actionType"] = self.action
        return out


#: delta-spark's MERGE builder's conditions for a clause that omits its condition but is not
#: the last of its kind (the SQL parser's are :data:`sqlext.sql.plan_dml`'s)
OMITTED_CONDITION_CLASSES = {
    MATCHED: "DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION",
    NOT_MATCHED: "DELTA_NON_LAST_NOT_MATCHED_CLAUSE_OMIT_CONDITION",
    NOT_MATCHED_BY_SOURCE: "DELTA_NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION"}


def check_clause_order(clauses: tuple[Clause, ...], where: str) -> None:
    """Every clause but the last of its kind needs a condition; a MERGE needs a clause."""
    if not clauses:
        raise AnalysisException(f"{where}: MERGE needs at least one WHEN clause (e.g. "
                                "whenMatchedUpdateAll() or whenNotMatchedInsertAll())")
    kind = omits_condition_early([(c.kind, c.condition is not None) for c in clauses])
    if kind is not None:
        first = next(c for c in clauses if c.kind == kind and c.condition is None)
        raise AnalysisException(
            f"{where}: when there is more than one {KIND_NAMES[kind]} clause in a MERGE, only the "
            f"last one may omit its condition; {first.describe()} is not the last. Add a "
            "condition or remove the clauses after it. The table is unchanged.",
            error_class=OMITTED_CONDITION_CLASSES[kind], sqlstate="42601")


def _plain_columns(project, columns: list[str]) -> dict[int, str]:
    """``{position: column name}`` for the expressions of an analysed ``Project`` over one
    relation that are just one of its columns (``columns``: the relation's, each name unique)."""
    out = {}
    if project is None:     # no analysed plan (Spark Connect): every value is computed
        return out
    unique = {c for c in columns if sum(o.lower() == c.lower() for o in columns) == 1}
    expressions = project.projectList()
    for i in range(expressions.size()):
        item = expressions.apply(i)
        if item.nodeName() != "Alias":
            continue
        child = item.child()
        if child.nodeName() == "AttributeReference" and child.name() in unique:
            out[i] = child.name()
    return out


def _analyses(frame: DataFrame, columns: list[Column]) -> bool:
    """Whether every one of ``columns`` analyses over ``frame``."""
    try:
        frame.select(*[col.alias(f"__sqlext_d{i}") for i, col in enumerate(columns)]
                     ).schema  # noqa: B018 - analysis only
        return True
    except Exception:  # noqa: BLE001 - ambiguous or unresolvable over ``frame``
        return False


def _mark_analysing(frame: DataFrame, items: list[tuple], mark: str) -> list[tuple]:
    """Add each ``(clause, value name, column)`` whose column analyses over ``frame`` to the
    clause's set ``mark`` (one analysis when all do); return the others."""
    if not items:
        return []
    ok = [True] * len(items) if _analyses(frame, [col for _, _, col in items]) else \
        [_analyses(frame, [col]) for _, _, col in items]
    for (c, name, _), fine in zip(items, ok):
        if fine:
            getattr(c, mark).add(name)
    return [item for item, fine in zip(items, ok) if not fine]


def column_of(df: DataFrame, name: str) -> Column:
    """``df``'s column ``name`` (a top-level name, even with dots or backticks in it)."""
    return df[quote_identifier(name)]


class MergePlan:
    """The analysed MERGE of ``source`` into the table at ``snapshot``."""

    def __init__(self, spark: SparkSession, table: str, snapshot: Snapshot, source: DataFrame,
                 on, clauses: tuple[Clause, ...], target_alias: str | None,
                 schema_evolution: bool):
        self.spark = spark
        self.snapshot = snapshot
        self.where = f"table {table}, version {snapshot.version}"
        self.target_alias = target_alias
        # the target's name in the plan: the user's alias, or, when a key may name a nested
        # field (whose assignment reads the old struct through it), one of sqlext's own
        dotted = any(len(split_name(key)) > 1 for c in clauses for key, _ in c.assignments or ())
        self._target_ref = target_alias or ("__sqlext_m_target" if dotted else None)
        check_clause_order(clauses, self.where)
        self.source_alias = source_alias(source)
        self.source = source
        self.schema_evolution = schema_evolution
        self.old_schema = spark_schema(snapshot.metadata.schema_string)
        self._old = {f.name.lower(): f for f in self.old_schema.fields}
        self._src = {f.name.lower(): f for f in source.schema.fields}
        self.new_schema = self._evolve(clauses)
        if self.new_schema != self.old_schema:
            refuse_dependent_widening(table, snapshot, self.new_schema)
        self.target_frame = table_frame(spark, snapshot, self._target_ref)
        joined = self.target_frame.crossJoin(source)
        self.on = resolve_condition(joined, on, table, snapshot.version, f"{OPERATION} ON")
        self.clauses = [self._resolve(i, c, joined, table) for i, c in enumerate(clauses)]
        self._defer(joined)

    # --- clauses by kind -----------------------------------------------------------------------

    def of(self, kind: str) -> list[ResolvedClause]:
        return [c for c in self.clauses if c.kind == kind]

    @property
    def has_insert(self) -> bool:
        return bool(self.of(NOT_MATCHED))

    @property
    def insert_only(self) -> bool:
        return not self.of(MATCHED) and not self.of(NOT_MATCHED_BY_SOURCE)

    @property
    def only_unconditional_delete(self) -> bool:
        """delta-spark lets several source rows match one target row for this clause alone."""
        matched = self.of(MATCHED)
        return len(matched) == 1 and matched[0].action == "delete" and matched[0].condition is None

    @property
    def schema_changed(self) -> bool:
        return self.new_schema != self.old_schema

    def operation(self) -> ops.Merge:
        """The MERGE as the commit records it (delta-spark's ``operationParameters``)."""
        return ops.Merge(self.on.sql,
                         tuple(c.predicate_parameter() for c in self.of(MATCHED)),
                         tuple(c.predicate_parameter() for c in self.of(NOT_MATCHED)),
                         tuple(c.predicate_parameter() for c in self.of(NOT_MATCHED_BY_SOURCE)))

    # --- schema --------------------------------------------------------------------------------

    def _evolve(self, clauses: tuple[Clause, ...]) -> T.StructType:
        """The target schema after the MERGE: with schema evolution, source columns that ``*``
        clauses (or assignments naming them) bring in are appended; without it, ``*`` ignores
        source columns the target does not have."""
        added: dict[str, T.StructField] = {}
        for c in clauses:
            if c.star:
                computed = {n.lower() for n in computed_columns(self.old_schema)}
                missing = [f.name for f in self.old_schema.fields
                           if f.name.lower() not in self._src and f.name.lower() not in computed]
                extra = [f for f in self.source.schema.fields if f.name.lower() not in self._old]
                if missing and not self.schema_evolution:
                    raise AnalysisException(
                        f"{self.where}: {c.describe()} sets every target column from the source "
                        f"column of the same name, but the source has no column(s) "
                        f"{', '.join(missing)} (source columns: {', '.join(self.source.columns)})."
                        " Add them to the source, list the columns explicitly, or use "
                        "withSchemaEvolution(). The table is unchanged.")
                # without schema evolution, source columns the target lacks are ignored (as
                # delta-spark's star expansion does); with it, they are added
                if self.schema_evolution:
                    for f in extra:
                        added.setdefault(f.name.lower(), f)
            elif c.assignments and self.schema_evolution and c.action != "delete" \
                    and c.kind != NOT_MATCHED_BY_SOURCE:
                for key, _ in c.assignments:
                    name = self._key_name(key)
                    if name.lower() not in self._old and name.lower() in self._src:
                        added.setdefault(name.lower(), self._src[name.lower()])
        fields = [self._widened(f, clauses) for f in self.old_schema.fields]
        for f in added.values():
            dt = T.StringType() if isinstance(f.dataType, T.NullType) else f.dataType
            fields.append(T.StructField(f.name, dt, True, written_metadata(f.metadata)))
        return T.StructType(fields)

    def _widened(self, field: T.StructField, clauses: tuple[Clause, ...]) -> T.StructField:
        """``field`` widened to its source column's type when schema evolution is on, the
        table's type widening is enabled, a clause sets it from that column (``*``, or
        ``c = s.c``) and the change is a Delta widening (delta-spark's MERGE type evolution)."""
        source = self._src.get(field.name.lower())
        conf = self.snapshot.metadata.configuration
        if not (self.schema_evolution and source is not None and type_widening.enabled(conf)
                and type_widening.supported(self.snapshot.protocol)):
            return field
        setting = [c for c in clauses if c.action != "delete" and c.kind != NOT_MATCHED_BY_SOURCE]
        if any(c.star for c in setting):
            return widened_at(field, [], source.dataType)
        for key in {tuple(self._key_parts(k)) for c in setting for k, _ in c.assignments or ()}:
            if key[0].lower() == field.name.lower():     # SET s = src.s, SET s.x = src.s.x
                field = widened_at(field, list(key[1:]), nested_type(source.dataType, key[1:]))
        return field

    def _key_name(self, key: str) -> str:
        """A ``set``/``values`` key without the target alias and quotes (parts joined by dots
        for a nested field)."""
        return ".".join(self._key_parts(key))

    def _key_parts(self, key: str) -> list[str]:
        """A key's name parts, the target alias dropped (a column named like the key wins)."""
        if key.strip().lower() in self._old:
            return [key.strip()]
        parts = split_name(key)
        alias = self.target_alias
        if alias and len(parts) > 1 and parts[0].lower() == alias.lower() \
                and ".".join(parts).lower() not in self._old:
            parts = parts[1:]
        return parts

    # --- resolving clauses ---------------------------------------------------------------------

    def _scope(self, kind: str, joined: DataFrame) -> tuple[DataFrame, str]:
        if kind == MATCHED:
            return joined, "target and source"
        if kind == NOT_MATCHED:
            return self.source, "the source only"
        return self.target_frame, "the target only"

    def _resolve(self, index: int, clause: Clause, joined: DataFrame,
                 table: str) -> ResolvedClause:
        frame, scope = self._scope(clause.kind, joined)
        what = f"{OPERATION} {clause.describe()} (which may refer to {scope})"
        condition = None
        if clause.condition is not None:
            condition = resolve_condition(frame, clause.condition, table,
                                          self.snapshot.version, what)
        resolved = ResolvedClause(clause, index, condition)
        if clause.action != "delete":
            resolved.values, resolved.plain, resolved.given = self._values(clause, frame, what)
            if clause.action == "insert":
                refuse_explicit_identity(self.new_schema, resolved.given, self.where, what)
            else:
                refuse_identity_update(self.new_schema, resolved.given, self.where, what)
        return resolved

    def _targets(self, clause: Clause, what: str) -> list[tuple]:
        """``[(target path, value, shown text or None)]`` of a clause, ``*`` expanded."""
        items: list[tuple] = []
        if clause.star:
            for f in self.new_schema.fields:
                src = self._src.get(f.name.lower())
                if src is not None:
                    items.append(([f], column_of(self.source, src.name),
                                  f"{self.source_alias or 'source'}.{src.name}"))
            return items
        for key, value in clause.assignments:
            path = target_path(self.new_schema, self._key_parts(key))
            if path is None or (clause.kind == NOT_MATCHED_BY_SOURCE
                                and path[0].name.lower() not in self._old):
                name = self._key_name(key)
                hint = ""
                if not self.schema_evolution and name.lower() in self._src:
                    hint = " Use withSchemaEvolution() to add source columns to the table."
                raise AnalysisException(
                    f"{self.where}: {what} assigns column {key!r}, which the target table does "
                    f"not have (a nested field is named by its path, e.g. a.b.c). Columns: "
                    f"{', '.join(f.name for f in self.old_schema.fields)}.{hint} The table is "
                    "unchanged.")
            if len(path) > 1 and (clause.action == "insert"
                                  or path[0].name.lower() not in self._old):
                raise AnalysisException(
                    f"{self.where}: {what} assigns the nested field {key!r}: an INSERT (or a "
                    "column the MERGE adds) takes whole columns only (as in delta-spark); give "
                    "the struct, e.g. with named_struct. The table is unchanged.")
            items.append((path, value, None))
        return items

    def _values(self, clause: Clause, frame: DataFrame, what: str
                ) -> tuple[dict[str, Column], dict[str, str], set[str]]:
        """The clause's values (whole columns; a nested assignment rebuilds its column) cast to
        their columns' types, (for clauses that see one side only) which of them are a
        column of that side, unchanged, and the lower-case names of the columns given."""
        items = self._targets(clause, what)
        named = {path[0].name.lower() for path, _, _ in items}
        if clause.action == "insert":    # columns not given are NULL (or computed)
            given = {path[0].name for path, _, _ in items}
            items += [([f], F.lit(None), "NULL") for f in self.new_schema.fields
                      if f.name not in given]
        target = self._target_ref

        def old(name: str) -> Column:
            return F.col(f"{quote_identifier(target)}.{quote_identifier(name)}")

        assigned = assign(frame, self.new_schema, items, old, self.where, what)
        plain = {}
        if clause.kind != MATCHED:
            side = _plain_columns(assigned.plan, frame.columns)
            plain = {n: side[i] for n, i in assigned.direct.items() if i in side}
        return assigned.values, plain, named

    def _defer(self, joined: DataFrame) -> None:
        """Mark the values of one-sided clauses that can be evaluated over the joined rows:
        those that analyse there too. They mean the same there (a qualified name names the same
        side; an unqualified one resolved on the clause's side, so over the join it names that
        side's column or, when the other side has one too, fails to analyse). Those that do not
        are ``late`` when they analyse over their side's columns carried through the join (the
        rows :meth:`with_late_values` sees); any other stays computed on its side before the
        join. Plain columns need nothing (read after the join)."""
        items = []     # (clause, value name, column)
        for c in self.clauses:
            if c.kind == MATCHED:
                continue
            items += [(c, name, value) for name, value in (c.values or {}).items()
                      if name not in c.plain]
        rest = _mark_analysing(joined, items, "deferred")
        for c in self.of(NOT_MATCHED_BY_SOURCE):
            if c.condition is not None:
                c.condition_joined = _analyses(joined, [c.condition.column])
                scoped = None if c.condition_joined else eager.target_scoped(
                    c.condition, self._target_ref, set(self._old))
                if scoped is not None and _analyses(joined, [scoped]):
                    c.joined_condition, c.condition_joined = scoped, True
        for kind in {c.kind for c, _, _ in rest}:
            packed = joined.select(self._packed(kind, self.target_frame, self.source))
            _mark_analysing(self._side_view(packed, kind),
                            [item for item in rest if item[0].kind == kind], "late")

    def _packed(self, kind: str, target: DataFrame, source: DataFrame) -> Column:
        """The struct of the ``kind`` clauses' side's columns, over the joined rows."""
        side, columns = ((source, self.source.columns) if kind == NOT_MATCHED
                         else (target, [f.name for f in self.old_schema.fields]))
        return F.struct(*[column_of(side, c) for c in columns]).alias(PACKED[kind])

    def _side_view(self, rows: DataFrame, kind: str) -> DataFrame:
        """``rows`` with the ``kind`` clauses' side's columns unpacked, under the side's alias."""
        view = rows.select("*", F.col(f"{PACKED[kind]}.*"))
        alias = self.source_alias if kind == NOT_MATCHED else self._target_ref
        return view.alias(alias) if alias else view

    def late_kinds(self) -> list[str]:
        """The one-sided clause kinds with ``late`` values."""
        return [k for k in (NOT_MATCHED, NOT_MATCHED_BY_SOURCE) if any(c.late for c in self.of(k))]

    def packed_sides(self, target: DataFrame, source: DataFrame) -> list[Column]:
        """The structs :meth:`with_late_values` needs from the joined rows."""
        return [self._packed(kind, target, source) for kind in self.late_kinds()]

    def with_late_values(self, rows: DataFrame) -> DataFrame:
        """``rows`` (joined rows with CLAUSE, the new values ``__n<i>`` and the
        :meth:`packed_sides`) with the ``late`` values set where their clause acts, each
        evaluated over its side's columns alone; the packed structs dropped."""
        kinds = self.late_kinds()
        if not kinds:
            return rows
        columns = [c for c in rows.columns if c not in PACKED.values()]
        positions = {f.name: i for i, f in enumerate(self.new_schema.fields)}
        for kind in kinds:
            view = self._side_view(rows, kind)
            values: dict[str, Column] = {}
            for c in self.of(kind):
                for name in c.late:
                    out = f"__n{positions[name]}"
                    values[out] = F.when(F.col(CLAUSE) == F.lit(c.index), c.values[name]
                                         ).otherwise(values.get(out, F.col(out)))
            rows = view.withColumns(values).select(
                *[F.col(quote_identifier(c)) for c in rows.columns])
        return rows.select(*[F.col(quote_identifier(c)) for c in columns])

    # --- the two sides of the join -------------------------------------------------------------

    def target_side(self, target: DataFrame) -> DataFrame:
        """The target rows (aliased) plus a presence flag and the NOT MATCHED BY SOURCE
        conditions and values, computed from the target row alone."""
        if self._target_ref:
            target = target.alias(self._target_ref)
        return target.withColumns(self._side_columns(TARGET_PRESENT, NOT_MATCHED_BY_SOURCE))

    def source_side(self, conditions: bool = True) -> DataFrame:
        """The source rows plus a presence flag and the WHEN NOT MATCHED values and (with
        ``conditions``) conditions, computed from the source row alone."""
        columns = self._side_columns(SOURCE_PRESENT, NOT_MATCHED)
        if not conditions:
            columns = {k: v for k, v in columns.items() if k not in self.condition_columns()}
        return self.source.withColumns(columns)

    def _side_columns(self, presence: str, kind: str) -> dict[str, Column]:
        """The presence flag, and the conditions and values of the ``kind`` clauses (those that
        see only one side of the join)."""
        cols = {presence: F.lit(True)}
        positions = {f.name: i for i, f in enumerate(self.new_schema.fields)}
        for c in self.of(kind):
            if c.condition is not None:
                cols[c.condition_column()] = c.condition.column
            for name, value in (c.values or {}).items():
                if name not in c.plain and name not in c.deferred and name not in c.late:
                    cols[c.value_column(positions[name])] = value
        return cols

    def condition_columns(self) -> set[str]:
        """The names of the condition columns :meth:`target_side` and :meth:`source_side`
        add."""
        return {c.condition_column() for c in self.clauses if c.condition is not None}

    # --- expressions over the joined rows ------------------------------------------------------

    def _condition(self, c: ResolvedClause, target: DataFrame, source: DataFrame) -> Column:
        if c.condition is None:
            return F.lit(True)
        if c.kind == MATCHED:
            return c.condition.column
        side = target if c.kind == NOT_MATCHED_BY_SOURCE else source
        return side[c.condition_column()]

    def first(self, kind: str, target: DataFrame | None, source: DataFrame | None) -> Column:
        """The index of the first clause of ``kind`` whose condition holds (NULL: none)."""
        expr = None
        for c in self.of(kind):
            cond = self._condition(c, target, source)
            expr = F.when(cond, F.lit(c.index)) if expr is None else expr.when(cond, F.lit(c.index))
        return expr if expr is not None else F.lit(None).cast("int")

    def matched(self, target: DataFrame, source: DataFrame) -> Column:
        return target[TARGET_PRESENT].isNotNull() & source[SOURCE_PRESENT].isNotNull()

    def clause_index(self, target: DataFrame, source: DataFrame,
                     source_rows: bool = False) -> Column:
        """Which clause acts on a joined row (NULL: none). Without clause conditions, the first
        clause of the row's kind; with them, every condition is evaluated on the rows
        delta-spark evaluates it on (:mod:`sqlext.engine.merge.eager`; ``source_rows``: also
        WHEN MATCHED conditions on unmatched source rows)."""
        t, s = target[TARGET_PRESENT].isNotNull(), source[SOURCE_PRESENT].isNotNull()
        if any(c.condition is not None for c in self.clauses):
            return eager.clause_index(self, t, s, target, source, source_rows)
        return (F.when(t & s, self.first(MATCHED, target, source))
                .when(t, self.first(NOT_MATCHED_BY_SOURCE, target, source))
                .when(s, self.first(NOT_MATCHED, target, source)))

    def condition_column(self, c: ResolvedClause, target: DataFrame | None,
                         source: DataFrame | None) -> Column:
        """``c``'s condition over the joined rows (TRUE without one): a WHEN MATCHED condition,
        or a one-sided one that analyses there, itself; any other the column computed on its
        side before the join."""
        if c.joined_condition is not None:
            return c.joined_condition
        if c.kind == MATCHED or c.condition_joined:
            return c.condition.column if c.condition is not None else F.lit(True)
        return self._condition(c, target, source)

    def indexes(self, action: str, kind: str | None = None) -> list[int]:
        return [c.index for c in self.clauses
                if c.action == action and (kind is None or c.kind == kind)]

    def kind(self, clause: Column, target: DataFrame) -> Column:
        """The row's fate: UPDATE, DELETE, INSERT, COPY (a target row no clause changes), or NULL
        (a source row no clause inserts)."""
        # one clause: an equality (a one-value IN is one after optimization; fewer round trips)
        branches = [(clause == idx[0] if len(idx) == 1 else clause.isin(idx), code)
                    for action, code in
                    (("update", UPDATE), ("delete", DELETE), ("insert", INSERT))
                    if (idx := self.indexes(action))]
        branches.append((target[TARGET_PRESENT].isNotNull(), COPY))
        expr = F.when(branches[0][0], F.lit(branches[0][1]))
        for cond, code in branches[1:]:
            expr = expr.when(cond, F.lit(code))
        return expr

    def new_values(self, clause: Column, target: DataFrame | None,
                   source: DataFrame) -> list[Column]:
        """Each column of the new schema after the acting clause (the old value when no clause
        sets it), aliased by name. Without ``target`` (inserts only) there is no old value."""
        out = []
        acts: dict[int, Column] = {}
        for pos, f in enumerate(self.new_schema.fields):
            old = (column_of(target, f.name) if target is not None and f.name.lower() in self._old
                   else F.lit(None).cast(f.dataType))
            expr = None
            for c in self.clauses:
                if c.values is None or f.name not in c.values or (
                        target is None and c.kind != NOT_MATCHED):
                    continue
                side = target if c.kind == NOT_MATCHED_BY_SOURCE else source
                if f.name in c.late and target is not None:
                    continue        # set by with_late_values
                if c.kind == MATCHED or f.name in c.deferred or f.name in c.late:
                    value = c.values[f.name]
                elif f.name in c.plain:
                    value = column_of(side, c.plain[f.name])
                else:
                    value = side[c.value_column(pos)]
                if c.index not in acts:     # built once for all columns
                    acts[c.index] = clause == F.lit(c.index)
                cond = acts[c.index]
                expr = F.when(cond, value) if expr is None else expr.when(cond, value)
            out.append((expr.otherwise(old) if expr is not None else old).alias(f.name))
        return out

    def old_values(self, target: DataFrame) -> list[Column]:
        """Each column of the new schema as the target row had it (NULL for new columns)."""
        return [(column_of(target, f.name) if f.name.lower() in self._old
                 else F.lit(None).cast(f.dataType)).alias(f.name)
                for f in self.new_schema.fields]
