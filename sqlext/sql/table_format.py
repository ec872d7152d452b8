"""Query results as aligned text tables, for the shell."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from decimal import Decimal

from pyspark.sql import Row


def cell(value) -> str:
    """How the shell shows one value (Spark SQL's literal style: NULL, true, [a, b], {k -> v})."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Row):
        return "{" + ", ".join(f"{k}: {cell(v)}" for k, v in value.asDict().items()) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{cell(k)} -> {cell(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(cell(v) for v in value) + "]"
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (bytes, bytearray)):
        return "X'" + bytes(value).hex().upper() + "'"
    return str(value)


def _numeric(value) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def render(columns: Sequence[str], rows: Sequence[Sequence]) -> str:
    """An aligned table with a header; numbers right-aligned, everything else left-aligned."""
    texts = [[cell(v) for v in row] for row in rows]
    widths = [len(c) for c in columns]
    for row in texts:
        widths = [max(w, len(t)) for w, t in zip(widths, row)]
    right = [bool(rows) and all(_numeric(r[i]) or r[i] is None for r in rows)
             for i in range(len(columns))]
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(values, align_right):
        parts = [f" {v.rjust(w) if r else v.ljust(w)} "
                 for v, w, r in zip(values, widths, align_right)]
        return "|" + "|".join(parts) + "|"

    out = [border, line(list(columns), [False] * len(columns)), border]
    out += [line(row, right) for row in texts]
    out.append(border)
    return "\n".join(out)
