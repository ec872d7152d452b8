"""Query bindings rendered into the SQL text as literals, by sqlglot.

dbt passes seed rows (and other parameterised statements) as ``sql`` with ``?`` or ``%s``
placeholders plus a list of values. Spark SQL has no parameters on this path, so each placeholder
token is replaced by the value's SQL literal: ``None`` is ``NULL`` (not the text ``'None'``),
strings keep quotes, backslashes and newlines exactly, decimals keep every digit. Placeholders
inside strings, quoted identifiers and comments are left alone because only tokens are replaced.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Sequence
from typing import Any

from sqlglot import exp
from sqlglot.tokens import TokenType

from sqlext.sql.dialect import Sqlext

_DIALECT = Sqlext()


def literal(value: Any) -> str:
    """The Spark SQL literal for one binding value."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            kind = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
            return f"CAST('{kind}' AS DOUBLE)"
        return f"CAST({value!r} AS DOUBLE)"
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return literal(float(value))
        return format(value, "f")
    if isinstance(value, dt.datetime):
        return _string(value.isoformat(sep=" "))
    if isinstance(value, (dt.date, dt.time)):
        return _string(value.isoformat())
    if isinstance(value, dt.timedelta):
        return f"INTERVAL '{value.total_seconds()}' SECOND"
    if isinstance(value, (bytes, bytearray)):
        return f"X'{bytes(value).hex()}'"
    return _string(str(value))


def _string(text: str) -> str:
    return exp.Literal.string(text).sql(dialect=_DIALECT)


def render(sql: str, bindings: Sequence[Any] | None) -> str:
    """``sql`` with its ``?`` / ``%s`` placeholders replaced, in order, by ``bindings``.

    Raises ValueError when the number of placeholders and of values differ.
    """
    if bindings is None:
        return sql
    tokens = _DIALECT.tokenize(sql)
    spans = []
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.PLACEHOLDER and token.text == "?":
            spans.append((token.start, token.end + 1))
        elif (token.token_type == TokenType.MOD and i + 1 < len(tokens)
              and tokens[i + 1].text == "s" and tokens[i + 1].start == token.end + 1):
            spans.append((token.start, tokens[i + 1].end + 1))
    if len(spans) != len(bindings):
        raise ValueError(f"the statement has {len(spans)} placeholders but {len(bindings)} "
                         "values were bound")
    out, pos = [], 0
    for (start, end), value in zip(spans, bindings):
        out += [sql[pos:start], literal(value)]
        pos = end
    out.append(sql[pos:])
    return "".join(out)
