"""Failed Spark jobs as sqlext errors: a command's data work runs in Spark, and what Spark raises
(``Py4JJavaError``, ``PySparkException``) is turned into a :class:`~sqlext.errors.SqlextError`
naming the table, the version and what to do. Nothing is committed when one is raised.
"""

from __future__ import annotations

import contextlib

from py4j.protocol import Py4JJavaError
from pyspark.errors import IllegalArgumentException, PySparkException

from sqlext.engine.conditions import RUNTIME_ERROR_MARK
from sqlext.engine.constraints import CONSTRAINT_MARK
from sqlext.engine.generated import GENERATED_MARK, IDENTITY_OVERFLOW_MARK
from sqlext.engine.pyspark_errors import spark_fields
from sqlext.errors import (ConstraintViolationError, GeneratedColumnMismatchError,
                           IdentityColumnError, IllegalArgumentError, InvariantViolationError,
                           SqlextError)

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
    values out of range, :class:`ConstraintViolationError` for a row breaking a table
    constraint, :class:`InvariantViolationError` for sqlext's other row checks, and for anything
    else :class:`IllegalArgumentError` (Spark's ``IllegalArgumentException``, e.g. a value that
    does not cast) or :class:`SqlextError` (saying so when the disk is full), with Spark's
    condition and SQLSTATE. Each names ``table`` and ``version`` (attributes too)."""
    text = str(exc)
    where = {"table": table, "version": version}
    at = f"table {table}, version {version}" if version is not None else \
        f"table {table} (not created yet)"
    start = text.find(GENERATED_MARK)
    if start >= 0:
        message = _marked(text, start, GENERATED_MARK)
        return GeneratedColumnMismatchError(
            f"{at}: {operation}: {message}. Nothing was committed; the table is unchanged. Leave "
            "the generated column out (it is computed), or give the expression's value", **where)
    start = text.find(IDENTITY_OVERFLOW_MARK)
    if start >= 0:
        message = _marked(text, start, IDENTITY_OVERFLOW_MARK)
        return IdentityColumnError(f"{at}: {operation}: {message}. Nothing was committed; the "
                                   "table is unchanged.", **where)
    start = text.find(CONSTRAINT_MARK)
    if start >= 0:
        message = text[start + len(CONSTRAINT_MARK):].strip().splitlines()[0]
        message = message.split(" SQLSTATE:")[0].rstrip(". ")
        not_null = message.startswith("NOT NULL constraint")
        return ConstraintViolationError(
            f"{at}: {operation}: {message}. Nothing was committed; the table is unchanged. Fix "
            "or filter the rows, or drop the constraint (ALTER TABLE ... DROP CONSTRAINT / ALTER "
            "COLUMN ... DROP NOT NULL)",
            error_class="DELTA_NOT_NULL_CONSTRAINT_VIOLATED" if not_null else None, **where)
    start = text.find(RUNTIME_ERROR_MARK)
    if start >= 0:
        message = text[start + len(RUNTIME_ERROR_MARK):].strip().splitlines()[0]
        message = message.split(" SQLSTATE:")[0].rstrip(". ")
        replace_where = "replaceWhere predicate" in message
        return InvariantViolationError(
            f"{message}. Nothing was committed; the table is unchanged.",
            error_class="DELTA_REPLACE_WHERE_MISMATCH" if replace_where else None, **where)
    if any(mark in text for mark in _DISK_FULL):
        return SqlextError(f"{at}: {operation} failed: the file system ran out of space while "
                           "Spark wrote the data files (No space left on device). Nothing was "
                           "committed; the table is unchanged. Free space (VACUUM removes files "
                           "no version needs) and run it again.", **where)
    cls = IllegalArgumentError if isinstance(exc, IllegalArgumentException) else SqlextError
    return cls(f"{at}: {operation} failed while Spark evaluated it: "
               f"{_first_line(text, exc)[:500]}. Nothing was committed; the table is unchanged.",
               **spark_fields(exc), **where)


@contextlib.contextmanager
def spark_job_errors(table: str, version: int | None, operation: str):
    """Raise what :func:`spark_error` makes of a failed Spark job in the block (sqlext's own
    errors, pyspark's classes too, pass as they are)."""
    try:
        yield
    except SqlextError:
        raise
    except (PySparkException, Py4JJavaError) as exc:
        raise spark_error(exc, table, version, operation) from exc
