"""File pruning: could a data file hold rows matching a predicate?

The predicate is a sqlglot expression (Spark SQL). A file is judged by its partition values
(exact) and its min/max/null-count statistics. The answer is conservative: ``False`` only when no
row of the file can satisfy the predicate; anything not understood counts as "may match".
"""

from __future__ import annotations

import datetime as _dt
import json
from decimal import Decimal, InvalidOperation
from typing import Any

import sqlglot
from sqlglot import exp

from sqlext.errors import ParseError
from sqlext.log.actions import AddFile
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.schema import Field, parse_partition_value, parse_timestamp_text

STRING_STATS_PREFIX = 32
_MAY = True


def parse_predicate(text: str) -> exp.Expression:
    """Parse a Spark SQL boolean expression; raises :class:`ParseError` with the position."""
    try:
        return sqlglot.parse_one(text, read="spark")
    except sqlglot.errors.ParseError as e:
        err = e.errors[0] if e.errors else {}
        raise ParseError(f"cannot parse predicate {text!r}: {err.get('description', e)} "
                         f"(line {err.get('line', '?')}, column {err.get('col', '?')})") from e


def column_name(node: exp.Expression) -> str | None:
    """The top-level column a reference names (qualifiers dropped), lowercased."""
    if isinstance(node, exp.Column):
        return node.name.lower()
    return None


def conjuncts(node: exp.Expression) -> list[exp.Expression]:
    """The AND-ed parts of a predicate (parentheses removed)."""
    node = node.unnest()
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]


def referenced_columns(expr: exp.Expression) -> set[str]:
    """Every column the expression refers to, lowercased and unqualified."""
    return {c.name.lower() for c in expr.find_all(exp.Column)}


def only_partition_columns(expr: exp.Expression, partition_columns: list[str]) -> bool:
    """Whether the predicate refers to partition columns only (and to at least one column)."""
    cols = referenced_columns(expr)
    parts = {c.lower() for c in partition_columns}
    return bool(cols) and cols <= parts and not any(expr.find_all(exp.Subquery, exp.Select))


class FileView:
    """Typed access to one file's partition values and statistics, by logical column names
    (``mapping``: a column-mapped table's, whose log keys them by physical names)."""

    def __init__(self, add: AddFile, types: dict[str, Any], partition_columns: set[str],
                 mapping: ColumnMapping | None = None):
        values = add.partition_values if mapping is None else \
            mapping.logical_partition_values(add.partition_values)
        self.partition_values = {k.lower(): v for k, v in values.items()}
        self.types = types
        self.partition_columns = partition_columns
        stats = None
        if add.stats:
            try:
                stats = json.loads(add.stats, parse_float=Decimal)
            except ValueError:
                stats = None
        if mapping is not None and isinstance(stats, dict):
            stats = mapping.logical_stats(stats)
        self.stats = stats or {}
        lower = lambda d: {k.lower(): v for k, v in (d or {}).items()}  # noqa: E731
        self.min = lower(self.stats.get("minValues"))
        self.max = lower(self.stats.get("maxValues"))
        self.nulls = lower(self.stats.get("nullCount"))
        self.num_records = self.stats.get("numRecords")

    def is_partition(self, col: str) -> bool:
        return col in self.partition_columns

    def partition_value(self, col: str) -> Any:
        return parse_partition_value(self.partition_values.get(col), self.types.get(col))

    def bounds(self, col: str) -> tuple[Any, Any] | None:
        """(min, max) of a data column, typed, or None when unknown or not safely comparable."""
        t = self.types.get(col)
        if t in ("float", "double") or not isinstance(t, str):
            return None      # NaN ordering differs between writers: never prune on floats
        lo, hi = self.min.get(col), self.max.get(col)
        if lo is None or hi is None or isinstance(lo, dict) or isinstance(hi, dict):
            return None
        try:
            lo_v, hi_v = _typed_stat(lo, t), _typed_stat(hi, t)
        except (ValueError, InvalidOperation):
            return None
        if t == "string" and len(hi) >= STRING_STATS_PREFIX:
            hi_v = None          # a truncated maximum bounds nothing
        if t in ("timestamp", "timestamp_ntz") and hi_v is not None:
            hi_v += _dt.timedelta(milliseconds=1)    # writers that truncated instead of rounding up
        return lo_v, hi_v

    def all_null(self, col: str) -> bool:
        n = self.nulls.get(col)
        return isinstance(n, int) and self.num_records is not None and n == self.num_records

    def null_count(self, col: str) -> int | None:
        n = self.nulls.get(col)
        return n if isinstance(n, int) else None


def _typed_stat(value: Any, type_name: str) -> Any:
    if type_name == "date":
        return _dt.date.fromisoformat(str(value)[:10])
    if type_name in ("timestamp", "timestamp_ntz"):
        return parse_timestamp_text(str(value))
    if type_name in ("byte", "short", "integer", "long") or type_name.startswith("decimal"):
        return Decimal(str(value))
    if type_name == "boolean":
        return bool(value)
    return value


def _literal(node: exp.Expression, type_name: Any) -> tuple[bool, Any]:
    """(ok, value) of a constant expression coerced to a column's type; ok False when unknown."""
    if isinstance(node, exp.Paren):
        return _literal(node.this, type_name)
    if isinstance(node, exp.Null):
        return True, None
    if isinstance(node, exp.Neg):
        ok, v = _literal(node.this, type_name)
        return (ok, -v) if ok and isinstance(v, (int, Decimal)) else (False, None)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return _literal(node.this, type_name)
    if isinstance(node, exp.Boolean):
        return (True, node.this) if type_name == "boolean" else (False, None)
    if not isinstance(node, exp.Literal):
        return False, None
    text = node.this
    try:
        if type_name in ("byte", "short", "integer", "long") or (
                isinstance(type_name, str) and type_name.startswith("decimal")):
            return True, Decimal(text)
        if type_name == "date":
            return True, _dt.date.fromisoformat(text.strip()[:10])
        if type_name in ("timestamp", "timestamp_ntz"):
            return True, parse_timestamp_text(text)
        if type_name == "string":
            return (True, text) if node.is_string else (False, None)
        if type_name == "boolean" and node.is_string and text.lower() in ("true", "false"):
            return True, text.lower() == "true"
    except (ValueError, InvalidOperation):
        return False, None
    return False, None


_FLIP = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE, exp.EQ: exp.EQ,
         exp.NEQ: exp.NEQ, exp.NullSafeEQ: exp.NullSafeEQ}
_NEGATE = {exp.GT: exp.LTE, exp.GTE: exp.LT, exp.LT: exp.GTE, exp.LTE: exp.GT, exp.EQ: exp.NEQ,
           exp.NEQ: exp.EQ}


def _compare_exact(op: type, value: Any, literal: Any) -> bool:
    if op is exp.NullSafeEQ:
        return value == literal
    if value is None or literal is None:
        return False
    try:
        return {exp.EQ: value == literal, exp.NEQ: value != literal, exp.LT: value < literal,
                exp.LTE: value <= literal, exp.GT: value > literal, exp.GTE: value >= literal}[op]
    except TypeError:
        return _MAY


def _compare_bounds(op: type, view: FileView, col: str, literal: Any) -> bool:
    if op is exp.NullSafeEQ and literal is None:
        n = view.null_count(col)
        return n is None or n > 0
    if literal is None:
        return False                      # col <op> NULL is never true
    if view.all_null(col):
        return False
    b = view.bounds(col)
    if b is None:
        return _MAY
    lo, hi = b
    try:
        if op in (exp.EQ, exp.NullSafeEQ):
            return lo <= literal and (hi is None or literal <= hi)
        if op is exp.NEQ:
            return not (hi is not None and lo == hi == literal)
        if op is exp.LT:
            return lo < literal
        if op is exp.LTE:
            return lo <= literal
        if op is exp.GT:
            return hi is None or hi > literal
        if op is exp.GTE:
            return hi is None or hi >= literal
    except TypeError:
        return _MAY
    return _MAY


def might_match(expr: exp.Expression, view: FileView, negated: bool = False) -> bool:
    """Whether some row of the file may satisfy ``expr`` (or ``NOT expr`` when ``negated``)."""
    if isinstance(expr, exp.Paren):
        return might_match(expr.this, view, negated)
    if isinstance(expr, exp.Not):
        return might_match(expr.this, view, not negated)
    if isinstance(expr, (exp.And, exp.Or)):
        conj = isinstance(expr, exp.And) != negated     # De Morgan under negation
        left, right = might_match(expr.left, view, negated), might_match(expr.right, view, negated)
        return (left and right) if conj else (left or right)
    if isinstance(expr, exp.Boolean):
        return expr.this != negated
    if isinstance(expr, exp.Column) and view.types.get(_data_column(expr, view) or "") == "boolean":
        return might_match(exp.EQ(this=expr, expression=exp.true()), view, negated)
    if isinstance(expr, exp.Is) and isinstance(expr.expression, exp.Null):
        return _is_null(expr.this, view, want_null=not negated)
    if isinstance(expr, exp.In) and not expr.args.get("query") and not negated:
        return any(might_match(exp.EQ(this=expr.this, expression=e), view) for e in expr.expressions)
    if isinstance(expr, exp.Between) and not negated:
        return (might_match(exp.GTE(this=expr.this, expression=expr.args["low"]), view)
                and might_match(exp.LTE(this=expr.this, expression=expr.args["high"]), view))
    op = type(expr)
    if op in _FLIP:
        left, right = expr.this, expr.expression
        if _data_column(left, view) is None and _data_column(right, view) is not None:
            left, right, op = right, left, _FLIP[op]
        col = _data_column(left, view)
        if col is None or col not in view.types:
            return _MAY
        if negated:
            if op not in _NEGATE:
                return _MAY
            op = _NEGATE[op]
        ok, literal = _literal(right, view.types[col])
        if not ok:
            return _MAY
        if view.is_partition(col):
            return _compare_exact(op, view.partition_value(col), literal)
        return _compare_bounds(op, view, col, literal)
    return _MAY


def _data_column(node: exp.Expression, view: FileView) -> str | None:
    """The top-level column ``node`` names, or None; ``s.x`` where ``s`` is a column of the table
    is the field ``x`` of struct ``s``, not a column ``x`` qualified by a table alias."""
    col = column_name(node)
    if col is None:
        return None
    qualifier = node.args.get("table")
    if qualifier is not None and qualifier.name.lower() in view.types:
        return None
    return col


def _is_null(node: exp.Expression, view: FileView, want_null: bool) -> bool:
    col = _data_column(node, view)
    if col is None or col not in view.types:
        return _MAY
    if view.is_partition(col):
        return (view.partition_value(col) is None) == want_null
    n = view.null_count(col)
    if n is None:
        return _MAY
    if want_null:
        return n > 0
    return view.num_records is None or n < view.num_records


class Pruner:
    """Evaluates one predicate against many files of a table.

    ``mapping``: the column mapping of a table that has one (:meth:`ColumnMapping.of`), whose
    partition values and statistics are keyed by physical names; the predicate, ``schema`` and
    ``partition_columns`` use logical names.
    """

    def __init__(self, predicate: exp.Expression | str | None, schema: list[Field],
                 partition_columns: list[str], mapping: ColumnMapping | None = None):
        if isinstance(predicate, str):
            predicate = parse_predicate(predicate)
        self.predicate = predicate
        self.types = {f.name.lower(): f.type for f in schema}
        self.partition_columns = {c.lower() for c in partition_columns}
        self.mapping = mapping

    @classmethod
    def of(cls, predicate: exp.Expression | str | None, snapshot) -> "Pruner":
        """A pruner over a snapshot's schema, partition columns and column mapping."""
        return cls(predicate, snapshot.schema, snapshot.partition_columns,
                   ColumnMapping.of(snapshot.metadata))

    def might_match(self, add: AddFile) -> bool:
        """Whether ``add`` may hold matching rows (always True without a predicate)."""
        if self.predicate is None:
            return True
        try:
            return might_match(self.predicate, FileView(add, self.types, self.partition_columns,
                                                           self.mapping))
        except Exception:  # noqa: BLE001 - pruning must never turn into wrong answers
            return True

    def prune(self, files: list[AddFile]) -> list[AddFile]:
        """The files that may hold matching rows."""
        if self.predicate is None:
            return list(files)
        return [f for f in files if self.might_match(f)]
