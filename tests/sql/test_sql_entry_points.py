"""``sqlext.sql`` is the function that runs SQL and the SQL front's package at once, whatever of
the package was imported, and the package runs as the shell with ``python -m sqlext.sql``."""

from __future__ import annotations

import inspect
import subprocess
import sys

import sqlext
import sqlext.sql.runner  # noqa: F401 - loading a submodule must not rebind sqlext.sql


def test_sqlext_sql_is_callable_after_submodule_imports():
    assert callable(sqlext.sql) and sqlext.sql is sys.modules["sqlext.sql"]
    assert list(inspect.signature(sqlext.sql).parameters) == ["spark", "text"]


def test_python_dash_m_sqlext_sql_is_the_shell():
    done = subprocess.run([sys.executable, "-m", "sqlext.sql", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: sqlext-sql")


def test_sqlext_sql_runs_statements(spark):
    assert sqlext.sql(spark, "SELECT 1 AS a; SELECT 2 AS b").collect()[0]["b"] == 2
