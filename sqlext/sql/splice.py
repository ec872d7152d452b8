"""SQL for Spark made of the user's own text, with sqlext's replacements spliced in.

sqlext rewrites parts of a statement (a sqlext table reference becomes a temporary view, a view
reference becomes its query, ``db.t.col`` loses ``db.``). Rendering the whole rewritten tree with
sqlglot would hand Spark sqlglot's reading of everything else (``'o''neil'`` came back as
``CONCAT('o', 'neil')``), so instead each part Spark gets is the text the user wrote, with only
the rewritten regions replaced:

- the parser (:mod:`sqlext.sql.parse`) records on every node it builds the region of the script
  it was read from (``meta["span"]``: the script, start, end);
- a rewrite records ``meta["splices"]`` on a node: ``(start, end, text)`` regions of the script
  replaced by ``text`` (only names and sqlext's own view names, never values);
- :func:`render` copies a node's region, applying the splices of the nodes inside it. A node sqlext
  built itself (no region) is rendered by sqlglot, its parsed children again from their text.

The result is checked: the text must parse back to the rewritten tree, else the tree's own
rendering is used (and :data:`fallbacks` counts it, so tests can prove it never happens).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import SqlglotError

SPAN = "span"          # (script, start, end): where the node was read from (end exclusive)
SPLICES = "splices"    # [(start, end, text)]: regions of the script this node's rewrite replaces
FOREIGN = "foreign"    # the node's children come from another text: do not look inside
SQL_OFFSET = "sql_offset"   # a statement's: where its ``meta["sql"]`` starts in the script

fallbacks = 0          # renders whose spliced text did not parse back to the tree


def span(node: exp.Expression) -> tuple[str, int, int] | None:
    """The script a node was parsed from and its region in it, or None (built by sqlext)."""
    return node.meta.get(SPAN) if node._meta else None   # noqa: SLF001 - avoid creating meta


def region(node: exp.Expression) -> tuple[int, int] | None:
    """``(start, end)`` of the node's text in its script."""
    found = span(node)
    if found is not None:
        return found[1], found[2]
    if node._meta and "start" in node.meta:   # noqa: SLF001 - identifiers: sqlglot's own positions
        return node.meta["start"], node.meta["end"] + 1
    return None


def original(node: exp.Expression) -> str | None:
    """The text the user wrote for a node (None when it has no recorded region)."""
    found = span(node)
    if found is None:
        return None
    script, start, end = found
    return script[start:end]


def splice(node: exp.Expression, start: int, end: int, text: str) -> None:
    """Record that the script's ``[start, end)``, inside ``node``'s region, becomes ``text``."""
    node.meta.setdefault(SPLICES, []).append((start, end, text))


def adopt(new: exp.Expression, old: exp.Expression, text: str) -> None:
    """``new`` replaces ``old`` in the tree; in the text, ``old``'s region becomes ``text``."""
    found = span(old)
    if found is not None:
        new.meta[SPAN] = found
        new.meta[SPLICES] = [(found[1], found[2], text)]
        new.meta[FOREIGN] = True


@dataclass
class Rendered:
    """SQL text and, where it was copied from the user's script, where each part came from."""

    text: str
    script: str | None = None
    # (offset in text, offset in script): a piece starting at the first maps to the second
    pieces: list[tuple[int, int]] = field(default_factory=list)
    copied: list[tuple[int, int]] = field(default_factory=list)   # (text start, length) copied

    def script_offset(self, offset: int) -> int | None:
        """The offset in the script of ``text[offset]`` (a spliced-in name maps to the start of
        what it replaced), or None if this text was not made from a script."""
        if self.script is None or not self.pieces:
            return None
        i = bisect.bisect_right([p[0] for p in self.pieces], offset) - 1
        if i < 0:
            return self.pieces[0][1]
        text_at, script_at = self.pieces[i]
        inside = any(s <= offset < s + n for s, n in self.copied)
        return script_at + (offset - text_at if inside else 0)


class _Builder:
    def __init__(self, script: str):
        self.script, self.parts, self.size = script, [], 0
        self.pieces: list[tuple[int, int]] = []
        self.copied: list[tuple[int, int]] = []

    def copy(self, start: int, end: int) -> None:
        if end > start:
            self.pieces.append((self.size, start))
            self.copied.append((self.size, end - start))
            self._add(self.script[start:end])

    def insert(self, text: str, at: int) -> None:
        if text:
            self.pieces.append((self.size, at))
            self._add(text)

    def _add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)


def _edits(node: exp.Expression, script: str, skip: exp.Expression | None) -> list | None:
    """The splices of ``node`` and of everything inside it (None: a rewritten child has no text)."""
    edits = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current is skip:
            continue
        if current._meta and current.meta.get(SPLICES):   # noqa: SLF001
            found = span(current)
            if found is None or found[0] is not script:
                return None
            edits.extend(current.meta[SPLICES])
            if current.meta.get(FOREIGN):
                continue
        stack.extend(current.iter_expressions())
    return sorted(edits, key=lambda e: (e[0], e[1]))


def _spliced(node: exp.Expression) -> Rendered | None:
    """The node's own text with the splices inside it applied; None if it cannot be made."""
    found = span(node)
    if found is None:
        return None
    script, start, end = found
    prefix = None
    with_ = node.args.get("with_")
    if with_ is not None and span(with_) is not None and span(with_)[2] <= start:
        prefix = _spliced(with_)   # WITH ... moved onto a query written after it
        if prefix is None:
            return None
    edits = _edits(node, script, with_ if prefix is not None else None)
    if edits is None:
        return None
    out = _Builder(script)
    if prefix is not None:
        out.pieces = list(prefix.pieces)
        out.copied = list(prefix.copied)
        out._add(prefix.text + "\n")   # noqa: SLF001
    pos = start
    for e_start, e_end, text in edits:
        if e_start < pos or e_end > end:
            return None
        out.copy(pos, e_start)
        out.insert(text, e_start)
        pos = e_end
    out.copy(pos, end)
    return Rendered("".join(out.parts), script, out.pieces, out.copied)


def statement(stmt: exp.Expression) -> Rendered:
    """A whole statement exactly as the user wrote it (comments included), to run as is."""
    found, offset = span(stmt), stmt.meta.get(SQL_OFFSET)
    text = stmt.meta.get("sql") or stmt.sql(dialect="spark")
    if found is None or offset is None:
        return Rendered(text)
    return Rendered(text, found[0], [(0, offset)], [(0, len(text))])


class _Generator(Spark.Generator):
    """sqlglot's Spark SQL for nodes sqlext built, with every parsed node inside in its own text."""

    def sql(self, expression, key=None, comment=True):
        if isinstance(expression, exp.Expression) and key is None:
            own = _spliced(expression)
            if own is not None:
                return own.text
        return super().sql(expression, key, comment)


def render(node: exp.Expression, check: bool = True) -> Rendered:
    """The SQL Spark gets for ``node`` (see the module docstring)."""
    global fallbacks
    result = _spliced(node)
    if result is None:
        result = Rendered(_Generator(dialect=Spark()).generate(node))
    if check and not _same(result.text, node):
        fallbacks += 1
        return Rendered(node.sql(dialect="spark"))
    return result


def _same(text: str, node: exp.Expression) -> bool:
    import sqlglot

    from sqlext.sql.dialect import Sqlext

    try:
        parsed = sqlglot.parse_one(text, read=Sqlext)
    except SqlglotError:
        return False
    return parsed == node
