"""Delta constraints: what a table demands of every row written to it, and the check that makes
the write's own Spark job fail on a row that breaks it.

A table's constraints, as delta-spark reads them:

- NOT NULL: a schema field with ``nullable: false`` (Delta's column invariants, writer version 2).
  A non-nullable field nested in a struct is checked where its parent struct is not NULL (a NULL
  parent holds no field); fields inside arrays and maps are not checked (delta-spark neither).
- CHECK: table property ``delta.constraints.<name>`` = a boolean SQL expression (the
  ``checkConstraints`` writer feature, writer version 3). A row violates it when the expression
  is false or NULL, as in delta-spark.
- Legacy column invariants: a field's ``delta.invariants`` metadata (``{"expression":
  {"expression": "<sql>"}}``), checked like a CHECK named ``EXPRESSION(<sql>)``.

:func:`enforce` adds the check to the DataFrame a write is about to write: a violating row makes
``raise_error`` fail the job with a message marked :data:`CONSTRAINT_MARK`, which
:func:`sqlext.engine.spark_jobs.spark_error` turns into
:class:`~sqlext.errors.ConstraintViolationError`. No row is collected into Python.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp, parse_one

from sqlext.engine.generated import generated_columns, mismatch, mismatch_message
from sqlext.engine.schemas import quote_identifier
from sqlext.errors import UnsupportedTableFeatureError

#: table property prefix of a CHECK constraint (the name after it is lower case)
CONSTRAINT_PREFIX = "delta.constraints."
#: field metadata key of a legacy column invariant
INVARIANTS_KEY = "delta.invariants"
#: prefix of the ``raise_error`` message of a violated constraint inside a Spark job
CONSTRAINT_MARK = "[sqlext constraint]"


@dataclass(frozen=True)
class Constraint:
    """One rule every written row must satisfy.

    ``kind`` is ``"NOT NULL"``, ``"CHECK"`` or ``"GENERATED"``; ``name`` the CHECK's name or the
    NOT NULL or generated column (dotted path); ``expression`` the CHECK's SQL text or the
    generation expression; ``path`` the NOT NULL column's field names, outermost first."""

    kind: str
    name: str
    expression: str | None = None
    path: tuple[str, ...] = ()
    data_type: T.DataType | None = None     # a GENERATED column's type


def check_constraints(configuration: Mapping[str, str]) -> dict[str, str]:
    """``{name: expression}`` of the table's CHECK constraints (from its properties)."""
    return {key[len(CONSTRAINT_PREFIX):]: value for key, value in configuration.items()
            if key.lower().startswith(CONSTRAINT_PREFIX)}


def without_check_constraints(configuration: Mapping[str, str]) -> dict[str, str]:
    """``configuration`` without its CHECK constraints (what a replaced table keeps)."""
    return {key: value for key, value in configuration.items()
            if not key.lower().startswith(CONSTRAINT_PREFIX)}


def table_constraints(schema: T.StructType, configuration: Mapping[str, str]) -> list[Constraint]:
    """Every constraint of a table with this schema and these properties: NOT NULL fields and
    legacy invariants (from the schema) first, then CHECK constraints, as delta-spark orders
    them, then generated columns (each must equal its expression,
    :mod:`sqlext.engine.generated`)."""
    found: list[Constraint] = []
    _schema_constraints(schema, (), found)
    found += [Constraint("CHECK", name, expression)
              for name, expression in sorted(check_constraints(configuration).items())]
    found += [Constraint("GENERATED", name, expression, data_type=dtype)
              for name, (expression, dtype) in generated_columns(schema).items()]
    return found


def _schema_constraints(struct: T.StructType, parents: tuple[str, ...],
                        found: list[Constraint]) -> None:
    for field in struct.fields:
        path = parents + (field.name,)
        if not field.nullable:
            found.append(Constraint("NOT NULL", ".".join(path), path=path))
        rule = (field.metadata or {}).get(INVARIANTS_KEY)
        if rule is not None:
            expression = _invariant_expression(rule)
            found.append(Constraint("CHECK", f"EXPRESSION({expression})", expression))
        if isinstance(field.dataType, T.StructType):
            _schema_constraints(field.dataType, path, found)


def _invariant_expression(rule) -> str:
    """The SQL of a persisted invariant rule (a JSON string or an already decoded object)."""
    try:
        data = json.loads(rule) if isinstance(rule, str) else rule
        return str(data["expression"]["expression"])
    except (KeyError, TypeError, ValueError):
        raise UnsupportedTableFeatureError(
            f"unrecognized column invariant {rule!r}: sqlext implements invariants of the form "
            '{"expression": {"expression": "<SQL>"}} only; write to this table with delta-spark'
            ) from None


def _field(path: tuple[str, ...]) -> Column:
    """The (nested) field at ``path``, each part taken literally."""
    return F.col(".".join(quote_identifier(p) for p in path))


def referenced_columns(expression: str) -> list[str]:
    """The columns a CHECK expression reads, as written in it (for the violation message);
    empty when sqlglot cannot parse the expression."""
    try:
        tree = parse_one(expression, read="spark")
    except Exception:  # noqa: BLE001 - the values are a courtesy of the message
        return []
    names: list[str] = []
    for column in tree.find_all(exp.Column):
        text = column.sql(dialect="spark")
        if text not in names:
            names.append(text)
    return names


def violation(constraint: Constraint) -> Column:
    """A Column that is true for a row violating ``constraint``."""
    if constraint.kind == "NOT NULL":
        parents = [_field(constraint.path[:i]).isNotNull()
                   for i in range(1, len(constraint.path))]
        broken = _field(constraint.path).isNull()
        for parent in parents:
            broken = parent & broken
        return broken
    if constraint.kind == "GENERATED":
        return mismatch(constraint.name, constraint.expression, constraint.data_type)
    return ~F.coalesce(F.expr(constraint.expression), F.lit(False))


def _message(constraint: Constraint) -> Column:
    if constraint.kind == "GENERATED":
        return mismatch_message(constraint.name, constraint.expression)
    if constraint.kind == "NOT NULL":
        return F.lit(f"{CONSTRAINT_MARK} NOT NULL constraint violated for column: "
                     f"{constraint.name}")
    parts: list[Column] = [F.lit(f"{CONSTRAINT_MARK} CHECK constraint {constraint.name} "
                                 f"({constraint.expression}) violated by row with values:")]
    for name in referenced_columns(constraint.expression):
        parts += [F.lit(f" - {name} : "),
                  F.coalesce(F.expr(name).cast("string"), F.lit("null"))]
    return F.concat(*parts)


def constraint_error(message: str) -> Column:
    """A Column failing the Spark job with ``message`` as a constraint violation (see
    :func:`sqlext.engine.spark_jobs.spark_error`)."""
    return F.raise_error(F.lit(f"{CONSTRAINT_MARK} {message}"))


def enforce(df: DataFrame, constraints: list[Constraint], only_where: Column | None = None
            ) -> DataFrame:
    """``df`` with a check that fails the Spark job evaluating it at the first row violating one
    of ``constraints`` (restricted to rows where ``only_where`` is true, e.g. data rows of a
    write that also carries change rows). Rows pass through unchanged."""
    if not constraints:
        return df
    check = None
    for constraint in constraints:
        broken = violation(constraint)
        if only_where is not None:
            broken = only_where & broken
        failure = F.raise_error(_message(constraint))
        check = F.when(broken, failure) if check is None else check.when(broken, failure)
    return df.filter(check.otherwise(F.lit(True)))
