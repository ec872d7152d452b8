"""A MERGE statement analysed before any data is read: clauses checked, ``*`` expanded, schema
evolution decided, every condition and value resolved in its scope and cast to its column's type.

Scopes are delta-spark's: WHEN MATCHED conditions and values see target and source, WHEN NOT
MATCHED ones the source only, WHEN NOT MATCHED BY SOURCE ones the target only. Values of the
last two kinds are computed on their own side before the join (``target_side`` /
``source_side``), so that an unqualified source column never collides with a target column.

The expressions the execution needs over the joined rows (which clause acts, what kind of change
that is, the new and old values of each column) come from :meth:`MergePlan.clause_index` and
friends; :mod:`sqlext.engine.merge` runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.engine.conditions import Condition, as_column, resolve_condition, store_assign
from sqlext.engine.dml import table_frame
from sqlext.engine.merge_builder import (KIND_NAMES, MATCHED, NOT_MATCHED, NOT_MATCHED_BY_SOURCE,
                                         Clause)
from sqlext.engine.schemas import spark_schema
from sqlext.errors import AnalysisException, SchemaMismatchError
from sqlext.log.snapshot import Snapshot

OPERATION = "MERGE"
TARGET_PRESENT = "__sqlext_m_tp"
SOURCE_PRESENT = "__sqlext_m_sp"
CLAUSE = "__sqlext_m_clause"
KIND = "__sqlext_m_kind"
UPDATE, DELETE, INSERT, COPY = "U", "D", "I", "C"


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__).split(" SQLSTATE:")[0]


def source_alias(df: DataFrame) -> str | None:
    """The alias of a DataFrame (``df.alias("s")``), or None."""
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


def check_clause_order(clauses: tuple[Clause, ...], where: str) -> None:
    """Every clause but the last of its kind needs a condition; a MERGE needs a clause."""
    if not clauses:
        raise AnalysisException(f"{where}: MERGE needs at least one WHEN clause (e.g. "
                                "whenMatchedUpdateAll() or whenNotMatchedInsertAll())")
    for kind, name in KIND_NAMES.items():
        of_kind = [c for c in clauses if c.kind == kind]
        for c in of_kind[:-1]:
            if c.condition is None:
                raise AnalysisException(
                    f"{where}: when there is more than one {name} clause in a MERGE, only the "
                    f"last one may omit its condition; {c.describe()} is not the last. Add a "
                    "condition or remove the clauses after it. The table is unchanged.")


def _plain_columns(project, columns: list[str]) -> dict[int, str]:
    """``{position: column name}`` for the expressions of an analysed ``Project`` over one
    relation that are just one of its columns (``columns``: the relation's, each name unique)."""
    unique = {c for c in columns if sum(o.lower() == c.lower() for o in columns) == 1}
    out = {}
    expressions = project.projectList()
    for i in range(expressions.size()):
        item = expressions.apply(i)
        if item.nodeName() != "Alias":
            continue
        child = item.child()
        if child.nodeName() == "AttributeReference" and child.name() in unique:
            out[i] = child.name()
    return out


def column_of(df: DataFrame, name: str) -> Column:
    """``df``'s column ``name`` (a top-level name, even with dots or backticks in it)."""
    return df["`" + name.replace("`", "``") + "`"]


def _unquote(name: str) -> str:
    name = name.strip()
    if len(name) >= 2 and name[0] == name[-1] == "`":
        return name[1:-1].replace("``", "`")
    return name


class MergePlan:
    """The analysed MERGE of ``source`` into the table at ``snapshot``."""

    def __init__(self, spark: SparkSession, table: str, snapshot: Snapshot, source: DataFrame,
                 on, clauses: tuple[Clause, ...], target_alias: str | None,
                 schema_evolution: bool):
        self.spark = spark
        self.snapshot = snapshot
        self.where = f"table {table}, version {snapshot.version}"
        self.target_alias = target_alias
        check_clause_order(clauses, self.where)
        self.source_alias = source_alias(source)
        self.source = source
        self.schema_evolution = schema_evolution
        self.old_schema = spark_schema(snapshot.metadata.schema_string)
        self._old = {f.name.lower(): f for f in self.old_schema.fields}
        self._src = {f.name.lower(): f for f in source.schema.fields}
        self.new_schema = self._evolve(clauses)
        self.target_frame = table_frame(spark, snapshot, target_alias)
        joined = self.target_frame.crossJoin(source)
        self.on = resolve_condition(joined, on, table, snapshot.version, f"{OPERATION} ON")
        self.clauses = [self._resolve(i, c, joined, table) for i, c in enumerate(clauses)]

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
        return len(self.new_schema.fields) != len(self.old_schema.fields)

    def parameters(self) -> dict:
        """delta-spark's ``operationParameters`` of a MERGE."""
        return {"predicate": [self.on.sql],
                "matchedPredicates": [c.predicate_parameter() for c in self.of(MATCHED)],
                "notMatchedPredicates": [c.predicate_parameter() for c in self.of(NOT_MATCHED)],
                "notMatchedBySourcePredicates": [c.predicate_parameter()
                                                 for c in self.of(NOT_MATCHED_BY_SOURCE)]}

    # --- schema --------------------------------------------------------------------------------

    def _evolve(self, clauses: tuple[Clause, ...]) -> T.StructType:
        """The target schema after the MERGE: with schema evolution, source columns that ``*``
        clauses (or assignments naming them) bring in are appended."""
        added: dict[str, T.StructField] = {}
        for c in clauses:
            if c.star:
                missing = [f.name for f in self.old_schema.fields if f.name.lower() not in self._src]
                extra = [f for f in self.source.schema.fields if f.name.lower() not in self._old]
                if missing and not self.schema_evolution:
                    raise AnalysisException(
                        f"{self.where}: {c.describe()} sets every target column from the source "
                        f"column of the same name, but the source has no column(s) "
                        f"{', '.join(missing)} (source columns: {', '.join(self.source.columns)})."
                        " Add them to the source, list the columns explicitly, or use "
                        "withSchemaEvolution(). The table is unchanged.")
                if extra and not self.schema_evolution:
                    raise SchemaMismatchError(
                        f"{self.where}: {c.describe()}: the source has column(s) the target "
                        f"does not have: {', '.join(f.name for f in extra)}. Use "
                        "withSchemaEvolution() (SQL: MERGE WITH SCHEMA EVOLUTION) to add them, or "
                        "select only the target's columns from the source. The table is "
                        "unchanged.")
                for f in extra:
                    added.setdefault(f.name.lower(), f)
            elif c.assignments and self.schema_evolution and c.action != "delete" \
                    and c.kind != NOT_MATCHED_BY_SOURCE:
                for key, _ in c.assignments:
                    name = self._key_name(key)
                    if name.lower() not in self._old and name.lower() in self._src:
                        added.setdefault(name.lower(), self._src[name.lower()])
        fields = list(self.old_schema.fields)
        for f in added.values():
            dt = T.StringType() if isinstance(f.dataType, T.NullType) else f.dataType
            fields.append(T.StructField(f.name, dt, True, f.metadata))
        return T.StructType(fields)

    def _key_name(self, key: str) -> str:
        """A ``set``/``values`` key without the target alias and quotes."""
        name = _unquote(key)
        alias = self.target_alias
        if alias and name.lower().startswith(alias.lower() + ".") \
                and name.lower() not in self._old:
            name = _unquote(name[len(alias) + 1:])
        return name

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
            resolved.values, resolved.plain = self._values(clause, frame, what)
        return resolved

    def _raw_values(self, clause: Clause, what: str) -> dict[str, tuple[Column, str]]:
        """``{new-schema column name: (value, shown text)}`` before typing."""
        fields = {f.name.lower(): f for f in self.new_schema.fields}
        out: dict[str, tuple[Column, str]] = {}
        if clause.star:
            for f in self.new_schema.fields:
                src = self._src.get(f.name.lower())
                if src is not None:
                    out[f.name] = (column_of(self.source, src.name), f"{self.source_alias or 'source'}."
                                   f"{src.name}")
            return out
        for key, value in clause.assignments:
            name = self._key_name(key)
            field = fields.get(name.lower())
            if field is None or (clause.kind == NOT_MATCHED_BY_SOURCE
                                 and name.lower() not in self._old):
                hint = (" Nested fields cannot be assigned one by one; assign the whole struct "
                        "(e.g. with named_struct)." if "." in name else "")
                if not self.schema_evolution and name.lower() in self._src:
                    hint += " Use withSchemaEvolution() to add source columns to the table."
                raise AnalysisException(
                    f"{self.where}: {what} assigns column {key!r}, which the target table does "
                    f"not have. Columns: {', '.join(f.name for f in self.old_schema.fields)}."
                    f"{hint} The table is unchanged.")
            if field.name in out:
                raise AnalysisException(f"{self.where}: {what} assigns column {field.name!r} "
                                        "more than once. The table is unchanged.")
            column, text = as_column(value, f"value for column {field.name!r}", self.where)
            out[field.name] = (column, text if text is not None else str(column))
        return out

    def _values(self, clause: Clause, frame: DataFrame, what: str
                ) -> tuple[dict[str, Column], dict[str, str]]:
        """The clause's values cast to their columns' types, and (for clauses that see one side
        only) which of them are a column of that side, unchanged."""
        raw = self._raw_values(clause, what)
        if clause.action == "insert":    # columns not given are NULL
            for f in self.new_schema.fields:
                raw.setdefault(f.name, (F.lit(None), "NULL"))
        names = list(raw)
        try:
            projected = frame.select(*[raw[n][0].alias(f"v{i}") for i, n in enumerate(names)])
            plan = projected._jdf.queryExecution().analyzed()
        except PySparkException as exc:
            raise AnalysisException(
                f"{self.where}: a value of {what} is invalid: {_first_line(exc)}. Columns: "
                f"{', '.join(frame.columns)}. The table is unchanged.") from exc
        if plan.nodeName() != "Project":
            raise AnalysisException(f"{self.where}: the values of {what} must be expressions "
                                    "over one row: no aggregate or window functions. The table "
                                    "is unchanged.")
        types = [f.dataType for f in projected.schema.fields]
        fields = {f.name: f for f in self.new_schema.fields}
        values = {n: store_assign(frame, raw[n][0], types[i], fields[n], self.where, raw[n][1])
                  for i, n in enumerate(names)}
        plain = {}
        if clause.kind != MATCHED:
            side = _plain_columns(plan, frame.columns)
            plain = {n: side[i] for i, n in enumerate(names)
                     if i in side and values[n] is raw[n][0]}
        return values, plain

    # --- the two sides of the join -------------------------------------------------------------

    def target_side(self, target: DataFrame) -> DataFrame:
        """The target rows (aliased) plus a presence flag and the NOT MATCHED BY SOURCE
        conditions and values, computed from the target row alone."""
        if self.target_alias:
            target = target.alias(self.target_alias)
        return target.withColumns(self._side_columns(TARGET_PRESENT, NOT_MATCHED_BY_SOURCE))

    def source_side(self) -> DataFrame:
        """The source rows plus a presence flag and the WHEN NOT MATCHED conditions and values,
        computed from the source row alone."""
        return self.source.withColumns(self._side_columns(SOURCE_PRESENT, NOT_MATCHED))

    def _side_columns(self, presence: str, kind: str) -> dict[str, Column]:
        """The presence flag, and the conditions and values of the ``kind`` clauses (those that
        see only one side of the join)."""
        cols = {presence: F.lit(True)}
        positions = {f.name: i for i, f in enumerate(self.new_schema.fields)}
        for c in self.of(kind):
            if c.condition is not None:
                cols[c.condition_column()] = c.condition.column
            for name, value in (c.values or {}).items():
                if name not in c.plain:
                    cols[c.value_column(positions[name])] = value
        return cols

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

    def clause_index(self, target: DataFrame, source: DataFrame) -> Column:
        """Which clause acts on a joined row (NULL: none)."""
        t, s = target[TARGET_PRESENT].isNotNull(), source[SOURCE_PRESENT].isNotNull()
        return (F.when(t & s, self.first(MATCHED, target, source))
                .when(t, self.first(NOT_MATCHED_BY_SOURCE, target, source))
                .when(s, self.first(NOT_MATCHED, target, source)))

    def indexes(self, action: str, kind: str | None = None) -> list[int]:
        return [c.index for c in self.clauses
                if c.action == action and (kind is None or c.kind == kind)]

    def kind(self, clause: Column, target: DataFrame) -> Column:
        """The row's fate: UPDATE, DELETE, INSERT, COPY (a target row no clause changes), or NULL
        (a source row no clause inserts)."""
        expr = F.when(F.lit(False), F.lit(None).cast("string"))
        for action, code in (("update", UPDATE), ("delete", DELETE), ("insert", INSERT)):
            idx = self.indexes(action)
            if idx:
                expr = expr.when(clause.isin(idx), F.lit(code))
        return expr.when(target[TARGET_PRESENT].isNotNull(), F.lit(COPY))

    def new_values(self, clause: Column, target: DataFrame | None,
                   source: DataFrame) -> list[Column]:
        """Each column of the new schema after the acting clause (the old value when no clause
        sets it), aliased by name. Without ``target`` (inserts only) there is no old value."""
        out = []
        for pos, f in enumerate(self.new_schema.fields):
            old = (column_of(target, f.name) if target is not None and f.name.lower() in self._old
                   else F.lit(None).cast(f.dataType))
            expr = None
            for c in self.clauses:
                if c.values is None or f.name not in c.values or (
                        target is None and c.kind != NOT_MATCHED):
                    continue
                side = target if c.kind == NOT_MATCHED_BY_SOURCE else source
                if c.kind == MATCHED:
                    value = c.values[f.name]
                elif f.name in c.plain:
                    value = column_of(side, c.plain[f.name])
                else:
                    value = side[c.value_column(pos)]
                cond = clause == F.lit(c.index)
                expr = F.when(cond, value) if expr is None else expr.when(cond, value)
            out.append((expr.otherwise(old) if expr is not None else old).alias(f.name))
        return out

    def old_values(self, target: DataFrame) -> list[Column]:
        """Each column of the new schema as the target row had it (NULL for new columns)."""
        return [(column_of(target, f.name) if f.name.lower() in self._old
                 else F.lit(None).cast(f.dataType)).alias(f.name)
                for f in self.new_schema.fields]

    def on_predicate(self) -> exp.Expression | None:
        return self.on.predicate
