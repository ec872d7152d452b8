"""Split a SQL script into statements and parse each with the ``sqlext`` dialect.

Every statement returned carries its original text in ``stmt.meta["sql"]`` (without the
separating ``;``, surrounding whitespace stripped, comments kept), which is what goes to
``spark.sql`` when a statement is passed through.
"""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Callable, Iterator

from sqlglot import exp
from sqlglot.errors import ErrorLevel, TokenError
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.tokens import Token, TokenType

from sqlext.errors import ParseError, Position
from sqlext.sql import splice
from sqlext.sql.dialect import Sqlext

# A syntax error in a statement of a form sqlext implements raises ParseError; any other statement
# sqlglot cannot parse is passed through to Spark as a Command (see _is_owned).
_OWNED_FIRST_WORDS = {
    "SELECT", "WITH", "FROM", "VALUES", "(", "INSERT", "UPDATE", "DELETE", "MERGE",
    "VACUUM", "OPTIMIZE", "RESTORE", "CONVERT", "REORG",
}  # fmt: skip
_OWNED_SECOND_WORDS = {
    "DESCRIBE": {"HISTORY", "DETAIL"},
    "DESC": {"HISTORY", "DETAIL"},
    "SHOW": {"TABLES", "TBLPROPERTIES", "CREATE"},
}
_DDL_OBJECTS = {"TABLE", "SCHEMA", "DATABASE", "VIEW"}
_ALTER_TABLE_ACTIONS = {
    ("ADD", "COLUMNS"),
    ("ADD", "COLUMN"),
    ("SET", "TBLPROPERTIES"),
    ("RENAME", "TO"),
}

_MISSING_DELIMITER = re.compile(r"Missing (.+) from \d+:(\d+)$")
_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: .*?>")
_CLASS_REPR = re.compile(r"<class 'sqlglot\.[\w.]*?(\w+)'>")


#: ``syntax_error(script, start, sql)``: Spark's own error for the statement ``sql`` (which starts
#: at ``script[start]``), or None when Spark's parser reads it (see :func:`parse_statements`)
SyntaxCheck = Callable[[str, int, str], "ParseError | None"]


def parse_statements(text: str, syntax_error: SyntaxCheck | None = None) -> list[exp.Expression]:
    """Parse a script of ``;``-separated statements into one tree per statement.

    ``;`` inside strings, quoted identifiers and comments does not separate statements; empty
    statements and a trailing ``;`` are ignored. Each tree has the statement's text in
    ``meta["sql"]``.

    A statement that is not one of the forms sqlext implements and that sqlglot cannot parse
    (``DESCRIBE QUERY ...``, ``ALTER TABLE t PARTITION (...) RENAME TO ...``) comes back as an
    ``exp.Command`` (``this`` its first word, upper-cased; ``expression`` a string literal of
    the original text after it), and so does any statement sqlglot itself reads as a Command
    (``SHOW DATABASES``, ``MSCK REPAIR TABLE t``). The forms sqlext implements are queries and
    DML (statements starting with SELECT, WITH, FROM, VALUES, ``(``, INSERT except INSERT
    OVERWRITE DIRECTORY, UPDATE, DELETE, MERGE), VACUUM, OPTIMIZE, RESTORE, DESCRIBE
    HISTORY|DETAIL, SHOW TABLES|TBLPROPERTIES|CREATE TABLE, CREATE / DROP of a table, schema,
    database or view, and ALTER TABLE ... ADD COLUMN(S) | SET TBLPROPERTIES | RENAME TO.

    With ``syntax_error`` (the SQL front passes
    :func:`sqlext.sql.spark_errors.syntax_checker`'s), a statement sqlglot cannot read is handed
    to Spark's own parser first, and the error raised is Spark's (``[PARSE_SYNTAX_ERROR] Syntax
    error at or near '='. SQLSTATE: 42601 (line 1, pos 30)``, the position that of the
    offending token in ``text``, and the statement's lines quoted); sqlglot's is raised only
    when Spark's parser reads the statement.

    Raises:
        sqlext.errors.ParseError: a statement sqlext owns has a syntax error, or the text cannot
            be tokenized (an unterminated string, identifier or comment). The message names the
            line and column and quotes the offending token; the error also has the attributes
            ``line``, ``column`` (1-based), ``token`` (its text) and ``statement`` (the
            statement's text, or ``None`` for tokenizing errors).
    """
    dialect = Sqlext()
    try:
        tokens = dialect.tokenize(text)
    except TokenError as e:
        ours = _tokenize_error(text, e)
        raise _sparks(syntax_error, text, _statement_start(dialect, text, ours), ours) from None

    statements = []
    for chunk, start, end in _split(tokens, len(text)):
        sql = text[start:end].strip()
        offset = start + len(text[start:end]) - len(text[start:end].lstrip())
        try:
            stmt = _parse_one(dialect, chunk, text, sql, end)
        except ParseError as ours:
            raise _sparks(syntax_error, text, offset, ours, sql) from None
        stmt.meta["sql"] = sql
        stmt.meta[splice.SQL_OFFSET] = offset
        statements.append(stmt)
    return statements


def _sparks(syntax_error: SyntaxCheck | None, text: str, start: int, ours: ParseError,
            sql: str | None = None) -> ParseError:
    """Spark's error for the statement at ``text[start]`` (``sql``, default: the rest of the
    text), when ``syntax_error`` is given and Spark's parser refuses it too; else ``ours``."""
    if syntax_error is None:
        return ours
    sql = text[start:].rstrip() if sql is None else sql
    theirs = syntax_error(text, start, sql) if sql else None
    return ours if theirs is None else theirs


def _statement_start(dialect: Sqlext, text: str, error: ParseError) -> int:
    """Where the statement holding a tokenizing error starts: after the last ``;`` before it."""
    lines = text.split("\n")
    offset = sum(len(x) + 1 for x in lines[: error.line - 1]) + error.column - 1
    try:
        tokens = dialect.tokenize(text[:offset])
    except TokenError:
        return 0
    ends = [t.end + 1 for t in tokens if t.token_type == TokenType.SEMICOLON]
    start = ends[-1] if ends else 0
    return start + len(text[start:]) - len(text[start:].lstrip())


def _split(tokens: list[Token], size: int) -> Iterator[tuple[list[Token], int, int]]:
    """Yield ``(tokens, start, end)`` per statement; ``text[start:end]`` is its text."""
    chunk: list[Token] = []
    start = 0
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            if chunk:
                yield chunk, start, token.start
            chunk, start = [], token.end + 1
        else:
            chunk.append(token)
    if chunk:
        yield chunk, start, size


def _spanned(method):
    """``method``, recording on the node it returns the region of the script it read."""

    @functools.wraps(method)
    def parse(self, *args, **kwargs):
        start = self._index
        result = method(self, *args, **kwargs)
        if isinstance(result, exp.Expression) and self._index > start:
            begin, end = self._tokens[start].start, self._tokens[self._index - 1].end + 1
            found = result.meta.get(splice.SPAN)
            if found is not None:   # a node the callee built and this method extended
                begin, end = min(begin, found[1]), max(end, found[2])
            result.meta[splice.SPAN] = (self.sql, begin, end)
        return result

    return parse


class _SpanParser(Sqlext.Parser):
    """The sqlext parser, each node knowing where in the script it was written (see
    :mod:`sqlext.sql.splice`)."""


for _name, _method in list(vars(Sqlext.Parser).items()) + [
        (n, m) for c in Sqlext.Parser.__mro__[1:] for n, m in vars(c).items()]:
    if _name.startswith("_parse") and isinstance(_method, types.FunctionType) \
            and _name not in vars(_SpanParser):
        setattr(_SpanParser, _name, _spanned(_method))


def _parse_one(
    dialect: Sqlext, chunk: list[Token], text: str, sql: str, end: int
) -> exp.Expression:
    if _is_owned(chunk):
        empty = _empty_list_item(chunk)
        if empty is not None:
            raise _empty_item_error(text, sql, *empty)
    parser = _SpanParser(error_level=ErrorLevel.IMMEDIATE, dialect=dialect)
    try:
        stmt = parser.parse(chunk, text)[0]
    except SqlglotParseError as e:
        if not _is_owned(chunk):
            return _passthrough(chunk[0], text[chunk[0].end + 1 : end], text, chunk[-1])
        raise _syntax_error(text, sql, getattr(parser, "error_token", None), e) from None
    if isinstance(stmt, exp.Command):
        return _passthrough(chunk[0], text[chunk[0].end + 1 : end], text, chunk[-1])
    return stmt


def _is_owned(chunk: list[Token]) -> bool:
    """Whether the statement is one of the forms sqlext parses (so a failure is a syntax error)."""
    quoted = (TokenType.STRING, TokenType.IDENTIFIER)
    words = ["" if tok.token_type in quoted else tok.text.upper() for tok in chunk]
    first, rest = words[0], words[1:]
    if first in _OWNED_FIRST_WORDS:
        return not (first == "INSERT" and "DIRECTORY" in rest[:3])
    if first in _OWNED_SECOND_WORDS:
        return bool(rest) and rest[0] in _OWNED_SECOND_WORDS[first]
    if first in ("CREATE", "DROP"):
        return bool(_DDL_OBJECTS.intersection(rest[:5]))
    if first == "ALTER" and rest[:1] == ["TABLE"]:
        i = 2  # the table name: words[2], then ". part" pairs
        while i + 1 < len(words) and words[i + 1] == ".":
            i += 2
        return tuple(words[i + 1 : i + 3]) in _ALTER_TABLE_ACTIONS
    return False


# what may not follow a ``,`` (an empty list item: ``a,, b``, ``(a, b,)``), and what may not
# precede one (``(, a)``); sqlglot's parser skips empty items, Spark's grammar has none
_NOT_AFTER_COMMA = {TokenType.COMMA, TokenType.R_PAREN, TokenType.R_BRACKET}
_NOT_BEFORE_COMMA = {TokenType.L_PAREN, TokenType.L_BRACKET}
# in an UPDATE or MERGE, clause words that end a SET or INSERT list (``SET a = 1, WHERE ...``)
_CLAUSE_WORDS = {"UPDATE": {"WHERE"}, "MERGE": {"WHEN", "THEN", "VALUES"}}


def _empty_list_item(chunk: list[Token]) -> tuple[Token, bool] | None:
    """Where a comma-separated list has an empty item: the token after it, and whether that
    is the statement's end (a trailing ``,``: the token is the ``,`` itself); None if none."""
    words = _CLAUSE_WORDS.get(chunk[0].text.upper(), set())
    for previous, token in zip(chunk, [*chunk[1:], None]):
        if previous.token_type == TokenType.COMMA:
            if token is None:
                return previous, True
            if token.token_type in _NOT_AFTER_COMMA or (
                    token.token_type not in (TokenType.STRING, TokenType.IDENTIFIER)
                    and token.text.upper() in words):
                return token, False
        elif previous.token_type in _NOT_BEFORE_COMMA and token is not None \
                and token.token_type == TokenType.COMMA:
            return token, False
    return None


def _empty_item_error(text: str, sql: str, token: Token, at_end: bool) -> ParseError:
    """Spark's PARSE_SYNTAX_ERROR for an empty list item, at ``token`` or the statement's end."""
    near = "end of input" if at_end else text[token.start: token.end + 1]
    line, column = _line_col(text, token.end + 1 if at_end else token.start)
    what = "end of input" if at_end else f"'{near}'"   # Spark's wording
    return _error(text, f"[PARSE_SYNTAX_ERROR] Syntax error at or near {what} (an empty item "
                        f"in a comma-separated list)", line, column, near, sql)


def _passthrough(first: Token, rest: str, text: str, last: Token) -> exp.Command:
    """A Command of the statement's first word and the original text after it (its span: the
    statement's text, which is what Spark runs)."""
    command = exp.Command(this=first.text.upper(), expression=exp.Literal.string(rest.strip()))
    command.meta[splice.SPAN] = (text, first.start, last.end + 1)
    return command


def _syntax_error(text: str, sql: str, token: Token | None, error: SqlglotParseError) -> ParseError:
    info = error.errors[0] if error.errors else {}
    description = _TOKEN_REPR.sub(_describe_token, info.get("description") or str(error))
    description = _CLASS_REPR.sub(r"\1", description)
    if token is None or not token.text:  # no token recorded: use sqlglot's position
        line, column, near = info.get("line") or 1, info.get("col") or 1, info.get("highlight")
        return _error(text, description, line, column, near or "", statement=sql)
    line, column = _line_col(text, token.start)
    return _error(text, description, line, column, text[token.start : token.end + 1], sql)


def _describe_token(match: re.Match) -> str:
    return "the end of the statement" if match.group(1) == "SENTINEL" else f"'{match.group(2)}'"


def _tokenize_error(text: str, error: TokenError) -> ParseError:
    match = _MISSING_DELIMITER.search(str(error.__cause__ or ""))
    if match:
        what = {"'": "string", '"': "string", "`": "quoted identifier"}.get(
            match.group(1), "literal"
        )
        offset = int(match.group(2))
        description = f"Unterminated {what}"
    elif text.rfind("/*") > text.rfind("*/"):
        offset, description = text.rfind("/*"), "Unterminated comment"
    else:
        offset, description = max(len(text.rstrip()) - 1, 0), "Cannot tokenize SQL"
    line, column = _line_col(text, offset)
    return _error(text, description, line, column, text[offset:], statement=None)


def _error(
    text: str, description: str, line: int, column: int, near: str, statement: str | None
) -> ParseError:
    near = near.splitlines()[0][:40] if near.strip() else near
    source = text.splitlines()[line - 1] if 0 < line <= len(text.splitlines()) else ""
    caret = " " * (column - 1) + "^" * max(1, min(len(near), len(source) - column + 1))
    message = f"{description} at line {line}, column {column} near '{near}':\n  {source}\n  {caret}"
    err = ParseError(message, position=Position(line, column))
    err.token, err.statement = near, statement
    return err


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
