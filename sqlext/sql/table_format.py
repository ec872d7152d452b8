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


ELLIPSIS = "..."
_MIN_WIDTH = 8          # a column is never cut narrower than this


def _fitted(widths: list[int], limit: int | None) -> list[int]:
    """Column widths whose table (borders and padding included) fits ``limit`` characters,
    narrowing the widest columns first (none below ``_MIN_WIDTH``)."""
    if limit is None:
        return widths
    widths = list(widths)
    while sum(widths) + 3 * len(widths) + 1 > limit:
        widest = max(range(len(widths)), key=lambda i: widths[i])
        if widths[widest] <= _MIN_WIDTH:
            break
        widths[widest] -= 1
    return widths


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - len(ELLIPSIS)] + ELLIPSIS


def render(columns: Sequence[str], rows: Sequence[Sequence], width: int | None = None) -> str:
    """An aligned table with a header; numbers right-aligned, everything else left-aligned.
    With ``width``, the widest columns are narrowed (values cut, ending in ``...``) until the
    table fits."""
    texts = [[cell(v) for v in row] for row in rows]
    widths = [len(c) for c in columns]
    for row in texts:
        widths = [max(w, len(t)) for w, t in zip(widths, row)]
    widths = _fitted(widths, width)
    right = [bool(rows) and all(_numeric(r[i]) or r[i] is None for r in rows)
             for i in range(len(columns))]
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(values, align_right):
        parts = [f" {_cut(v, w).rjust(w) if r else _cut(v, w).ljust(w)} "
                 for v, w, r in zip(values, widths, align_right)]
        return "|" + "|".join(parts) + "|"

    out = [border, line(list(columns), [False] * len(columns)), border]
    out += [line(row, right) for row in texts]
    out.append(border)
    return "\n".join(out)


def render_vertical(columns: Sequence[str], rows: Sequence[Sequence]) -> str:
    """One block per row, one line per column (psql's expanded display, ``\\x``); values are
    never cut."""
    name_width = max((len(c) for c in columns), default=0)
    out = []
    for number, row in enumerate(rows, 1):
        out.append(f"-[ RECORD {number} ]" + "-" * max(0, name_width - 6))
        out += [f"{c.ljust(name_width)} | {cell(v)}" for c, v in zip(columns, row)]
    return "\n".join(out) if out else "(0 rows)"
