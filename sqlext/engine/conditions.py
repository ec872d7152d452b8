"""Conditions and SET assignments of DML statements, checked by Spark's analyser before any work.

A condition is a SQL string, a sqlglot expression or a pyspark Column, normalised once by
:func:`as_column`: Spark parses the SQL text (a sqlglot tree's own text, see :func:`sql_text`), and
sqlglot parses a string once for pruning (a tree is used as it is). :func:`resolve_condition`
analyses it against the table's schema (no data is read) and refuses, with a
:class:`~sqlext.errors.SqlextError` naming table and version, what DELETE / UPDATE / MERGE cannot
run: unknown columns, a non-boolean condition, aggregates and window functions, subqueries,
non-deterministic expressions. It returns the Column, Spark's SQL text of it (what the commit
records), the columns it refers to, and a sqlglot tree for file pruning and conflict detection.

SET assignments are analysed in :mod:`sqlext.engine.dml.assignments`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.utils import AnalysisException as SparkAnalysisException
from sqlglot import exp

from sqlext.engine import connect_plans
from sqlext.engine.pyspark_errors import spark_fields
from sqlext.engine.session import is_connect, session_constant
from sqlext.errors import (AnalysisException, ParseError, SqlextError,
                           UnsupportedOperationError)
from sqlext.log.pruning import parse_predicate

#: Prefix of the messages that sqlext's runtime checks (``raise_error``) raise inside Spark jobs.
RUNTIME_ERROR_MARK = "[sqlext]"


@dataclass(frozen=True)
class Condition:
    """An analysed DML condition."""

    column: Column                  # re-resolved against each DataFrame it filters
    sql: str                        # Spark's SQL of the analysed expression
    references: frozenset[str]      # lowercased names of the columns it reads
    predicate: exp.Expression | None  # sqlglot tree for pruning; None when sqlglot cannot parse

    def metadata_only(self, partition_columns: list[str]) -> bool:
        """Whether the partition values alone decide the condition (delta-spark's metadata
        predicate: every column it reads is a partition column; no columns at all counts)."""
        return self.references <= {c.lower() for c in partition_columns}

    @property
    def matches(self) -> Column:
        """``condition <=> true``: NULL counts as not matching."""
        return self.column.eqNullSafe(F.lit(True))


def _where(table: str, version: int) -> str:
    return f"table {table}, version {version}"


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].rstrip(" ;.") if text else type(exc).__name__


#: key of a sqlglot node's ``meta`` holding the SQL text it came from (the SQL front sets it to
#: the user's own text, which Spark then parses instead of sqlglot's rendering)
SQL_TEXT = "sqlext_sql"


def sql_text(tree: exp.Expression) -> str:
    """The SQL text of a sqlglot expression: the text it was taken from when the SQL front
    recorded it (``meta[SQL_TEXT]``), else sqlglot's Spark rendering."""
    return tree.meta.get(SQL_TEXT) or tree.sql(dialect="spark")


def with_sql_text(tree: exp.Expression, text: str) -> exp.Expression:
    """``tree``, recording ``text`` as the SQL it was taken from (see :func:`sql_text`)."""
    tree.meta[SQL_TEXT] = text
    return tree


def as_column(value, what: str, where: str) -> tuple[Column, str | None]:
    """A Column for a SQL string, sqlglot expression or Column argument, and the SQL text when
    one was given (a Column has none)."""
    if isinstance(value, Column):
        return value, None
    if isinstance(value, exp.Expression):
        value = sql_text(value)
    if isinstance(value, str):
        try:
            return F.expr(value), value
        except PySparkException as exc:
            raise ParseError(f"{where}: cannot parse {what} {value!r}: {_first_line(exc)}",
                             **spark_fields(exc)) from exc
    raise SqlextError(f"{where}: {what} must be a SQL string, a sqlglot expression or a pyspark "
                      f"Column, not {type(value).__name__}")


def has_subquery(spark_session, expression) -> bool:
    """Whether a (JVM) Catalyst expression holds a subquery."""
    jvm = spark_session.sparkContext._jvm
    # the class looked up once per session: py4j resolves a dotted name one round trip a part
    subquery = session_constant(spark_session, "SubqueryExpression",
                                lambda: jvm.org.apache.spark.sql.catalyst.expressions
                                .SubqueryExpression)
    return bool(subquery.hasSubquery(expression))


def _references(expression) -> frozenset[str]:
    refs = expression.references().toSeq()
    return frozenset(refs.apply(i).name().lower() for i in range(refs.size()))


def resolve_condition(frame: DataFrame, condition, table: str, version: int,
                      operation: str) -> Condition:
    """Analyse ``condition`` (SQL string, sqlglot expression or Column) against ``frame`` (an
    empty DataFrame with the table's columns, aliased as the table is) and return it as a
    :class:`Condition`.

    Raises :class:`ParseError`, :class:`AnalysisException` (unknown column, not boolean,
    aggregate, window function, non-deterministic) or :class:`UnsupportedOperationError`
    (subquery, as in delta-spark).
    """
    where = _where(table, version)
    column, text = as_column(condition, f"{operation} condition", where)
    shown = text if text is not None else str(column)
    connect = is_connect(frame.sparkSession)
    try:
        analysed = frame.filter(column)
        # isStreaming: an analysis by the server (a Connect filter keeps its child's cached
        # schema, so .schema would not ask)
        analysed = analysed.isStreaming if connect else analysed._jdf.queryExecution().analyzed()
    except PySparkException as exc:
        cls = ParseError if type(exc).__name__ == "ParseException" else AnalysisException
        raise cls(f"{where}: the {operation} condition {shown!r} is invalid: {_first_line(exc)}. "
                  f"Columns of the table: {', '.join(frame.columns)}. The table is unchanged.",
                  table=table, version=version, **spark_fields(exc)) from exc
    if connect:     # no JVM plan: the facts come from the text or the Column's own tree
        references, deterministic, subquery = connect_plans.condition_facts(frame, column, text)
    else:
        expression = analysed.condition()
        references, deterministic = _references(expression), expression.deterministic()
        subquery = has_subquery(frame.sparkSession, expression)
    if subquery:
        raise UnsupportedOperationError(
            f"{where}: subqueries are not supported in the {operation} condition {shown!r} (as "
            "in delta-spark). Compute the values first, or use MERGE. The table is unchanged.",
            error_class="DELTA_UNSUPPORTED_SUBQUERY", table=table, version=version,
            message_parameters={"operation": operation, "cond": shown})
    if not deterministic:
        raise AnalysisException(
            f"{where}: the {operation} condition {shown!r} is not deterministic; the rows it "
            "selects must not change between reads. The table is unchanged.",
            error_class="INVALID_NON_DETERMINISTIC_EXPRESSIONS", sqlstate="42K0E",
            table=table, version=version)
    tree = condition.copy() if isinstance(condition, exp.Expression) else None
    if connect:     # Spark's name of a Column is no SQL sqlglot may prune with
        sql = connect_plans.expression_sql(frame, column, text)
        return Condition(column, sql, references, tree or _sqlglot(text, None))
    sql = expression.sql()
    return Condition(column, sql, references, tree or _sqlglot(text, sql))


def _sqlglot(text: str | None, sql: str) -> exp.Expression | None:
    # the user's text keeps column references free of the casts Spark's analyser inserts, which
    # lets the pruner compare them with statistics; Spark's own rendering is the fallback (the
    # only parse of a condition given as a sqlglot tree is Spark's)
    for candidate in (text, sql):
        if candidate is None:
            continue
        try:
            return parse_predicate(candidate)
        except Exception:  # noqa: BLE001 - unparsable means "cannot prune"
            continue
    return None


# --- filters of reads, change reads and replaceWhere ------------------------------------------


def spark_condition(text: str, table: str) -> Column:
    """A Spark Column for a SQL condition, with Spark's parse errors as sqlext errors."""
    try:
        return F.expr(text)
    except Exception as exc:  # noqa: BLE001 - pyspark raises ParseException subclasses
        raise AnalysisException(f"table {table}: cannot parse condition {text!r}: {exc}",
                                table=table, **spark_fields(exc)) from exc


def check_condition(df: DataFrame, condition: Column, text: str, table: str) -> None:
    """Refuse ``condition`` (the Column of ``text``) when Spark cannot analyse it against
    ``df``'s columns, before any data is read or written."""
    try:
        df.select(condition.alias("c")).schema  # noqa: B018 - forces analysis
    except SparkAnalysisException as exc:
        raise AnalysisException(f"table {table}: condition {text!r} is invalid: "
                                f"{str(exc).splitlines()[0]}", table=table,
                                **spark_fields(exc)) from exc
