"""Spark's errors as sqlext's: the same message, without the query plan Spark appends, with the
temporary view names sqlext bound replaced by the references the user wrote, and positions (and
the quoted SQL) in the user's own script rather than in the text sqlext handed Spark."""

from __future__ import annotations

import re

from sqlext.errors import (AnalysisException, IllegalArgumentError, ParseError, Position,
                           SqlextError)

_PLAN_START = re.compile(r"\n(?:'|\+- |== |:- |\[?[A-Z]\w* \[)")
_PARSE_POSITION = re.compile(r"\(line (\d+), pos (\d+)\)")
_POSITION = re.compile(r"(\(line |\bline )(\d+)(,? pos )(\d+)")
_SQL_BLOCK = "\n== SQL =="
_ERROR_CLASS = re.compile(r"\[[A-Z][A-Z_]+(?:\.[A-Z_]+)?\]")
_UNRESOLVED = re.compile(r"\[UNRESOLVED_[A-Z_.]+\][^`]*?name ((?:`(?:[^`]|``)*`\.?)+)")


def spark_exceptions() -> tuple[type[BaseException], ...]:
    """The exception types a Spark call raises for bad statements or failed jobs."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JJavaError)


def translate(error: BaseException, labels: dict[str, str] | None = None,
              texts: list | None = None, statement=None) -> SqlextError:
    """``error`` (raised by Spark) as a :class:`~sqlext.errors.SqlextError` subclass.

    Spark's parse errors become :class:`ParseError` (with ``line`` and ``column``), its analysis
    errors (unknown table or column, type errors) :class:`AnalysisException`, its illegal
    arguments (a value that does not cast, ...) :class:`IllegalArgumentError`, the rest
    :class:`SqlextError`; each keeps Spark's condition, SQLSTATE and message parameters
    (``getCondition()``, ``getSqlState()``, ``getMessageParameters()``), and so is caught by
    the same ``pyspark.errors`` class as Spark's. A sqlext error (sqlext's errors are pyspark's
    classes too) is returned as it is, relabelled. ``labels`` maps bound view names to what
    the user wrote; ``texts`` (:class:`~sqlext.sql.splice.Rendered`) are the SQL texts handed to
    Spark, so that the position Spark reports, and the SQL it quotes, become those of the
    user's script; when Spark's error cannot be tied to one of them, ``statement`` (the
    statement's Rendered text) is placed as :func:`locate` does.
    """
    from pyspark.errors import AnalysisException as SparkAnalysisException
    from pyspark.errors import IllegalArgumentException, ParseException

    from sqlext.engine.pyspark_errors import spark_fields

    if isinstance(error, SqlextError):
        relabel(error, labels or {}, texts, statement)
        return error
    message = _message(error)
    position = None
    rendered = _source_of(message, texts or [])
    if rendered is not None:
        message, position = _in_user_text(message, rendered)
    elif statement is not None:
        message, position = locate(message, texts or [], statement)
    for name, text in (labels or {}).items():
        message = message.replace(name, text)
    fields = {**spark_fields(error), "position": position}
    if isinstance(error, ParseException):
        result = _parse_error(message, fields)
    elif isinstance(error, SparkAnalysisException):
        result = AnalysisException(message, **fields)
    elif isinstance(error, IllegalArgumentException):
        result = IllegalArgumentError(message, **fields)
    else:
        result = SqlextError(message, **fields)
    # placed: relabel (the runner's, for the statement) must not place them again
    result.script_positions = rendered is not None or statement is not None
    return result


def relabel(error: SqlextError, labels: dict[str, str], texts: list | None = None,
            statement=None) -> None:
    """Replace bound view names in a sqlext error's message with what the user wrote, and (with
    ``texts``, see :func:`locate`) put the positions it gives in the user's script and set its
    ``position``, unless :func:`translate` placed them already (``script_positions``)."""
    if error.args and isinstance(error.args[0], str):
        message = error.args[0]
        for name, text in labels.items():
            message = message.replace(name, text)
        if texts is not None and not getattr(error, "script_positions", False):
            message, position = locate(message, texts, statement)
            if error.position is None:
                error.position = position
            error.script_positions = True
        error.args = (message, *error.args[1:])



def locate(message: str, texts: list, statement=None) -> tuple[str, Position | None]:
    """An error about a statement's expressions (a DML or MERGE condition or value Spark
    analysed on its own), with its position in the user's script; and that position (None
    when it gives none).

    Spark gives positions in the expression's text (``line 1 pos 7``); ``texts`` are the
    expressions' :class:`~sqlext.sql.splice.Rendered` texts. The expression is the one the
    message quotes, else the one holding the name Spark could not resolve, else the only one;
    failing all, the position is the statement's (``statement``: its Rendered text). Messages
    that are not Spark's analysis of the user's text (no position, no error class, no quote)
    are returned as they are (with no position)."""
    texts = [t for t in texts if t.script is not None and t.text.strip()]
    quoted = [t for t in texts if repr(t.text) in message or f"'{t.text}'" in message]
    source = max(quoted, key=lambda t: len(t.text)) if quoted else None
    if source is not None and _POSITION.search(message):
        return _in_user_text(message, source)
    if source is None and not (_POSITION.search(message) or _ERROR_CLASS.search(message)):
        return message, None
    spot = (source, 0) if source is not None else _unresolved(message, texts)
    if spot is None:
        spot = (texts[0], 0) if len(texts) == 1 else (statement, 0)
    rendered, at = spot
    offset = rendered.script_offset(at) if rendered is not None else None
    if offset is None:
        return message, None
    position = _position(rendered.script, offset)
    line, pos = position.line, position.column - 1
    first = _POSITION.search(message)
    if first is not None:   # a position in a text we cannot place: the spot's, in Spark's form
        return _POSITION.sub(lambda m: f"{m.group(1)}{line}{m.group(3)}{pos}"
                             if m.start() == first.start() else "", message), position
    head, dot, tail = message.partition(". ")
    return f"{head} (line {line} pos {pos} of the script){dot}{tail}", position


def _position(script: str, offset: int) -> Position:
    """The line and column (both from 1) of ``script[offset]``."""
    return Position(script.count("\n", 0, offset) + 1,
                    offset - (script.rfind("\n", 0, offset) + 1) + 1)


def _unresolved(message: str, texts: list):
    """``(text, offset)`` of the name in ``UNRESOLVED_COLUMN ... `s`.`x``` when exactly one of
    the texts writes it (case-insensitively, without quotes), else None."""
    match = _UNRESOLVED.search(message)
    if match is None:
        return None
    name = ".".join(part.replace("``", "`") for part in re.findall(r"`((?:[^`]|``)*)`",
                                                                    match.group(1))).lower()
    found = [(t, t.text.lower().replace("`", "").find(name)) for t in texts]
    found = [(t, i) for t, i in found if i >= 0 and "`" not in t.text]
    return found[0] if len(found) == 1 else None


def _source_of(message: str, texts: list):
    """Which of the texts Spark's error is about: the one it quotes, or the only one."""
    texts = [t for t in texts if t.script is not None]
    if _SQL_BLOCK in message:
        quoted = message.split(_SQL_BLOCK, 1)[1]
        for rendered in texts:
            if rendered.text.strip() and rendered.text.strip().splitlines()[0] in quoted:
                return rendered
        return None
    return texts[0] if len(texts) == 1 else None


def _in_user_text(message: str, rendered) -> tuple[str, Position | None]:
    """Spark's ``line l, pos p`` in ``rendered.text`` -> the same place in the user's script,
    and its ``== SQL ==`` quote -> the user's lines, the caret under that place; and the first
    such place (None when the message gives none that maps)."""
    script = rendered.script
    where: list[int] = []

    def position(match: re.Match) -> str:
        lines = rendered.text.split("\n")
        line, pos = int(match.group(2)), int(match.group(4))
        if not 0 < line <= len(lines):
            return match.group(0)
        offset = sum(len(x) + 1 for x in lines[: line - 1]) + min(pos, len(lines[line - 1]))
        mapped = rendered.script_offset(offset)
        if offset and offset >= len(rendered.text.rstrip()):    # the end of input: after the
            before = rendered.script_offset(len(rendered.text.rstrip()) - 1)   # last character
            mapped = None if before is None else before + 1 + offset - len(rendered.text.rstrip())
        if mapped is None:
            return match.group(0)
        where.append(mapped)
        user = _position(script, mapped)
        return f"{match.group(1)}{user.line}{match.group(3)}{user.column - 1}"

    head, sep, _ = message.partition(_SQL_BLOCK)
    head = _POSITION.sub(position, head)
    placed = _position(script, where[0]) if where else None
    if not sep:
        return head, placed
    start = rendered.script_offset(0)
    end = rendered.script_offset(max(len(rendered.text.rstrip()) - 1, 0))
    if start is None or end is None:
        return head + sep + _, placed
    first = script.rfind("\n", 0, start) + 1
    last = script.find("\n", end)
    lines = script[first: len(script) if last < 0 else last].split("\n")
    if where:
        at = script.count("\n", 0, where[0]) - script.count("\n", 0, first)
        column = where[0] - (script.rfind("\n", 0, where[0]) + 1)
        lines.insert(at + 1, "-" * column + "^^^")
    return head + sep + "\n" + "\n".join(lines), placed


def _message(error: BaseException) -> str:
    text = str(error)
    if hasattr(error, "java_exception"):   # Py4JJavaError: the Java exception's own message
        try:
            text = str(error.java_exception.getMessage()) or text
        except Exception:  # noqa: BLE001
            pass
    if "== SQL ==" in text:
        return text.strip()
    match = _PLAN_START.search(text)
    return (text[: match.start()] if match else text).strip()


def _parse_error(message: str, fields: dict) -> ParseError:
    """Spark's parse error as it reads (``... SQLSTATE: 42601 (line 4, pos 23)`` and the quoted
    lines), with ``position`` and ``token`` as sqlext's own parse errors have them. Without a
    position placed in the user's script, the position is the one Spark's message gives (in the
    text Spark was handed)."""
    if fields.get("position") is None:
        match = _PARSE_POSITION.search(message)
        if match:
            fields = {**fields, "position": Position(int(match.group(1)), int(match.group(2)) + 1)}
    err = ParseError(message, **fields)
    near = fields.get("message_parameters", {}).get("error", "")
    err.token = near[1:-1] if len(near) >= 2 and near[0] == near[-1] == "'" else near or None
    return err


def syntax_checker(spark):
    """A :data:`~sqlext.sql.parse.SyntaxCheck` asking ``spark``'s own SQL parser about a
    statement sqlglot could not read: Spark's ``ParseException`` for it as a :class:`ParseError`
    placed in the user's script (as :func:`translate` places it), or None when Spark parses it.

    Only the parser runs: on a classic session through the JVM's ``sqlParser().parsePlan`` (a
    py4j round trip, about a millisecond; nothing is analysed or run); on Spark Connect, which has
    no parser call, as ``EXPLAIN <statement>``, which the server parses and plans but never
    runs. Asked only when a statement already failed to parse."""
    from pyspark.errors import ParseException

    from sqlext.engine.session import is_connect
    from sqlext.sql.splice import Rendered

    def check(script: str, start: int, sql: str) -> ParseError | None:
        prefix = "EXPLAIN " if is_connect(spark) else ""
        text = prefix + sql
        pieces = [(0, start), (len(prefix), start)] if prefix else [(0, start)]
        rendered = Rendered(text, script, pieces, [(len(prefix), len(sql))])
        try:
            if prefix:
                spark.sql(text)
            else:
                spark._jsparkSession.sessionState().sqlParser().parsePlan(text)  # noqa: SLF001
        except ParseException as exc:
            err = translate(exc, None, [rendered])
            if isinstance(err, ParseError):
                err.statement = sql
                return err
        except Exception:  # noqa: BLE001 - not a syntax error (Spark parsed it), or no answer
            return None
        return None

    return check
