"""Whether a WHEN NOT MATCHED BY SOURCE condition cannot fail on any row.

delta-spark 4.4 evaluates such a condition on every row of the table (its join is full), so a
condition that fails at run time on one row (ANSI ``10 / t.b > 1`` with ``b = 0``, a cast, a
``raise_error``) fails the MERGE even when no clause takes that row. sqlext skips the files the
conditions rule out only when evaluating a condition on a skipped row could not have failed:
comparisons of a target column with a literal of its own kind (numbers with a numeric column,
strings with a string column, booleans with a boolean one), ``IS [NOT] NULL``, ``IN`` lists and
``BETWEEN`` of such literals, joined by AND, OR and NOT. Anything else (arithmetic, functions,
casts, a comparison Spark would answer by casting a string column to a number) counts as able to
fail. Measured in tests/deltaspark/test_deltaspark_merge_by_source_eval.py.
"""

from __future__ import annotations

from pyspark.sql import types as T
from sqlglot import exp

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)
_NUMERIC = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType,
            T.DecimalType)


def cannot_fail(node: exp.Expression, types: dict[str, T.DataType], alias: str | None) -> bool:
    """Whether evaluating ``node`` (a condition over the target, whose columns have ``types``,
    keys lower case, and which is named ``alias``) can fail on no row."""
    node = node.unnest()
    if isinstance(node, (exp.And, exp.Or)):
        return cannot_fail(node.this, types, alias) and cannot_fail(node.expression, types, alias)
    if isinstance(node, exp.Not):
        return cannot_fail(node.this, types, alias)
    if isinstance(node, exp.Boolean):
        return True
    if isinstance(node, exp.Is):
        return _column_type(node.this, types, alias) is not None \
            and isinstance(node.expression, exp.Null)
    if isinstance(node, _COMPARISONS):
        left, right = node.this.unnest(), node.expression.unnest()
        if _column_type(left, types, alias) is None:
            left, right = right, left
        return _fits(_column_type(left, types, alias), right)
    if isinstance(node, exp.In):
        kind = _column_type(node.this, types, alias)
        return not node.args.get("query") and not node.args.get("unnest") \
            and all(_fits(kind, v) for v in node.expressions)
    if isinstance(node, exp.Between):
        kind = _column_type(node.this, types, alias)
        return _fits(kind, node.args.get("low")) and _fits(kind, node.args.get("high"))
    return False


def _column_type(node: exp.Expression, types: dict[str, T.DataType],
                 alias: str | None) -> T.DataType | None:
    """The type of the top-level target column ``node`` names (None: not such a column)."""
    if not isinstance(node, exp.Column) or node.args.get("db") or node.args.get("catalog"):
        return None
    qualifier = node.table.lower()
    if qualifier and (alias is None or qualifier != alias.lower()):
        return None
    return types.get(node.name.lower())


def _fits(kind: T.DataType | None, value: exp.Expression | None) -> bool:
    """Whether comparing a column of type ``kind`` with ``value`` casts nothing that can fail:
    ``value`` is NULL or a literal of the column's own kind."""
    if kind is None or value is None:
        return False
    value = value.unnest()
    if isinstance(value, exp.Null):
        return True
    if isinstance(kind, _NUMERIC):
        if isinstance(value, exp.Neg):
            value = value.this.unnest()
        return isinstance(value, exp.Literal) and value.is_number
    if isinstance(kind, T.StringType):
        return isinstance(value, exp.Literal) and value.is_string
    if isinstance(kind, T.BooleanType):
        return isinstance(value, exp.Boolean)
    return False
