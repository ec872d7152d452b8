"""A planned statement and the pieces every planner shares.

Planning (parse, resolve, build trees, render SQL) runs no Spark job; a plan's ``run(spark)``
does the work. Reads of sqlext tables are bound to temporary views only while the statement runs
(:func:`bound`): Spark analyses a query eagerly, so the DataFrame a statement returns keeps
working after the views are dropped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from sqlext.engine.session import native_sql, native_sql_with_views
from sqlext.errors import AnalysisException, InvalidTimeTravelError
from sqlext.sql import spark_errors
from sqlext.sql.splice import Rendered


@dataclass
class Plan:
    """A statement whose work is a closure (the statements not yet planned as data).
    ``sql`` is the SQL handed to Spark, if any (for tests and the benchmark); ``labels`` maps the
    temporary view names in it to what the user wrote; ``texts`` are the SQL texts handed to
    Spark, with where they came from in the user's script (so Spark's errors point into the
    user's text)."""

    action: Callable[[], DataFrame | None]
    sql: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    texts: list[Rendered] = field(default_factory=list)

    def run(self, spark: SparkSession) -> DataFrame | None:
        """Do the statement's work; its result (None: nothing to return)."""
        return self.action()


@dataclass(kw_only=True)
class CallPlan:
    """Base of the plans that are data: a subclass holds one engine call's arguments and its
    :meth:`run` makes the call. ``sql``, ``labels`` and ``texts`` as in :class:`Plan`."""

    sql: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    texts: list[Rendered] = field(default_factory=list)

    def run(self, spark: SparkSession) -> DataFrame | None:
        raise NotImplementedError


def spark_sql(spark: SparkSession, sql: str, labels: dict[str, str] | None = None,
              texts: list[Rendered] | None = None, views: dict | None = None) -> DataFrame:
    """``spark.sql(sql)`` with Spark's errors raised as sqlext's; ``views``: DataFrames the
    names in ``sql`` stand for (see :func:`~sqlext.engine.session.native_sql_with_views`)."""
    try:
        if views:
            return native_sql_with_views(spark, sql, views)
        return native_sql(spark, sql)
    except spark_errors.spark_exceptions() as exc:
        raise spark_errors.translate(exc, labels, texts) from exc


def passthrough(spark: SparkSession, sql: str | Rendered) -> Plan:
    """A statement Spark runs as written."""
    rendered = sql if isinstance(sql, Rendered) else Rendered(sql)
    return Plan(lambda: spark_sql(spark, rendered.text, None, [rendered]), rendered.text,
                texts=[rendered])


@contextlib.contextmanager
def bound(spark: SparkSession, bindings, rows: bool = True, resolved=None) -> Iterator[None]:
    """Register each binding's DataFrame as its temporary view while the block runs (without
    ``rows``, reads of no file: see ``Binding.dataframe``; ``resolved``: the snapshot of each
    binding, when already known)."""
    registered = []
    try:
        for binding, known in zip(bindings, resolved or [None] * len(bindings)):
            binding.dataframe(spark, rows=rows, resolved=known).createOrReplaceTempView(
                binding.name)
            registered.append(binding.name)
        yield
    finally:
        for name in registered:
            spark.catalog.dropTempView(name)


# --- constant expressions ---------------------------------------------------------------------


def literal(expr: exp.Expression):
    """The Python value of a literal (``1``, ``-2``, ``'x'``, ``TRUE``, ``NULL``), else raise
    ``ValueError``."""
    if isinstance(expr, exp.Paren):
        return literal(expr.this)
    if isinstance(expr, exp.Neg) and isinstance(expr.this, exp.Literal) and not expr.this.is_string:
        return -expr.this.to_py()
    if isinstance(expr, (exp.Literal, exp.Boolean, exp.Null)):
        return expr.to_py()
    raise ValueError(f"not a literal: {expr.sql(dialect='spark')}")


def evaluate(spark: SparkSession, expr: exp.Expression):
    """The value of a constant expression: literals directly, anything else (``current_date() -
    1``) evaluated by Spark."""
    try:
        return literal(expr)
    except ValueError:
        pass
    row = spark_sql(spark, exp.select(expr.copy()).sql(dialect="spark")).first()
    return row[0]


def integer(spark: SparkSession, expr: exp.Expression, what: str) -> int:
    value = evaluate(spark, expr)
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit():
        raise InvalidTimeTravelError(f"{what} must be a non-negative integer, not "
                                     f"{expr.sql(dialect='spark')}",
                                     message_parameters={"timeTravelKey": "versionAsOf"})
    return int(value)


def timestamp(spark: SparkSession, expr: exp.Expression):
    """A timestamp for the engine: string literals as written (read in the session time zone),
    other expressions as milliseconds since the epoch, computed by Spark."""
    try:
        value = literal(expr)
    except ValueError:
        value = None
    if isinstance(value, str):
        return value
    micros = exp.func("unix_micros", exp.cast(expr.copy(), "timestamp"))
    row = spark_sql(spark, exp.select(micros).sql(dialect="spark")).first()
    if row[0] is None:
        raise AnalysisException(f"timestamp {expr.sql(dialect='spark')} is NULL")
    return row[0] // 1000
