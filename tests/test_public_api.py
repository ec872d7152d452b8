"""``sqlext``'s namespace: ``__all__`` names the API and the error classes, nothing else leaks
through ``from sqlext import *``, and the function ``sqlext.sql`` sits beside the package of
the SQL front."""

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


def test_sql_is_the_function_and_its_package_still_imports():
    assert callable(sqlext.sql) and sqlext.sql.__module__ == "sqlext"
    runner = importlib.import_module("sqlext.sql.runner")
    assert callable(runner.run_sql)
