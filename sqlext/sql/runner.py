"""``sqlext.sql``: run a script of SQL statements, each planned into engine calls or handed to
Spark.

Each statement is parsed (:mod:`sqlext.sql.parse`), its table references resolved through
sqlext's catalog first, then Spark's (:mod:`sqlext.sql.resolve`), and then planned: statements on
sqlext tables become engine calls, statements that only read sqlext tables run on Spark with each
read bound to a temporary view, and everything else goes to ``spark.sql`` as written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.engine.io.scan import empty_frame
from sqlext.engine.session import native_table_exists, prepare, session_constant
from sqlext.errors import AnalysisException, SqlextError, UnsupportedOperationError
from sqlext.sql import (describe, maintenance, nodes, plan_catalog, plan_clone, plan_ddl,
                        plan_dml, plan_views)
from sqlext.sql import plan as P
from sqlext.sql import spark_errors, splice
from sqlext.sql.parse import parse_statements
from sqlext.sql.plan_read import plan_generic
from sqlext.sql.resolve import Resolver, label
from sqlext.sql.statement_text import statement_head, statement_keyword


def run_sql(spark: SparkSession, text: str) -> DataFrame:
    """Run the ``;``-separated statements of ``text``; return the last one's result (an empty
    DataFrame when it returns nothing, or when there is no statement)."""
    result = None
    for result in run_statements(spark, text):
        pass
    return result if result is not None else empty(spark)


def run_statements(spark: SparkSession, text: str) -> Iterator[DataFrame | None]:
    """Parse all of ``text`` first (a syntax error anywhere runs nothing), then run the
    statements one by one, yielding each one's result (None when it returns nothing)."""
    prepare(spark)
    # a syntax error is Spark's (wording, position), sqlglot's only where Spark parses the text
    statements = parse_statements(text, spark_errors.syntax_checker(spark))
    resolver = Resolver(spark)
    for stmt in statements:
        yield execute(resolver, stmt)


def execute(resolver: Resolver, stmt: exp.Expression) -> DataFrame | None:
    """Plan and run one parsed statement."""
    try:
        plan = plan_statement(resolver, stmt)
        try:
            return plan.run(resolver.spark)
        except SqlextError as exc:   # engine messages may quote the rendered SQL
            # first: sqlext's errors are pyspark's classes too (sqlext.engine.pyspark_errors)
            spark_errors.relabel(exc, plan.labels, plan.texts, splice.statement(stmt))
            raise
        except spark_errors.spark_exceptions() as exc:
            raise spark_errors.translate(exc, plan.labels, plan.texts,
                                         splice.statement(stmt)) from exc
    finally:
        resolver.invalidate()


def empty(spark: SparkSession) -> DataFrame:
    """The result of a statement that returns nothing (built once per session: a DataFrame is
    immutable)."""
    return session_constant(spark, "empty_result",
                            lambda: empty_frame(spark, T.StructType([])))


# --- planning ---------------------------------------------------------------------------------


def plan_statement(resolver: Resolver, stmt: exp.Expression) -> P.Plan:
    """The plan of one statement (no Spark job runs while planning)."""
    planner = _PLANNERS.get(type(stmt))
    plan = planner(resolver, stmt) if planner is not None else None
    if plan is not None:
        return plan
    if isinstance(stmt, exp.Command):
        return _plan_command(resolver, stmt)
    targets = _targets(stmt)
    for table in targets:
        if isinstance(table.this, exp.Identifier) and resolver.resolve(table).is_sqlext:
            raise UnsupportedOperationError(
                f"{statement_head(stmt.meta.get('sql') or stmt.sql(dialect='spark'))}: "
                f"{_statement_name(stmt)} on {label(table)} is not supported for sqlext tables; "
                f"supported statements: {maintenance.SUPPORTED_STATEMENTS}", table=label(table))
    return plan_generic(resolver, stmt, frozenset(id(t) for t in targets))


def _by_kind(table: dict[str, Callable]) -> Callable:
    def plan(resolver: Resolver, stmt: exp.Expression) -> P.Plan | None:
        planner = table.get(str(stmt.args.get("kind") or "").upper())
        return planner(resolver, stmt) if planner is not None else None
    return plan


_PLANNERS: dict[type, Callable[[Resolver, exp.Expression], P.Plan | None]] = {
    exp.Create: _by_kind({"TABLE": lambda resolver, stmt: (
                              plan_clone.plan_clone(resolver, stmt) if stmt.args.get("clone")
                              else plan_ddl.plan_create_table(resolver, stmt)),
                          "VIEW": plan_views.plan_create_view,
                          "SCHEMA": plan_catalog.plan_create_schema,
                          "DATABASE": plan_catalog.plan_create_schema}),
    exp.Drop: _by_kind({"TABLE": plan_catalog.plan_drop_table,
                        "VIEW": plan_views.plan_drop_view,
                        "SCHEMA": plan_catalog.plan_drop_schema,
                        "DATABASE": plan_catalog.plan_drop_schema}),
    exp.Alter: plan_catalog.plan_alter,
    exp.Use: plan_catalog.plan_use,
    exp.Insert: plan_dml.plan_insert,
    exp.Delete: plan_dml.plan_delete,
    exp.Update: plan_dml.plan_update,
    nodes.MergeInto: plan_dml.plan_merge,
    exp.TruncateTable: plan_dml.plan_truncate,
    exp.Describe: describe.plan_describe,
    nodes.DescribeHistory: describe.plan_history,
    nodes.DescribeDetail: describe.plan_detail,
    nodes.ShowTables: describe.plan_show_tables,
    nodes.ShowTblProperties: describe.plan_show_tblproperties,
    nodes.ShowCreateTable: describe.plan_show_create_table,
    nodes.Vacuum: maintenance.plan_vacuum,
    nodes.Restore: maintenance.plan_restore,
    nodes.Optimize: maintenance.plan_optimize,
    nodes.Reorg: maintenance.plan_reorg,
    nodes.ConvertToDelta: maintenance.plan_convert,
    nodes.Generate: maintenance.plan_generate,
}


def _targets(stmt: exp.Expression) -> list[exp.Table]:
    """The tables a statement writes or defines (not reads)."""
    if isinstance(stmt, (exp.Insert, exp.Create)):
        this = stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this
        return [this] if isinstance(this, exp.Table) else []
    if isinstance(stmt, exp.Drop):
        return list(stmt.args.get("tables") or [])
    if isinstance(stmt, exp.TruncateTable):
        return list(stmt.expressions)
    if isinstance(stmt, exp.Analyze) and stmt.args.get("tables"):
        return [t for t in stmt.args["tables"] if isinstance(t, exp.Table)]
    if isinstance(stmt, (exp.Describe, exp.Delete, exp.Update, exp.Merge, exp.Alter, exp.Use,
                         exp.Cache, exp.Uncache, exp.Analyze, exp.Refresh)):
        return [stmt.this] if isinstance(stmt.this, exp.Table) else []
    return []


def _statement_name(stmt: exp.Expression) -> str:
    return statement_keyword(stmt.meta.get("sql") or stmt.key)


# --- statements sqlglot does not parse --------------------------------------------------------


def _plan_command(resolver: Resolver, stmt: exp.Command) -> P.Plan:
    """Spark runs the statement as written, unless it names a sqlext table in a table position
    (after TABLE, FROM, INTO, ... or qualified) that Spark's catalog does not have: then it is
    refused at once, naming the statement and what is supported (Spark would only say that it
    cannot find the table). If Spark fails to find a table the statement names and that table is
    sqlext's, the same error is raised."""
    spark = resolver.spark
    sql = stmt.meta.get("sql") or stmt.sql(dialect="spark")

    def unsupported(table: exp.Table) -> UnsupportedOperationError:
        return UnsupportedOperationError(
            f"{statement_head(sql)}: this statement is not supported for sqlext tables "
            f"({label(table)} is one); supported statements: {maintenance.SUPPORTED_STATEMENTS}")

    def run():
        for table in _names_in(sql, table_positions_only=True):
            if resolver.resolve(table).is_sqlext and not _spark_knows(spark, table):
                raise unsupported(table)
        try:
            return P.spark_sql(spark, sql, None, [splice.statement(stmt)])
        except AnalysisException as exc:
            for table in _names_in(sql):
                if resolver.resolve(table).is_sqlext:
                    raise unsupported(table) from exc
            raise

    return P.Plan(run, sql)


def _spark_knows(spark: SparkSession, table: exp.Table) -> bool:
    """Whether Spark's own catalog has a table or view of that name."""
    name = ".".join(part.name for part in table.parts)
    try:
        return native_table_exists(spark, name)
    except Exception:  # noqa: BLE001 - a name Spark cannot even parse is not Spark's
        return False


#: tokens after which a name is a table's (``ALTER TABLE t``, ``FROM t``, ``ON TABLE t``, ...)
_TABLE_POSITION_WORDS = frozenset({"TABLE", "VIEW", "FROM", "INTO", "JOIN", "UPDATE"})


def _names_in(sql: str, table_positions_only: bool = False) -> Iterator[exp.Table]:
    """Dotted names in a statement's tokens, as tables (for error messages only); with
    ``table_positions_only``, only qualified names and names right after a table keyword."""
    from sqlglot.tokens import TokenType

    from sqlext.sql.dialect import Sqlext

    name_tokens = (TokenType.VAR, TokenType.IDENTIFIER)
    runs: list[tuple[list, bool]] = []
    previous = None
    tokens = Sqlext().tokenize(sql)
    if len(tokens) == 2 and tokens[0].token_type == TokenType.COMMAND:
        tokens = Sqlext().tokenize(tokens[1].text)   # MSCK REPAIR 'table s.t': the rest as text
    for token in tokens:
        if token.token_type in name_tokens:
            if previous is not None and previous.token_type == TokenType.DOT and runs:
                runs[-1][0].append(token)
            else:
                after_keyword = previous is not None and \
                    previous.text.upper() in _TABLE_POSITION_WORDS
                runs.append(([token], after_keyword))
        previous = token
    for parts, after_keyword in runs:
        if table_positions_only and not after_keyword and len(parts) < 2:
            continue
        if len(parts) <= 3:
            ids = [exp.to_identifier(t.text, quoted=t.token_type == TokenType.IDENTIFIER)
                   for t in parts]
            yield exp.Table(this=ids[-1], db=ids[-2] if len(ids) > 1 else None,
                            catalog=ids[-3] if len(ids) > 2 else None)
