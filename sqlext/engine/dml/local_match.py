"""The rows a deletion-vector DELETE marks, found on the driver for a few small files.

A merge-on-read DELETE only needs the positions of the matching rows. For a narrow condition
(the usual ``id = 5`` or ``id >= a AND id < b``) the candidate files are few and small, and a
Spark job costs more than the work: reading the condition's columns with pyarrow and evaluating
it with ``pyarrow.compute`` takes milliseconds. :func:`local_matching_rows` does that when the
whole condition is in a subset whose meaning is the same in Arrow as in Spark SQL, and returns
None otherwise (the caller then runs its Spark job):

- ``AND``, ``OR``, ``NOT`` (three-valued, Kleene logic, as Spark's), ``=``, ``<>``/``!=``, ``<``,
  ``<=``, ``>``, ``>=``, ``BETWEEN``, ``IN (literals)``, ``IS [NOT] NULL``, a boolean column;
- over top-level data columns (not partition columns) of integer, string or boolean type,
  compared with literals of the same kind (no implicit casts: ``int_col = '5'`` goes to Spark);
  strings compare by their UTF-8 bytes in both;
- tables without column mapping (a column a file lacks reads as NULL, as in Spark), at most
  ``spark.sqlext.delete.localMatchMaxBytes`` (default 32 MB) of candidate files in all (0 turns
  this off).

Rows an earlier deletion vector already deletes are left out, as Spark's scan leaves them out.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from sqlext.errors import DeltaFileNotFoundError
from sqlext.log.actions import AddFile
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.deletion_vectors import DeletionVectorReader
from sqlext.log.file_reader import ROW_INDEX_COLUMN, read_logical
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog

MAX_BYTES_CONF = "spark.sqlext.delete.localMatchMaxBytes"
MAX_BYTES_DEFAULT = 32 * 1024 * 1024

_INTEGER = {"byte", "short", "integer", "long"}
_KINDS = {**{t: "integer" for t in _INTEGER}, "string": "string", "boolean": "boolean"}
_COMPARE = {exp.EQ: pc.equal, exp.NEQ: pc.not_equal, exp.LT: pc.less,
            exp.LTE: pc.less_equal, exp.GT: pc.greater, exp.GTE: pc.greater_equal}
_FLIPPED = {exp.EQ: exp.EQ, exp.NEQ: exp.NEQ, exp.LT: exp.GT, exp.LTE: exp.GTE,
            exp.GT: exp.LT, exp.GTE: exp.LTE}


class _Unsupported(Exception):
    """The condition (or a file) is outside what is evaluated here."""


def local_matching_rows(log: DeltaLog, snapshot: Snapshot, candidates: list[AddFile],
                        predicate: exp.Expression | None, alias: str | None,
                        max_bytes: int) -> dict | None:
    """``{action path: numpy array of row indexes}`` of the live rows of ``candidates`` where
    ``predicate`` is true, computed on the driver; None when the condition, the table or the
    files are outside the supported subset (see the module) or larger than ``max_bytes``."""
    if (predicate is None or max_bytes <= 0 or not candidates
            or sum(f.size or 0 for f in candidates) > max_bytes
            or ColumnMapping.of(snapshot.metadata) is not None):
        return None
    partitions = {c.lower() for c in snapshot.partition_columns}
    fields = json.loads(snapshot.metadata.schema_string).get("fields") or []
    if len({f["name"].lower() for f in fields}) != len(fields):
        return None         # names that differ only in case: leave resolution to Spark
    kinds = {f["name"].lower(): _KINDS[f["type"]] for f in fields
             if isinstance(f["type"], str) and f["type"] in _KINDS
             and f["name"].lower() not in partitions}
    try:
        evaluate = _Evaluator(kinds, alias)
        evaluate.check(predicate)
        hits = {}
        vectors = DeletionVectorReader.of(log)
        for f in candidates:
            rows = _matching(log, snapshot, f, evaluate, predicate, vectors)
            if len(rows):
                hits[f.path] = rows
        return hits
    except (_Unsupported, pa.ArrowException, OSError, DeltaFileNotFoundError):
        # outside the subset, or a file not readable here (Spark's scan then reports it)
        return None


def _matching(log: DeltaLog, snapshot: Snapshot, f: AddFile, evaluate: "_Evaluator", predicate,
              vectors: DeletionVectorReader) -> np.ndarray:
    """The positions in ``f`` of its live rows where ``predicate`` is true (the kernel's reader
    leaves out the rows an earlier deletion vector deletes)."""
    table = read_logical(log.location, f, snapshot.metadata, evaluate.columns,
                         with_row_index=True, version=snapshot.version, table=log.name,
                         deletion_vectors=vectors)
    positions = table.column(ROW_INDEX_COLUMN)
    table = table.drop_columns([ROW_INDEX_COLUMN]).rename_columns(evaluate.columns)
    mask = pc.fill_null(evaluate(predicate, table), False)
    return np.asarray(pc.filter(positions, mask).to_numpy(), dtype=np.int64)


class _Evaluator:
    """Evaluates a supported sqlglot condition over an Arrow table of its columns (lower-case
    names); :meth:`check` first walks it and collects the columns, raising on anything else."""

    def __init__(self, kinds: dict[str, str], alias: str | None):
        self.kinds, self.alias = kinds, alias      # column (lower case) -> its kind
        self.columns: list[str] = []

    def check(self, node: exp.Expression) -> None:
        self._kind(node)

    def _column(self, node: exp.Expression) -> str | None:
        """The lower-case name of a supported column reference, None if not a column."""
        if not isinstance(node, exp.Column):
            return None
        table = node.args.get("table")
        if node.args.get("db") or (table is not None and (
                self.alias is None or table.name.lower() != self.alias.lower())):
            raise _Unsupported("a qualified column")
        name = node.name.lower()
        if name not in self.kinds:
            raise _Unsupported("a column of another type, or a partition column")
        if name not in self.columns:
            self.columns.append(name)
        return name

    def _literal(self, node: exp.Expression):
        """(kind, Python value) of a supported literal, or None if not a literal."""
        negative = isinstance(node, exp.Neg)
        inner = node.this if negative else node
        if isinstance(inner, exp.Boolean) and not negative:
            return "boolean", bool(inner.this)
        if not isinstance(inner, exp.Literal):
            return None
        text = inner.this
        if inner.is_string and not negative:
            if "\\" in text or any(ord(ch) < 32 for ch in text):
                raise _Unsupported("a string literal with escapes")
            return "string", text
        if not inner.is_string and text.isdigit() and len(text) < 19:
            return "integer", -int(text) if negative else int(text)
        raise _Unsupported("a literal of another kind")

    def _operand(self, node: exp.Expression) -> tuple[str, str]:
        """('column', kind) or ('literal', kind) of a comparison's side."""
        name = self._column(node)
        if name is not None:
            return "column", self.kinds[name]
        literal = self._literal(node)
        if literal is None:
            raise _Unsupported(f"{type(node).__name__} in a comparison")
        return "literal", literal[0]

    def _kind(self, node: exp.Expression) -> None:
        """Raise :class:`_Unsupported` unless ``node`` is a supported boolean condition."""
        if isinstance(node, exp.Paren):
            return self._kind(node.this)
        if isinstance(node, (exp.And, exp.Or)):
            self._kind(node.this)
            self._kind(node.expression)
            return None
        if isinstance(node, exp.Not):
            return self._kind(node.this)
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            if self._column(node.this) is None:
                raise _Unsupported("IS NULL of an expression")
            return None
        if type(node) in _COMPARE:
            sides = [self._operand(node.this), self._operand(node.expression)]
            if [s[0] for s in sides].count("column") < 1 or sides[0][1] != sides[1][1]:
                raise _Unsupported("a comparison of two literals or of different kinds")
            return None
        if isinstance(node, exp.Between):
            kinds = {self._operand(n) for n in (node.this, node.args["low"], node.args["high"])}
            if self._column(node.this) is None or len({k for _, k in kinds}) != 1:
                raise _Unsupported("BETWEEN of an expression or of different kinds")
            return None
        if isinstance(node, exp.In) and not node.args.get("query") and node.expressions:
            name = self._column(node.this)
            literals = [self._literal(n) for n in node.expressions]
            if name is None or any(lit is None or lit[0] != self.kinds[name]
                                   for lit in literals):
                raise _Unsupported("IN of an expression or of other kinds")
            return None
        name = self._column(node)
        if name is not None and self.kinds[name] == "boolean":
            return None
        raise _Unsupported(f"{type(node).__name__} in a condition")

    def __call__(self, node: exp.Expression, table: pa.Table):
        if isinstance(node, exp.Paren):
            return self(node.this, table)
        if isinstance(node, exp.And):
            return pc.and_kleene(self(node.this, table), self(node.expression, table))
        if isinstance(node, exp.Or):
            return pc.or_kleene(self(node.this, table), self(node.expression, table))
        if isinstance(node, exp.Not):
            return pc.invert(self(node.this, table))
        if isinstance(node, exp.Is):
            return pc.is_null(table[node.this.name.lower()])
        if type(node) in _COMPARE:
            left, right, op = node.this, node.expression, type(node)
            if self._column(left) is None:
                left, right, op = right, left, _FLIPPED[op]
            return _COMPARE[op](table[left.name.lower()], self._value(right, table))
        if isinstance(node, exp.Between):
            column = table[node.this.name.lower()]
            return pc.and_kleene(pc.greater_equal(column, self._value(node.args["low"], table)),
                                 pc.less_equal(column, self._value(node.args["high"], table)))
        if isinstance(node, exp.In):
            column = table[node.this.name.lower()]
            found = pc.is_in(column, value_set=pa.array(
                [self._literal(n)[1] for n in node.expressions]).cast(column.type))
            # Spark: NULL IN (...) is NULL, not false (it matters under NOT)
            return pc.if_else(pc.is_valid(column), found, pa.scalar(None, pa.bool_()))
        return table[node.name.lower()]

    def _value(self, node: exp.Expression, table: pa.Table):
        name = self._column(node)
        if name is not None:
            return table[name]
        return self._literal(node)[1]
