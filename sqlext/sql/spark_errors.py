"""Spark's errors as sqlext's: the same message, without the query plan Spark appends, with the
temporary view names sqlext bound replaced by the references the user wrote."""

from __future__ import annotations

import re

from sqlext.errors import AnalysisException, ParseError, SqlextError

_PLAN_START = re.compile(r"\n(?:'|\+- |== |:- |\[?[A-Z]\w* \[)")
_PARSE_POSITION = re.compile(r"\(line (\d+), pos (\d+)\)")


def spark_exceptions() -> tuple[type[BaseException], ...]:
    """The exception types a Spark call raises for bad statements or failed jobs."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JJavaError)


def translate(error: BaseException, labels: dict[str, str] | None = None) -> SqlextError:
    """``error`` (raised by Spark) as a :class:`~sqlext.errors.SqlextError` subclass.

    Spark's parse errors become :class:`ParseError` (with ``line`` and ``column``), its analysis
    errors (unknown table or column, type errors) :class:`AnalysisException`, the rest
    :class:`SqlextError`. ``labels`` maps bound view names to what the user wrote.
    """
    from pyspark.errors import AnalysisException as SparkAnalysisException
    from pyspark.errors import ParseException

    message = _message(error)
    for name, text in (labels or {}).items():
        message = message.replace(name, text)
    if isinstance(error, ParseException):
        return _parse_error(message)
    if isinstance(error, SparkAnalysisException):
        return AnalysisException(message)
    return SqlextError(message)


def relabel(error: SqlextError, labels: dict[str, str]) -> None:
    """Replace bound view names in a sqlext error's message with what the user wrote."""
    if labels and error.args and isinstance(error.args[0], str):
        message = error.args[0]
        for name, text in labels.items():
            message = message.replace(name, text)
        error.args = (message, *error.args[1:])


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


def _parse_error(message: str) -> ParseError:
    err = ParseError(message)
    match = _PARSE_POSITION.search(message)
    err.line = int(match.group(1)) if match else None
    err.column = int(match.group(2)) + 1 if match else None
    if match:
        err.args = (f"{message.splitlines()[0]} at line {err.line}, column {err.column}"
                    + message[len(message.splitlines()[0]):],)
    return err
