"""Conditions and SET assignments of DML statements, checked by Spark's analyser before any work.

A condition is a SQL string or a pyspark Column. :func:`resolve_condition` analyses it against
the table's schema (no data is read) and refuses, with a :class:`~sqlext.errors.SqlextError`
naming table and version, what DELETE / UPDATE / MERGE cannot run: unknown columns, a
non-boolean condition, aggregates and window functions, subqueries, non-deterministic
expressions. It returns the Column, Spark's SQL text of it (what the commit records), the
columns it refers to, and a sqlglot tree for file pruning and conflict detection.

:func:`resolve_assignments` does the same for ``set`` maps and casts each value to its column's
type as Spark's ANSI store assignment does.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

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


def as_column(value, what: str, where: str) -> tuple[Column, str | None]:
    """A Column for a SQL string or Column argument, and the SQL text when one was given."""
    if isinstance(value, Column):
        return value, None
    if isinstance(value, str):
        try:
            return F.expr(value), value
        except PySparkException as exc:
            raise ParseError(f"{where}: cannot parse {what} {value!r}: {_first_line(exc)}") from exc
    raise SqlextError(f"{where}: {what} must be a SQL string or a pyspark Column, not "
                      f"{type(value).__name__}")


def _has_subquery(spark_session, expression) -> bool:
    jvm = spark_session.sparkContext._jvm
    return bool(jvm.org.apache.spark.sql.catalyst.expressions.SubqueryExpression.hasSubquery(
        expression))


def _references(expression) -> frozenset[str]:
    refs = expression.references().toSeq()
    return frozenset(refs.apply(i).name().lower() for i in range(refs.size()))


def resolve_condition(frame: DataFrame, condition, table: str, version: int,
                      operation: str) -> Condition:
    """Analyse ``condition`` (SQL string or Column) against ``frame`` (an empty DataFrame with
    the table's columns, aliased as the table is) and return it as a :class:`Condition`.

    Raises :class:`ParseError`, :class:`AnalysisException` (unknown column, not boolean,
    aggregate, window function, non-deterministic) or :class:`UnsupportedOperationError`
    (subquery, as in delta-spark).
    """
    where = _where(table, version)
    column, text = as_column(condition, f"{operation} condition", where)
    shown = text if text is not None else str(column)
    try:
        analysed = frame.filter(column)._jdf.queryExecution().analyzed()
    except PySparkException as exc:
        cls = ParseError if type(exc).__name__ == "ParseException" else AnalysisException
        raise cls(f"{where}: the {operation} condition {shown!r} is invalid: {_first_line(exc)}. "
                  f"Columns of the table: {', '.join(frame.columns)}. The table is unchanged."
                  ) from exc
    expression = analysed.condition()
    if _has_subquery(frame.sparkSession, expression):
        raise UnsupportedOperationError(
            f"{where}: subqueries are not supported in the {operation} condition {shown!r} (as "
            "in delta-spark). Compute the values first, or use MERGE. The table is unchanged.")
    if not expression.deterministic():
        raise AnalysisException(
            f"{where}: the {operation} condition {shown!r} is not deterministic; the rows it "
            "selects must not change between reads. The table is unchanged.")
    sql = expression.sql()
    return Condition(column, sql, _references(expression), _sqlglot(text, sql))


def _sqlglot(text: str | None, sql: str) -> exp.Expression | None:
    # the user's text keeps column references free of the casts Spark's analyser inserts, which
    # lets the pruner compare them with statistics; Spark's own rendering is the fallback
    for candidate in (text, sql):
        if candidate is None:
            continue
        try:
            return parse_predicate(candidate)
        except Exception:  # noqa: BLE001 - unparsable means "cannot prune"
            continue
    return None


# --- SET assignments ---------------------------------------------------------------------------


def _column_name(key: str) -> str:
    key = key.strip()
    if len(key) >= 2 and key[0] == key[-1] == "`":
        return key[1:-1].replace("``", "`")
    return key


def resolve_assignments(frame: DataFrame, assignments, table: str, version: int,
                        operation: str, case_sensitive: bool = False,
                        schema: T.StructType | None = None) -> dict[str, Column]:
    """``{column name: value}`` with each value analysed against ``frame`` and cast to the
    column's type (from ``schema``, the table's; default ``frame.schema``) as Spark's ANSI store
    assignment does.

    Types that cannot be store-assigned (e.g. string to int) are refused here; values that do
    not fit at run time (overflow), and NULLs for a NOT NULL column, fail the Spark job with a
    message starting with :data:`RUNTIME_ERROR_MARK` (see :func:`runtime_error`).
    """
    where = _where(table, version)
    if not isinstance(assignments, dict) or not assignments:
        raise SqlextError(f"{where}: {operation} needs `set`, a non-empty dict mapping column "
                          "names to SQL strings or Columns")
    fields = {(f.name if case_sensitive else f.name.lower()): f
              for f in (schema or frame.schema).fields}
    targets: dict[str, tuple[T.StructField, Column, str]] = {}
    for key, value in assignments.items():
        if not isinstance(key, str):
            raise SqlextError(f"{where}: {operation} `set` keys must be column names, not {key!r}")
        name = _column_name(key)
        field = fields.get(name if case_sensitive else name.lower())
        if field is None:
            hint = (" Nested fields cannot be assigned one by one; assign the whole struct "
                    "(e.g. with named_struct)." if "." in name else "")
            raise AnalysisException(
                f"{where}: {operation} sets column {key!r}, which the table does not have. "
                f"Columns: {', '.join(frame.columns)}.{hint} The table is unchanged.")
        if field.name in targets:
            raise AnalysisException(f"{where}: {operation} sets column {field.name!r} more than "
                                    "once. The table is unchanged.")
        column, text = as_column(value, f"value for column {field.name!r}", where)
        targets[field.name] = (field, column, text if text is not None else str(column))
    aliases = {name: f"__sqlext_set_{i}" for i, name in enumerate(targets)}
    projected = [col.alias(aliases[name]) for name, (_, col, _) in targets.items()]
    try:
        analysed_df = frame.select(*projected)
        plan = analysed_df._jdf.queryExecution().analyzed()
    except PySparkException as exc:
        raise AnalysisException(f"{where}: a {operation} value is invalid: {_first_line(exc)}. "
                                f"Columns of the table: {', '.join(frame.columns)}. The table is "
                                "unchanged.") from exc
    base = frame._jdf.queryExecution().analyzed()
    if plan.nodeName() != "Project" or plan.child().nodeName() != base.nodeName():
        raise AnalysisException(f"{where}: {operation} values must be expressions over one row: "
                                "no aggregate or window functions. The table is unchanged.")
    expressions = plan.expressions()
    for i in range(expressions.size()):
        if _has_subquery(frame.sparkSession, expressions.apply(i)):
            raise UnsupportedOperationError(
                f"{where}: subqueries are not supported in {operation} values (as in "
                "delta-spark). The table is unchanged.")
    value_types = {f.name: f.dataType for f in analysed_df.schema.fields}
    out = {}
    for name, (field, column, shown) in targets.items():
        out[name] = store_assign(frame, column, value_types[aliases[name]], field, where, shown)
    return out


def store_assign(frame: DataFrame, value: Column, value_type: T.DataType, field: T.StructField,
                 where: str, shown: str) -> Column:
    """``value`` cast to ``field``'s type as Spark's ANSI store assignment does: types Spark
    refuses (``Cast.canANSIStoreAssign``) raise :class:`AnalysisException` now; a value that
    does not fit, or NULL for a NOT NULL column, fails the job that evaluates it."""
    target = field.dataType
    if value_type != target:
        session = frame.sparkSession
        jvm = session.sparkContext._jvm
        parse = session._jsparkSession.parseDataType
        if not jvm.org.apache.spark.sql.catalyst.expressions.Cast.canANSIStoreAssign(
                parse(value_type.json()), parse(target.json())):
            raise AnalysisException(
                f"{where}: cannot assign {shown!r} of type {value_type.simpleString()} to column "
                f"{field.name!r} of type {target.simpleString()} (Spark's ANSI store assignment "
                "does not allow it). Cast the value explicitly. The table is unchanged.")
        cast = value.try_cast(target)
        value = F.when(value.isNotNull() & cast.isNull(), runtime_error(
            f"{where}: a value of {shown!r} does not fit column {field.name!r} of type "
            f"{target.simpleString()}: ", value.cast("string"))).otherwise(cast)
    if not field.nullable:
        value = F.when(value.isNull(), runtime_error(
            f"{where}: NOT NULL constraint violated: {shown!r} is NULL for column "
            f"{field.name!r}")).otherwise(value)
    return value


def runtime_error(message: str, detail: Column | None = None) -> Column:
    """A Column that fails the Spark job with ``message`` (marked as sqlext's) when evaluated."""
    text = F.lit(f"{RUNTIME_ERROR_MARK} {message}")
    return F.raise_error(text if detail is None else F.concat(text, detail))
