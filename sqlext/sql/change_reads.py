"""Change feed reads in SQL: ``t CHANGES FROM ...``, ``table_changes(...)`` and ``db.t.changes``.

Each becomes a :class:`ChangeRead`, whose bounds are expressions evaluated when the statement
runs. For ``db.t.changes`` the range comes from the enclosing query's WHERE: conjuncts comparing
``_commit_version`` or ``_commit_timestamp`` with a constant bound it (the WHERE still filters the
rows, so the bounds only need to cover them).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from sqlext.catalog import TableRef
from sqlext.errors import AnalysisException
from sqlext.log.pruning import conjuncts
from sqlext.log.table import DeltaLog
from sqlext.sql import plan as P
from sqlext.sql.nodes import ChangesClause

COMMIT_VERSION = "_commit_version"
COMMIT_TIMESTAMP = "_commit_timestamp"
#: Spark 4's default for ``CHANGES FROM``; raw feeds (``table_changes``, ``t.changes``) use "none"
CHANGES_CLAUSE_DEFAULT_MODE = "dropCarryovers"
OPTIONS = {"deduplicationmode": "deduplicationMode", "computeupdates": "computeUpdates",
           "identifiercolumns": "identifierColumns"}


@dataclass
class ChangeRead:
    """A change feed read; bounds are sqlglot expressions (or None)."""

    start_version: exp.Expression | None = None
    end_version: exp.Expression | None = None
    start_timestamp: exp.Expression | None = None
    end_timestamp: exp.Expression | None = None
    mode: str = "none"
    compute_updates: bool = False
    identifier_columns: list[str] | None = None

    def dataframe(self, spark: SparkSession, ref: TableRef) -> DataFrame:
        from sqlext.engine.changes.read import changes_of

        def version(e, what):
            return None if e is None else P.integer(spark, e, what)

        def ts(e):
            return None if e is None else P.timestamp(spark, e)

        start = version(self.start_version, "the starting version")
        if start is None and self.start_timestamp is None:
            start = DeltaLog(ref.location, name=ref.display).listing().earliest_commit or 0
        return changes_of(spark, ref, start, version(self.end_version, "the ending version"),
                          ts(self.start_timestamp), ts(self.end_timestamp), self.mode,
                          self.compute_updates, self.identifier_columns)


def from_clause(clause: ChangesClause, table_label: str) -> ChangeRead:
    """``CHANGES FROM VERSION|TIMESTAMP a [TO ... b] [WITH (...)]``."""
    options = {}
    for key, value in clause.options_dict().items():
        name = OPTIONS.get(key.lower())
        if name is None:
            raise AnalysisException(
                f"{table_label} CHANGES: unknown option {key!r}; supported: "
                + ", ".join(OPTIONS.values()), table=table_label)
        options[name] = value
    read = ChangeRead(
        mode=options.get("deduplicationMode", CHANGES_CLAUSE_DEFAULT_MODE),
        compute_updates=_flag(options.get("computeUpdates", "false"), table_label),
        identifier_columns=_columns(options.get("identifierColumns")))
    start, end = clause.args["start"], clause.args.get("end")
    if clause.text("kind").upper() == "VERSION":
        read.start_version, read.end_version = start, end
    else:
        read.start_timestamp, read.end_timestamp = start, end
    return read


def from_function(function: exp.Anonymous) -> tuple[exp.Expression, ChangeRead]:
    """``table_changes('t', start[, end])``: (the table name expression, the read).

    A string bound is a timestamp, a number a version (as Databricks reads them).
    """
    args = function.expressions
    if len(args) not in (2, 3):
        raise AnalysisException(
            "table_changes takes a table name, a start and an optional end: "
            "table_changes('t', 1[, 5]) or table_changes('t', '2024-01-01'[, '2024-02-01'])")
    read = ChangeRead()
    for i, bound in enumerate(args[1:]):
        is_time = isinstance(bound, exp.Literal) and bound.is_string or isinstance(bound, exp.Cast)
        if i == 0:
            if is_time:
                read.start_timestamp = bound
            else:
                read.start_version = bound
        elif is_time:
            read.end_timestamp = bound
        else:
            read.end_version = bound
    return args[0], read


def from_where(table: exp.Table, alias: str) -> ChangeRead:
    """The raw change feed of ``db.t.changes``, bounded by the enclosing WHERE."""
    read = ChangeRead()
    select = table.parent_select
    where = select.args.get("where") if select is not None else None
    if where is None:
        return read
    lows_v, highs_v = [], []
    for conjunct in conjuncts(where.this):
        for column, op, value in _comparisons(conjunct):
            if column.table and column.table.lower() != alias.lower():
                continue
            name = column.name.lower()
            if name == COMMIT_VERSION and _is_int(value):
                n = int(value.to_py())
                if op in (">=", ">", "="):
                    lows_v.append(n + 1 if op == ">" else n)
                if op in ("<=", "<", "="):
                    highs_v.append(n - 1 if op == "<" else n)
            elif name == COMMIT_TIMESTAMP and _is_time(value):
                if op in (">=", ">", "="):
                    read.start_timestamp = value
                if op in ("<=", "<", "="):
                    read.end_timestamp = value
    if lows_v:
        read.start_version, read.start_timestamp = exp.Literal.number(max(lows_v)), None
    if highs_v:
        read.end_version, read.end_timestamp = exp.Literal.number(max(min(highs_v), 0)), None
    return read


_OPS = {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=", exp.EQ: "="}
_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "=": "="}


def _comparisons(node: exp.Expression):
    """(column, op, constant) for ``col op c``, ``c op col`` and ``col BETWEEN a AND b``."""
    if isinstance(node, exp.Between) and isinstance(node.this, exp.Column):
        yield node.this, ">=", node.args["low"]
        yield node.this, "<=", node.args["high"]
        return
    op = _OPS.get(type(node))
    if op is None:
        return
    left, right = node.this, node.expression
    if isinstance(left, exp.Column):
        yield left, op, right
    elif isinstance(right, exp.Column):
        yield right, _FLIP[op], left


def _is_int(value: exp.Expression) -> bool:
    return isinstance(value, exp.Literal) and not value.is_string and value.name.isdigit()


def _is_time(value: exp.Expression) -> bool:
    if isinstance(value, exp.Cast):
        value = value.this
    return isinstance(value, exp.Literal) and value.is_string


def _flag(value: str, table_label: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise AnalysisException(f"{table_label} CHANGES: computeUpdates must be 'true' or "
                                f"'false', not {value!r}", table=table_label)
    return value.lower() == "true"


def _columns(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [c.strip() for c in value.split(",") if c.strip()]
