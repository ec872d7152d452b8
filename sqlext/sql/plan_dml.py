"""INSERT, DELETE, UPDATE, MERGE and TRUNCATE on sqlext tables.

INSERT goes to :func:`sqlext.names.write` (append, overwrite, static and dynamic partition
overwrite, ``REPLACE WHERE``) with Spark's store-assignment casts applied to the source; DELETE,
UPDATE and MERGE to :mod:`sqlext.engine.dml.delete`, :mod:`~sqlext.engine.dml.update` and
:mod:`~sqlext.engine.merge.command`. Each planner returns a dataclass holding the engine call's arguments
(:class:`InsertPlan`, :class:`DeletePlan`, :class:`UpdatePlan`, :class:`MergeIntoPlan`) whose
``run(spark)`` makes the call. Conditions and expressions are rendered from the statement's tree
(their sqlext reads bound to views while the statement runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from sqlext import names
from sqlext.catalog import TableRef
from sqlext.engine.commit import auto_merge
from sqlext.engine.conditions import sql_text, with_sql_text
from sqlext.engine.dml.delete import delete
from sqlext.engine.merge import merge
from sqlext.engine.merge.clauses import (MATCHED, NOT_MATCHED, NOT_MATCHED_BY_SOURCE, Clause,
                                         omits_condition_early)
from sqlext.engine.post_commit import result_row
from sqlext.engine.read import resolve_snapshot
from sqlext.engine.generated import computed_columns
from sqlext.engine.schemas import spark_schema, widened_for_insert
from sqlext.engine.dml.update import update
from sqlext.errors import (AnalysisException, ParseError, TableNotFoundError,
                           UnsupportedOperationError)
from sqlext.log.table import DeltaLog
from sqlext.sql import plan as P
from sqlext.sql import splice
from sqlext.sql.assign import assign
from sqlext.sql.nodes import MergeInto, delta_path
from sqlext.sql.plan_read import ReadRewriter, drop_db_qualifier, plan_query
from sqlext.sql.resolve import Kind, Resolver, label
from sqlext.tables import DeltaTable


def _target(resolver: Resolver, table: exp.Table, verb: str) -> TableRef | None:
    """The sqlext table a statement writes, None when the target is Spark's."""
    if not isinstance(table, exp.Table):
        return None
    target = resolver.resolve(table)
    if target.kind is Kind.SPARK:
        return None
    if target.kind is not Kind.TABLE:
        what = "a view" if target.kind is Kind.VIEW else "a change feed"
        raise AnalysisException(f"{verb} {label(table)}: {label(table)} is {what}; "
                                f"{verb} needs a table", table=label(table))
    return target.ref


def _alias(table: exp.Table) -> str | None:
    """The name conditions qualify the target's columns with."""
    if table.alias:
        return table.alias
    return None if delta_path(table) is not None else table.name


class _Expressions:
    """Renders a statement's expressions to SQL, binding the sqlext reads of their subqueries."""

    def __init__(self, resolver: Resolver, table: exp.Table):
        self.rewriter = ReadRewriter(resolver)
        self.texts: list[splice.Rendered] = []
        self.db_qualifier = (table.text("db").lower(), table.name.lower()) \
            if table.args.get("db") and delta_path(table) is None else None

    def sql(self, node: exp.Expression | None) -> str | None:
        """The SQL text of ``node`` (the user's, the rewritten names replaced)."""
        tree = self.tree(node)
        return None if tree is None else sql_text(tree)

    def tree(self, node: exp.Expression | None) -> exp.Expression | None:
        """``node`` rewritten (sqlext reads bound to views), carrying its SQL text for the engine
        (:func:`sqlext.engine.conditions.sql_text`): Spark parses the user's text, and the tree
        serves the engine's pruning without being parsed again."""
        if node is None:
            return None
        node = node.copy()
        if self.rewriter.touches_sqlext(node):
            node = self.rewriter.rewrite(node)
        if self.db_qualifier:  # db.t.col -> t.col (the target is aliased t)
            for column in node.find_all(exp.Column):
                if (column.text("db").lower(), column.text("table").lower()) == self.db_qualifier:
                    drop_db_qualifier(column)
        rendered = splice.render(node)   # the user's text, only the rewritten names replaced
        self.texts.append(rendered)
        return with_sql_text(node, rendered.text)

    @property
    def labels(self) -> dict[str, str]:
        return {b.name: b.label for b in self.rewriter.bindings}


def _affected(spark: SparkSession, result, names: dict[str, str]) -> DataFrame:
    """delta-spark's result row for DML: ``num_affected_rows`` and friends, from the metrics the
    statement's own command returned (zeros when it committed nothing). Never read back from the
    log: by then another writer may have committed a newer version. A command skipped because
    the session's txnAppId/txnVersion is already in the log returns no row, as delta-spark."""
    schema = T.StructType([T.StructField(n, T.LongType()) for n in names])
    metrics = result.metrics
    if result.version is None and not metrics:
        return spark.createDataFrame([], schema)
    row = [sum(int(metrics.get(m, 0) or 0) for m in metric.split("+")) for metric in names.values()]
    return result_row(spark, row, schema)


# --- INSERT -----------------------------------------------------------------------------------


def plan_insert(resolver: Resolver, stmt: exp.Insert) -> P.Plan | None:
    schema_node = stmt.this if isinstance(stmt.this, exp.Schema) else None
    table = schema_node.this if schema_node is not None else stmt.this
    ref = _target(resolver, table, "INSERT INTO")
    if ref is None:
        return None
    text = label(table)
    if stmt.args.get("exists"):
        raise UnsupportedOperationError(f"INSERT OVERWRITE {text} ... IF NOT EXISTS is not "
                                        "supported for sqlext tables", table=text)
    if stmt.args.get("where") is not None and stmt.args.get("overwrite"):
        raise AnalysisException(f"INSERT {text}: REPLACE WHERE goes with INSERT INTO, not "
                                "INSERT OVERWRITE", table=text)
    columns = [c.name for c in schema_node.expressions] if schema_node is not None else None
    spec = table.args.get("partition")
    static: dict[str, exp.Expression] = {}
    dynamic: list[str] = []
    for item in spec.expressions if spec is not None else []:
        if isinstance(item, exp.EQ):
            static[item.this.name] = item.expression
        else:
            dynamic.append(item.name)
    query = stmt.expression
    if stmt.args.get("with_") is not None:
        query = query.copy()
        query.set("with_", stmt.args["with_"].copy())
    source = plan_query(resolver, query)
    where = stmt.args.get("where")
    replaced = [splice.render(where)] if where is not None else []   # errors point into it
    return InsertPlan(
        ref, text, source, columns, static, dynamic, by_name=bool(stmt.args.get("by_name")),
        overwrite=bool(stmt.args.get("overwrite")),
        replace_where=replaced[0].text if replaced else None,
        sql=source.sql(), labels=source.labels, texts=[source.rendered, *replaced])


@dataclass
class InsertPlan(P.CallPlan):
    """INSERT into a sqlext table: the source query, the target columns (None: the table's, or
    by name), PARTITION (...) values (``static``: column -> constant, ``dynamic``: columns), and
    the write mode; :meth:`run` calls :func:`sqlext.names.write`."""

    ref: TableRef
    text: str                                   # the target as the user wrote it
    source: Any                                 # the planned query (plan_read)
    columns: list[str] | None
    static: dict[str, exp.Expression]
    dynamic: list[str]
    by_name: bool = False
    overwrite: bool = False
    replace_where: str | None = None

    def run(self, spark: SparkSession) -> DataFrame | None:
        _, snapshot = resolve_snapshot(spark, self.ref)
        schema = spark_schema(snapshot.metadata.schema_string)
        pcols = {c.lower(): c for c in snapshot.partition_columns}
        self._check_partition_spec(pcols)
        df = self.source.dataframe(spark)
        targets = self._targets(df, schema)
        schema = widened_for_insert(snapshot, schema, df.schema, targets, auto_merge(spark))
        constants = {pcols[n.lower()]: _constant(v) for n, v in self.static.items()}
        data = assign(spark, df, schema, targets, constants, self.ref.display)
        predicate, mode = self.replace_where, None
        if self.overwrite and self.static:
            if _dynamic(spark):
                mode = "dynamic"
            else:
                predicate = splice.render(exp.and_(*[
                    exp.EQ(this=exp.column(pcols[n.lower()], quoted=True), expression=v.copy())
                    for n, v in self.static.items()])).text
        overwrite = self.overwrite or self.replace_where is not None
        names.write(spark, data, self.ref, "overwrite" if overwrite else "append",
                    replaceWhere=predicate, partitionOverwriteMode=mode)
        return None

    def _check_partition_spec(self, pcols: dict[str, str]) -> None:
        for name in list(self.static) + self.dynamic:
            if name.lower() not in pcols:
                raise AnalysisException(
                    f"INSERT INTO {self.text}: {name} in PARTITION (...) is not a partition "
                    f"column (the table is partitioned by {list(pcols.values()) or 'nothing'})",
                    table=self.text)

    def _targets(self, df: DataFrame, schema: T.StructType) -> list[str]:
        """The table columns the source's columns go to, checked."""
        static_names = {n.lower() for n in self.static}
        names = {f.name.lower(): f.name for f in schema.fields}
        if self.by_name:
            targets = list(df.columns)
        elif self.columns is not None:
            targets = self.columns
        else:
            targets = [f.name for f in schema.fields if f.name.lower() not in static_names]
            computed = {c.lower() for c in computed_columns(schema)}
            given = [t for t in targets if t.lower() not in computed]
            if computed and len(df.columns) == len(given) != len(targets):
                targets = given    # VALUES without the generated and identity columns
        unknown = [c for c in targets if c.lower() not in names]
        if unknown:
            raise AnalysisException(f"INSERT INTO {self.text}: unknown column(s) {unknown}; the "
                                    f"table's columns are {list(names.values())}",
                                    table=self.text)
        lowered = [c.lower() for c in targets]
        dupes = sorted({c for c in lowered if lowered.count(c) > 1} | (set(lowered) & static_names))
        if dupes:
            raise AnalysisException(f"INSERT INTO {self.text}: column(s) {dupes} are given twice",
                                    table=self.text)
        return targets


def _constant(value: exp.Expression):
    try:
        return F.lit(P.literal(value))
    except ValueError:
        return F.expr(splice.render(value).text)


def _dynamic(spark: SparkSession) -> bool:
    mode = spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static")
    return str(mode).lower() == "dynamic"


# --- DELETE / UPDATE / TRUNCATE ---------------------------------------------------------------


def _dml_target(resolver: Resolver, stmt: exp.Expression, verb: str, usage: str,
                clauses: tuple[str, ...]) -> TableRef | None:
    """The sqlext table a DELETE / UPDATE writes (None: Spark's); refuses clauses not supported."""
    ref = _target(resolver, stmt.this, verb)
    if ref is not None:
        for arg in clauses:
            if stmt.args.get(arg):
                raise UnsupportedOperationError(
                    f"{verb} {label(stmt.this)}: {arg.strip('_').upper()} is not supported; use "
                    f"{usage}", table=label(stmt.this))
    return ref


def _condition(stmt: exp.Expression, exprs: "_Expressions") -> exp.Expression | None:
    where = stmt.args.get("where")
    return exprs.tree(where.this) if where is not None else None


def plan_delete(resolver: Resolver, stmt: exp.Delete) -> P.Plan | None:
    ref = _dml_target(resolver, stmt, "DELETE FROM", "DELETE FROM t [AS a] [WHERE condition]",
                      ("using", "limit", "returning", "order"))
    if ref is None:
        return None
    table = stmt.this
    exprs = _Expressions(resolver, table)
    condition = _condition(stmt, exprs)
    return DeletePlan(ref, condition, _alias(table), exprs.rewriter.bindings,
                      sql=sql_text(condition) if condition is not None else None,
                      labels=exprs.labels, texts=exprs.texts)


@dataclass
class DeletePlan(P.CallPlan):
    """DELETE FROM a sqlext table: :func:`sqlext.engine.dml.delete.delete`'s arguments, and the reads
    of sqlext tables its condition's subqueries make (bound to views while it runs)."""

    ref: TableRef
    condition: exp.Expression | None            # carrying its SQL text (sql_text)
    alias: str | None
    bindings: list = field(default_factory=list)

    def run(self, spark: SparkSession) -> DataFrame:
        with P.bound(spark, self.bindings):
            result = delete(spark, _log(self.ref), self.condition, alias=self.alias)
        return _affected(spark, result, {"num_affected_rows": "numDeletedRows"})


def plan_update(resolver: Resolver, stmt: exp.Update) -> P.Plan | None:
    ref = _dml_target(resolver, stmt, "UPDATE",
                      "UPDATE t [AS a] SET col = value, ... [WHERE condition]",
                      ("from_", "limit", "returning", "order"))
    if ref is None:
        return None
    table = stmt.this
    exprs = _Expressions(resolver, table)
    alias = _alias(table)
    assignments = _assignments(stmt.expressions, exprs, alias)
    condition = _condition(stmt, exprs)
    return UpdatePlan(ref, condition, assignments, alias, exprs.rewriter.bindings,
                      sql=sql_text(condition) if condition is not None else None,
                      labels=exprs.labels, texts=exprs.texts)


@dataclass
class UpdatePlan(P.CallPlan):
    """UPDATE of a sqlext table: :func:`sqlext.engine.dml.update.update`'s arguments, and the reads
    of sqlext tables its expressions' subqueries make."""

    ref: TableRef
    condition: exp.Expression | None            # carrying its SQL text (sql_text)
    assignments: dict[str, str]
    alias: str | None
    bindings: list = field(default_factory=list)

    def run(self, spark: SparkSession) -> DataFrame:
        with P.bound(spark, self.bindings):
            result = update(spark, _log(self.ref), self.condition, self.assignments,
                            alias=self.alias)
        return _affected(spark, result, {"num_affected_rows": "numUpdatedRows"})


def plan_truncate(resolver: Resolver, stmt: exp.TruncateTable) -> P.Plan | None:
    tables = stmt.expressions
    refs = [_target(resolver, t, "TRUNCATE TABLE") for t in tables]
    if not any(refs):
        return None
    if len(tables) != 1 or stmt.args.get("partition"):
        raise UnsupportedOperationError("TRUNCATE TABLE on sqlext tables takes one table and no "
                                        "PARTITION; use DELETE FROM t WHERE ... for partitions",
                                        table=label(tables[0]))
    spark = resolver.spark

    def run():
        DeltaTable(spark, refs[0]).delete()
        return None

    return P.Plan(run)


def _log(ref: TableRef) -> DeltaLog:
    """The log of an existing table (TableNotFoundError when there is none)."""
    log = DeltaLog(ref.location, name=ref.display)
    if not log.exists():
        raise TableNotFoundError(f"{ref.display} is not a Delta table (no _delta_log at "
                                 f"{ref.location})", error_class="DELTA_TABLE_NOT_FOUND",
                                 table=ref.display, message_parameters={"tableName": ref.display})
    return log


def _assignments(items: list[exp.Expression], exprs: _Expressions,
                 alias: str | None) -> dict[str, str]:
    """``{column: value SQL}`` of ``SET col = value, ...`` (a target qualifier dropped)."""
    out: dict[str, str] = {}
    for item in items:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise AnalysisException(f"expected column = value, not {item.sql(dialect='spark')}")
        out[_column_key(item.this, alias, exprs)] = exprs.sql(item.expression)
    return out


def _column_key(column: exp.Column, alias: str | None, exprs: _Expressions) -> str:
    parts = [p.name for p in column.parts]
    qualifiers = {alias.lower()} if alias else set()
    if exprs.db_qualifier:
        qualifiers.add(exprs.db_qualifier[1])
        if len(parts) > 2 and parts[0].lower() == exprs.db_qualifier[0]:
            parts = parts[1:]
    if len(parts) > 1 and parts[0].lower() in qualifiers:
        parts = parts[1:]
    return ".".join(parts)


# --- MERGE ------------------------------------------------------------------------------------


#: Spark's parser's conditions for a WHEN clause that omits its condition but is not the last of
#: its kind, and their wording (the MERGE builder's are :mod:`sqlext.engine.merge.plan`'s)
_OMITTED_CONDITION = {
    MATCHED: ("NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION", "MATCHED"),
    NOT_MATCHED: ("NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION", "NOT MATCHED [BY TARGET]"),
    NOT_MATCHED_BY_SOURCE: ("NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION",
                            "NOT MATCHED BY SOURCE")}


def _when_kind(when: exp.When) -> str:
    if when.args.get("matched"):
        return MATCHED
    return NOT_MATCHED_BY_SOURCE if when.args.get("source") else NOT_MATCHED


def _check_clause_conditions(stmt: MergeInto) -> None:
    """Refuse, as Spark's parser does (before any table is looked up), a WHEN clause without a
    condition that is not the last of its kind."""
    whens = stmt.args["whens"].expressions
    kind = omits_condition_early([(_when_kind(w), w.args.get("condition") is not None)
                                  for w in whens])
    if kind is not None:
        condition, words = _OMITTED_CONDITION[kind]
        raise ParseError(
            f"[{condition}] MERGE INTO {label(stmt.this)}: when there are more than one {words} "
            f"clauses in a MERGE statement, only the last {words} clause can omit the condition. "
            "Add a condition to the earlier clause or remove the clauses after it; nothing was "
            "run.", error_class=condition, sqlstate="42613", table=label(stmt.this))


def plan_merge(resolver: Resolver, stmt: MergeInto) -> P.Plan | None:
    _check_clause_conditions(stmt)
    table = stmt.this
    ref = _target(resolver, table, "MERGE INTO")
    if ref is None:
        return None
    using = stmt.args["using"]
    if isinstance(using, exp.Subquery):
        query, source_alias = using.this, using.alias or None
    elif isinstance(using, exp.Table):
        bare = using.copy()   # its alias (kept, as in the user's text) is harmless here
        query, source_alias = exp.select("*").from_(bare), using.alias or (
            None if delta_path(using) is not None else using.name)
    else:
        raise UnsupportedOperationError(f"MERGE INTO {label(table)}: USING must be a table or a "
                                        "(query)", table=label(table))
    if stmt.args.get("with_") is not None:
        query = query.copy()
        query.set("with_", stmt.args["with_"].copy())
    source = plan_query(resolver, query)
    exprs = _Expressions(resolver, table)
    alias = _alias(table)
    on = exprs.tree(stmt.args["on"])
    clauses = [_when(w, exprs, alias, label(table)) for w in stmt.args["whens"].expressions]
    return MergeIntoPlan(ref, source, source_alias, alias, on, tuple(clauses),
                         True if stmt.args.get("schema_evolution") else None, exprs.rewriter.bindings,
                         sql=source.sql(), labels={**source.labels, **exprs.labels},
                         texts=[source.rendered, *exprs.texts])


@dataclass
class MergeIntoPlan(P.CallPlan):
    """MERGE INTO a sqlext table: :func:`sqlext.engine.merge.command.merge`'s arguments (the source as
    a planned query, the ON condition, the WHEN clauses), and the reads of sqlext tables in the
    conditions' and values' subqueries."""

    ref: TableRef
    source: Any                                 # the planned query (plan_read)
    source_alias: str | None
    alias: str | None
    on: exp.Expression                          # carrying its SQL text (sql_text)
    clauses: tuple[Clause, ...]
    schema_evolution: bool | None = None     # None: the session's autoMerge setting
    bindings: list = field(default_factory=list)

    def run(self, spark: SparkSession) -> DataFrame:
        log = _log(self.ref)
        df = self.source.dataframe(spark)
        if self.source_alias:
            df = df.alias(self.source_alias)
        with P.bound(spark, self.bindings):
            result = merge(spark, log, df, self.on, self.clauses, alias=self.alias,
                           schema_evolution=self.schema_evolution)
        return result.summary(spark)


def _when(when: exp.When, exprs: _Expressions, alias: str | None, text: str) -> Clause:
    """The engine's :class:`~sqlext.engine.merge.clauses.Clause` of one WHEN clause."""
    condition = exprs.tree(when.args.get("condition"))
    then = when.args["then"]
    kind = _when_kind(when)
    if isinstance(then, exp.Var) and then.name.upper() == "DELETE" and kind != NOT_MATCHED:
        return Clause(kind, "delete", condition)
    if isinstance(then, exp.Update) and kind != NOT_MATCHED:
        items = then.expressions
        if len(items) == 1 and isinstance(items[0], exp.Star):
            if kind == MATCHED:
                return Clause(MATCHED, "update", condition)
        else:
            return Clause(kind, "update", condition,
                          tuple(_assignments(items, exprs, alias).items()))
    if isinstance(then, exp.Insert) and kind == NOT_MATCHED:
        if isinstance(then.this, exp.Star):
            return Clause(NOT_MATCHED, "insert", condition)
        columns = [_column_key(c if isinstance(c, exp.Column) else exp.column(c.name), alias, exprs)
                   for c in then.this.expressions]
        values = [exprs.sql(v) for v in then.expression.expressions]
        if len(columns) != len(values):
            raise AnalysisException(f"MERGE INTO {text}: INSERT has {len(columns)} column(s) but "
                                    f"{len(values)} value(s)", table=text)
        return Clause(NOT_MATCHED, "insert", condition, tuple(dict(zip(columns, values)).items()))
    raise UnsupportedOperationError(
        f"MERGE INTO {text}: {when.sql(dialect='spark')} is not supported; supported: WHEN "
        "MATCHED [AND c] THEN UPDATE SET ... | UPDATE SET * | DELETE; WHEN NOT MATCHED [BY TARGET] "
        "[AND c] THEN INSERT (...) VALUES (...) | INSERT *; WHEN NOT MATCHED BY SOURCE [AND c] "
        "THEN UPDATE SET ... | DELETE", table=text)
