"""Reads of sqlext tables anywhere in a statement, bound to temporary views.

Every table reference that names a sqlext table (joins, subqueries, CTE bodies, set operations,
INSERT sources, MERGE sources, subqueries in predicates) is replaced by a uniquely named temporary
view bound to the right DataFrame: the current snapshot, ``VERSION AS OF``, ``TIMESTAMP AS OF``,
or a change feed. A reference to a view sqlext stores is replaced by the view's query, itself
rewritten. Qualifiers keep working: the replacement carries the reference's alias, or its name.
"""

from __future__ import annotations

import collections
import functools
import itertools
import re
import uuid
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.catalog import Catalog, TableRef, has_delta_log
from sqlext.engine.read import resolve_snapshot
from sqlext.engine.local.read import table_frame
from sqlext.engine.session import is_connect, session_constant
from sqlext.errors import AnalysisException, TableNotFoundError, UnsupportedOperationError
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.pruning import Pruner, referenced_columns
from sqlext.log.snapshot import Snapshot
from sqlext.log.storage import normalize_location
from sqlext.log.table import DeltaLog
from sqlext.sql import change_reads, splice
from sqlext.sql import plan as P
from sqlext.sql.nodes import delta_path
from sqlext.sql.pushdown import file_filter
from sqlext.sql.resolve import Kind, Resolver, label

VIEW_PREFIX = "__sqlext_"
_PROCESS = uuid.uuid4().hex[:8]
_COUNTER = itertools.count(1)
MAX_VIEW_DEPTH = 32
#: query schemas remembered per session (ReadPlan.schema)
_SCHEMAS_KEPT = 64
_GENERATED_NAME = re.compile(re.escape(f"{VIEW_PREFIX}{_PROCESS}_") + r"\d+")


def _view_name() -> str:
    return f"{VIEW_PREFIX}{_PROCESS}_{next(_COUNTER)}"


@dataclass
class Binding:
    """A temporary view name and the read it stands for."""

    name: str
    ref: TableRef
    label: str
    version: exp.Expression | None = None
    timestamp: exp.Expression | None = None
    changes: change_reads.ChangeRead | None = None
    prune: exp.Expression | None = None     # skips files that cannot hold rows the query keeps
    scan: bool = False      # the statement asks which file a row is in: read by Spark's scan
    job_free: bool = True   # the statement may run without a job (the driver path pays)

    def snapshot(self, spark: SparkSession) -> tuple[DeltaLog, Snapshot]:
        """The log and the snapshot this (table, not change feed) read reads."""
        version = None if self.version is None else P.integer(
            spark, self.version, f"{self.label} VERSION AS OF")
        ts = None if self.timestamp is None else P.timestamp(spark, self.timestamp)
        return resolve_snapshot(spark, self.ref, version, ts)

    def dataframe(self, spark: SparkSession, rows: bool = True,
                  resolved: tuple[DeltaLog, Snapshot] | None = None) -> DataFrame:
        """The read; without ``rows``, the same columns over no file (nothing listed or read):
        enough to know the type of a query over it. ``resolved``: :meth:`snapshot`, if known."""
        if self.changes is not None:
            return self.changes.dataframe(spark, self.ref)
        log, snapshot = resolved or self.snapshot(spark)
        files = None
        if not rows:
            files = []
        elif self.prune is not None and referenced_columns(self.prune) <= {
                f.name.lower() for f in snapshot.schema}:
            files = Pruner(self.prune, snapshot.schema, snapshot.partition_columns,
                           ColumnMapping.of(snapshot.metadata)).prune(snapshot.files)
        return table_frame(spark, log, snapshot, files, on_driver=not self.scan,
                           job_free=self.job_free)


@dataclass
class ReadPlan:
    """A statement tree with its sqlext reads replaced, and what the views stand for."""

    tree: exp.Expression
    bindings: list[Binding]

    @property
    def labels(self) -> dict[str, str]:
        return {b.name: b.label for b in self.bindings}

    @functools.cached_property
    def rendered(self) -> splice.Rendered:
        """The SQL Spark runs: the user's text with the replaced references spliced in."""
        return splice.render(self.tree)

    def sql(self) -> str:
        return self.rendered.text

    def dataframe(self, spark: SparkSession) -> DataFrame:
        """Run the (query) tree with its views bound."""
        if is_connect(spark):   # a lazy plan: the views' plans go with it
            views = {b.name: b.dataframe(spark) for b in self.bindings}
            return P.spark_sql(spark, self.sql(), self.labels, [self.rendered], views)
        with P.bound(spark, self.bindings):
            return P.spark_sql(spark, self.sql(), self.labels, [self.rendered])

    def schema(self, spark: SparkSession) -> T.StructType:
        """The (query) tree's result columns, found with its tables bound to reads of no file
        (DESCRIBE of a view lists and reads nothing).

        Remembered per session: the same query text over the same table versions has the same
        columns, so dbt's DESCRIBE of the view it has just created is not analysed again. Only
        queries whose every table is a sqlext table read (no Spark table or view, whose
        definition sqlext cannot see change, and no change feed) are remembered."""
        if is_connect(spark):
            return self.dataframe(spark).schema
        if not self._remembered():
            with P.bound(spark, self.bindings, rows=False):
                return P.spark_sql(spark, self.sql(), self.labels, [self.rendered]).schema
        resolved = [b.snapshot(spark) for b in self.bindings]
        reads = {b.name: (log.location, snapshot.version)
                 for b, (log, snapshot) in zip(self.bindings, resolved)}
        # the names sqlext generated (the views bound, renamed CTEs) numbered by appearance
        order: dict[str, str] = {}
        text = _GENERATED_NAME.sub(
            lambda m: order.setdefault(m.group(0), f"{VIEW_PREFIX}{len(order)}"), self.sql())
        key = (text, tuple(reads.get(name) for name in order))
        known = session_constant(spark, "query_schemas", collections.OrderedDict)
        schema = known.get(key)
        if schema is None:
            with P.bound(spark, self.bindings, rows=False, resolved=resolved):
                schema = P.spark_sql(spark, self.sql(), self.labels, [self.rendered]).schema
            known[key] = schema
            while len(known) > _SCHEMAS_KEPT:
                known.popitem(last=False)
        known.move_to_end(key)
        return schema

    def _remembered(self) -> bool:
        """Whether the tree's columns depend only on its text and its tables' versions."""
        names = {b.name.lower() for b in self.bindings if b.changes is None}
        return len(names) == len(self.bindings) and all(
            t.name.lower() in names or is_cte(t) for t in self.tree.find_all(exp.Table)
            if isinstance(t.this, exp.Identifier))


class ReadRewriter:
    """Replaces the sqlext reads of trees; collects the bindings."""

    def __init__(self, resolver: Resolver):
        self.resolver = resolver
        self.bindings: list[Binding] = []

    def touches_sqlext(self, root: exp.Expression, skip: frozenset[int] = frozenset()) -> bool:
        """Whether any read in ``root`` (outside ``skip``, ids of target tables) is sqlext's."""
        for table in root.find_all(exp.Table):
            if id(table) in skip or is_cte(table):
                continue
            if table.args.get("changes") or _is_table_changes(table):
                return True
            if isinstance(table.this, exp.Identifier) and self.resolver.resolve(table).is_sqlext:
                return True
        return False

    def rewrite(self, root: exp.Expression, skip: frozenset[int] = frozenset(),
                depth: int = 0) -> exp.Expression:
        """Replace the sqlext reads of ``root`` in place (``skip``: ids of tables to leave)."""
        rewritten: set[tuple[str, str]] = set()
        for table in list(root.find_all(exp.Table)):
            if id(table) in skip or is_cte(table):
                continue
            qualifier = self._rewrite_table(table, depth)
            if qualifier:
                rewritten.add(qualifier)
        if rewritten:
            _strip_qualifiers(root, rewritten)
        return root

    def _rewrite_table(self, table: exp.Table, depth: int) -> tuple[str, str] | None:
        if _is_table_changes(table):
            self._bind_table_changes(table)
            return None
        if not isinstance(table.this, exp.Identifier):
            return None
        target = self.resolver.resolve(table)
        text = label(table)
        clause = table.args.get("changes")
        if target.kind is Kind.SPARK:
            if clause is not None:
                raise AnalysisException(f"{text} CHANGES FROM ...: {text} is not a sqlext table "
                                        "(a Delta table with a change feed)", table=text)
            return None
        qualifier = (table.text("db").lower(), table.name.lower()) if table.args.get("db") else None
        if target.kind is Kind.VIEW:
            if clause is not None or table.args.get("version"):
                raise UnsupportedOperationError(
                    f"{text} is a view: time travel and CHANGES FROM read tables, not views",
                    table=text)
            self._expand_view(table, target.view, depth)
            return qualifier
        binding = Binding(_view_name(), target.ref, text)
        if target.kind is Kind.CHANGES:
            alias = table.alias or table.name
            binding.changes = change_reads.from_where(table, alias)
        elif clause is not None:
            binding.changes = change_reads.from_clause(clause, text)
        else:
            if table.args.get("version") is not None:
                self._time_travel(binding, table.args["version"])
            binding.prune = file_filter(table)
        self._replace(table, binding)
        return qualifier

    def _time_travel(self, binding: Binding, version: exp.Version) -> None:
        if version.text("kind").upper() != "AS OF":
            raise UnsupportedOperationError(
                f"{binding.label}: only VERSION AS OF n and TIMESTAMP AS OF ts are supported for "
                f"time travel, not {version.sql(dialect='spark')}", table=binding.label)
        if version.name.upper() == "VERSION":
            binding.version = version.expression
        else:
            binding.timestamp = version.expression

    def _bind_table_changes(self, table: exp.Table) -> None:
        function = table.this.name.lower()
        by_path = function == "table_changes_by_path"
        name_expr, read = change_reads.from_function(table.this)
        try:
            name = P.literal(name_expr)
        except ValueError:
            name = None
        if not isinstance(name, str) or not name:
            example = "table_changes_by_path('/data/t', 1)" if by_path else \
                "table_changes('db.t', 1)"
            raise AnalysisException(f"{function}: the first argument must be the table "
                                    f"{'path' if by_path else 'name'} as a string, e.g. {example}")
        if by_path:
            ref = TableRef(normalize_location(name))
        else:
            ref = Catalog(self.resolver.spark).resolve(name)
        if ref is None or not has_delta_log(ref.location):
            raise TableNotFoundError(f"{function}: {name!r} is not a sqlext (Delta) table",
                                     table=name)
        alias = None if table.alias else function
        self._replace(table, Binding(_view_name(), ref, f"{function}('{name}')", changes=read),
                      alias)

    def _replace(self, table: exp.Table, binding: Binding, alias: str | None = None) -> None:
        """Point ``table`` at the binding's view; in the text, the name (with its time travel
        or CHANGES clause) becomes the view's name, aliased as the user named the table."""
        start, end = _name_region(table)
        if not table.args.get("alias"):
            if alias is None and isinstance(table.this, exp.Identifier) \
                    and delta_path(table) is None:
                table.set("alias", exp.TableAlias(this=table.this.copy()))
                alias = splice.original(table.this) or table.this.sql(dialect="spark")
            elif alias is not None:
                table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
        sample = table.args.get("sample")
        after = splice.region(sample) if sample is not None and alias is not None else None
        if start is not None and after is not None and after[0] >= end:
            # Spark's grammar puts the alias after TABLESAMPLE (...): `v TABLESAMPLE (..) AS t`
            splice.splice(table, start, end, binding.name)
            splice.splice(table, after[1], after[1], f" AS {alias}")
        elif start is not None:
            splice.splice(table, start, end,
                          binding.name if alias is None else f"{binding.name} AS {alias}")
        for arg in ("db", "catalog", "version", "changes"):
            table.set(arg, None)
        table.set("this", exp.to_identifier(binding.name))
        self.bindings.append(binding)


    def _expand_view(self, table: exp.Table, view, depth: int) -> None:
        if depth >= MAX_VIEW_DEPTH:
            raise AnalysisException(f"view {view.display} refers to itself (through "
                                    f"{MAX_VIEW_DEPTH} levels of views)", table=view.display)
        query = view_query(view.query).copy()
        self.rewrite(query, depth=depth + 1)
        _rename_ctes(query)
        alias = table.args.get("alias")
        alias_text = splice.original(alias) if alias else None
        alias = alias.copy() if alias else exp.TableAlias(this=exp.to_identifier(view.name))
        if view.columns and not alias.args.get("columns"):
            alias.set("columns", [exp.to_identifier(c) for c in view.columns])
            alias_text = None
        subquery = exp.Subquery(this=query, alias=alias)
        text = f"({splice.render(query).text}) " + (alias_text or
                                                     "AS " + alias.sql(dialect="spark"))
        table.replace(subquery)
        splice.adopt(subquery, table, text)


def _rename_ctes(query: exp.Expression) -> None:
    """Give a view query's CTEs unique names: Spark SQL is rendered with every CTE moved to the
    statement's top level, where a CTE of the view could clash with one of the query (dbt's
    ephemeral models put the same ``__dbt__cte__x`` into both)."""
    with_ = query.args.get("with_")
    if with_ is None:
        return
    names = {}
    for cte in with_.expressions:
        new = names[cte.alias.lower()] = f"{cte.alias}_{_view_name()}"
        old = cte.args["alias"].this
        _rename(cte, old, exp.to_identifier(new).sql(dialect="spark"))
        old.set("this", new)
    for table in query.find_all(exp.Table):
        new = names.get(table.name.lower()) if not table.args.get("db") else None
        if new and isinstance(table.this, exp.Identifier):
            if not table.args.get("alias"):
                table.set("alias", exp.TableAlias(this=table.this.copy()))
                name = exp.to_identifier(new).sql(dialect="spark")
                _rename(table, table.this, f"{name} AS "
                        f"{splice.original(table.this) or table.this.sql(dialect='spark')}")
            else:
                _rename(table, table.this, exp.to_identifier(new).sql(dialect="spark"))
            table.set("this", exp.to_identifier(new))


def _rename(node: exp.Expression, name: exp.Identifier, text: str) -> None:
    found = splice.region(name)
    if found is not None:
        splice.splice(node, *found, text)


@functools.lru_cache(maxsize=256)
def view_query(sql: str) -> exp.Expression:
    """A stored view's query, parsed (shared: copy it before changing it)."""
    from sqlext.sql.parse import parse_statements

    (query,) = parse_statements(sql)
    return query


def _is_table_changes(table: exp.Table) -> bool:
    return isinstance(table.this, exp.Anonymous) and table.this.name.lower() in (
        "table_changes", "table_changes_by_path")


def _name_region(table: exp.Table) -> tuple[int | None, int | None]:
    """The text of a table reference's name, time travel and CHANGES clause (not its alias)."""
    parts = [table.this] + [table.args.get(a) for a in ("db", "catalog", "version", "changes")]
    regions = [splice.region(p) for p in parts if p is not None]
    if not regions or None in regions:
        return None, None
    return min(r[0] for r in regions), max(r[1] for r in regions)


def drop_db_qualifier(column: exp.Column) -> None:
    """``db.t.col`` -> ``t.col`` (in the tree and the text)."""
    first = column.args.get("catalog") or column.args.get("db")
    start, table = splice.region(first), splice.region(column.args["table"])
    if start is not None and table is not None:
        splice.splice(column, start[0], table[0], "")
    column.set("db", None)
    column.set("catalog", None)


def is_cte(table: exp.Table) -> bool:
    """Whether a one-part name refers to a CTE in scope."""
    if table.args.get("db") or not isinstance(table.this, exp.Identifier):
        return False
    name = table.name.lower()
    node = table.parent
    while node is not None:
        with_ = node.args.get("with_") if isinstance(node, exp.Expression) else None
        if with_ is not None and any(cte.alias.lower() == name for cte in with_.expressions):
            return True
        node = node.parent
    return False


def _strip_qualifiers(root: exp.Expression, rewritten: set[tuple[str, str]]) -> None:
    """``db.t.col`` -> ``t.col`` where ``db.t`` was replaced by a view aliased ``t``."""
    for column in root.find_all(exp.Column):
        if column.args.get("db") and (column.text("db").lower(),
                                      column.text("table").lower()) in rewritten:
            drop_db_qualifier(column)


def plan_reads(resolver: Resolver, stmt: exp.Expression,
               skip: frozenset[int] = frozenset()) -> ReadPlan | None:
    """The statement with its sqlext reads bound (a copy), or None when it has none."""
    rewriter = ReadRewriter(resolver)
    if not rewriter.touches_sqlext(stmt, skip):
        return None
    copy = stmt.copy()
    if skip:  # map skipped tables onto the copy (same traversal order)
        originals = list(stmt.find_all(exp.Table))
        copies = list(copy.find_all(exp.Table))
        skip = frozenset(id(c) for o, c in zip(originals, copies) if id(o) in skip)
    rewriter.rewrite(copy, skip)
    scan, job_free = _asks_for_files(stmt), _runs_without_job(stmt)
    for binding in rewriter.bindings:
        binding.scan, binding.job_free = scan, job_free
    return ReadPlan(copy, rewriter.bindings)


def _runs_without_job(stmt: exp.Expression) -> bool:
    """Whether ``stmt`` can run without a Spark job over a local relation of its table's rows:
    one SELECT of one table with projections, filters and a LIMIT only. Anything else
    (aggregates, joins, sorts, windows, set operations, subqueries) runs a job over the rows
    either way, and then Spark's scan of the files costs less than reading them on the driver
    (``bench/local_reads.py``)."""
    if not isinstance(stmt, exp.Select) or any(stmt.args.get(key) for key in (
            "joins", "group", "having", "order", "distinct", "laterals", "qualify", "with")):
        return False
    return stmt.find(exp.AggFunc, exp.Window, exp.Subquery, exp.Union) is None and \
        not any(select is not stmt for select in stmt.find_all(exp.Select))


_FILE_FUNCTIONS = frozenset({"input_file_name", "input_file_block_start",
                             "input_file_block_length"})


def _asks_for_files(stmt: exp.Expression) -> bool:
    """Whether ``stmt`` asks which file its rows come from (``input_file_name()`` and its
    kin, or the ``_metadata`` column): a local relation of the rows has no files to name."""
    for node in stmt.find_all(exp.Func, exp.Column):
        if isinstance(node, exp.Column):
            if "_metadata" in (node.name.lower(), node.text("table").lower()):
                return True
        elif node.sql_name().lower() in _FILE_FUNCTIONS or (
                isinstance(node, exp.Anonymous) and node.name.lower() in _FILE_FUNCTIONS):
            return True
    return False


def plan_generic(resolver: Resolver, stmt: exp.Expression,
                 skip: frozenset[int] = frozenset()) -> P.Plan:
    """Any statement Spark runs: as written, or with its sqlext reads bound."""
    spark = resolver.spark
    reads = plan_reads(resolver, stmt, skip)
    if reads is None:
        return P.passthrough(spark, splice.statement(stmt))
    return P.Plan(lambda: reads.dataframe(spark), reads.sql(), reads.labels, [reads.rendered])


def plan_query(resolver: Resolver, query: exp.Expression) -> ReadPlan:
    """A query (an INSERT, CTAS or MERGE source) ready to run, its sqlext reads bound."""
    return plan_reads(resolver, query) or ReadPlan(query, [])
