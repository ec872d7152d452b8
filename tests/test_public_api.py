"""``sqlext``'s namespace: ``__all__`` names the API and the error classes, nothing else leaks
through ``from sqlext import *``, and ``sqlext.sql`` is one object: the SQL front's package,
callable as the function that runs SQL."""

from __future__ import annotations

import importlib

import sqlext
from sqlext import errors


def test_star_import_takes_exactly_the_public_names():
    scope: dict = {}
    exec("from sqlext import *", scope)   # noqa: S102
    taken = {name for name in scope if name != "__builtins__"}
    assert taken == set(sqlext.__all__)
    assert not {"annotations", "importlib", "re"} & taken
    for name in ("session", "write", "read", "changes", "DeltaTable", "install", "sql",
                 "SqlextError", "__version__"):
        assert name in taken


def test_every_error_class_is_public_and_nothing_else_is():
    defined = {name for name, value in vars(errors).items()
               if isinstance(value, type) and issubclass(value, Exception)
               and value.__module__ == errors.__name__}
    assert set(errors.__all__) == defined
    assert "SqlextError" in defined and "SQLSTATES" not in errors.__all__
    assert all(getattr(sqlext, name) is getattr(errors, name) for name in errors.__all__)


def test_sql_is_one_callable_package(spark):
    """``sqlext.sql`` is the SQL front's package and the function that runs SQL, one object:
    importing the package by any spelling cannot shadow the function or the reverse."""
    import sys

    import sqlext.sql as by_import
    from sqlext import sql as by_from
    runner = importlib.import_module("sqlext.sql.runner")
    assert sqlext.sql is by_import is by_from is sys.modules["sqlext.sql"]
    assert callable(runner.run_sql) and sqlext.sql.runner is runner
    assert sqlext.sql(spark, "SELECT 40 + 2 AS answer").collect()[0].answer == 42
