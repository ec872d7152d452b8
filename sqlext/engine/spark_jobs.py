"""Failed Spark jobs as sqlext errors: a command's data work runs in Spark, and what Spark raises
(``Py4JJavaError``, ``PySparkException``) is turned into a :class:`~sqlext.errors.SqlextError`
naming the table, the version and what to do. Nothing is committed when one is raised.
"""

from __future__ import annotations

import contextlib

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

from sqlext.engine.conditions import RUNTIME_ERROR_MARK
from sqlext.engine.constraints import CONSTRAINT_MARK
from sqlext.engine.generated import GENERATED_MARK, IDENTITY_OVERFLOW_MARK
from sqlext.errors import (ConstraintViolationError, GeneratedColumnMismatchError,
                           IdentityColumnError, InvariantViolationError, SqlextError)

_DISK_FULL = ("No space left on device", "ENOSPC", "Disk quota exceeded")


def _first_line(text: str, exc: BaseException) -> str:
    return next((line for line in text.strip().splitlines() if line.strip()), repr(exc)).strip()


def _marked(text: str, start: int, mark: str) -> str:
    message = text[start + len(mark):].strip().splitlines()[0]
    return message.split(" SQLSTATE:")[0].rstrip(". ")


def spark_error(exc: BaseException, table: str, version: int | None, operation: str) -> SqlextError:
    """The sqlext error for a failed Spark job of ``operation`` on ``table`` at ``version``
    (None: the table does not exist yet): :class:`GeneratedColumnMismatchError` for a row whose
    generated column is not its expression's value, :class:`IdentityColumnError` for identity
    values out of range, :class:`ConstraintViolationError` for a row breaking a table constraint, :class:`InvariantViolationError` for sqlext's other row checks,
    :class:`SqlextError` for anything else, saying so when the disk is full."""
    text = str(exc)
    at = f"table {table}, version {version}" if version is not None else \
        f"table {table} (not created yet)"
    start = text.find(GENERATED_MARK)
    if start >= 0:
        message = _marked(text, start, GENERATED_MARK)
        return GeneratedColumnMismatchError(
            f"{at}: {operation}: {message}. Nothing was committed; the table is unchanged. Leave "
            "the generated column out (it is computed), or give the expression's value")
    start = text.find(IDENTITY_OVERFLOW_MARK)
    if start >= 0:
        message = _marked(text, start, IDENTITY_OVERFLOW_MARK)
        return IdentityColumnError(f"{at}: {operation}: {message}. Nothing was committed; the "
                                   "table is unchanged.")
    start = text.find(CONSTRAINT_MARK)
    if start >= 0:
        message = text[start + len(CONSTRAINT_MARK):].strip().splitlines()[0]
        message = message.split(" SQLSTATE:")[0].rstrip(". ")
        return ConstraintViolationError(
            f"{at}: {operation}: {message}. Nothing was committed; the table is unchanged. Fix "
            "or filter the rows, or drop the constraint (ALTER TABLE ... DROP CONSTRAINT / ALTER "
            "COLUMN ... DROP NOT NULL)")
    start = text.find(RUNTIME_ERROR_MARK)
    if start >= 0:
        message = text[start + len(RUNTIME_ERROR_MARK):].strip().splitlines()[0]
        message = message.split(" SQLSTATE:")[0].rstrip(". ")
        return InvariantViolationError(f"{message}. Nothing was committed; the table is "
                                       "unchanged.")
    if any(mark in text for mark in _DISK_FULL):
        return SqlextError(f"{at}: {operation} failed: the file system ran out of space while "
                           "Spark wrote the data files (No space left on device). Nothing was "
                           "committed; the table is unchanged. Free space (VACUUM removes files "
                           "no version needs) and run it again.")
    return SqlextError(f"{at}: {operation} failed while Spark evaluated it: "
                       f"{_first_line(text, exc)[:500]}. Nothing was committed; the table is "
                       "unchanged.")


@contextlib.contextmanager
def spark_job_errors(table: str, version: int | None, operation: str):
    """Raise what :func:`spark_error` makes of a failed Spark job in the block."""
    try:
        yield
    except (PySparkException, Py4JJavaError) as exc:
        raise spark_error(exc, table, version, operation) from exc
