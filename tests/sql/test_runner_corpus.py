"""The statement corpus (``tests/sql/corpus/*.sql``) through ``sqlext.sql``, statement by statement
checked against DuckDB running the same statements on the same rows, the Python API, or literal
expectations. See :mod:`tests.sql.corpus` for the annotation format.

Each scenario file runs in its own schema (``corpus_<file>``) of the test run's warehouse.
"""

from __future__ import annotations

import ast
import re
from collections import Counter

import pyarrow as pa
import pytest

import sqlext
import sqlext.errors
from sqlext.catalog import Catalog
from sqlext.engine.local.policy import MODE_CONF
from sqlext.log.table import DeltaLog
from tests.sql.corpus import Case, all_cases, commit_time_of, load, scenario_files, substitute
from tests.support.compare import assert_same_rows, rows, to_arrow
from tests.support.readers import read_deltalake

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's


def test_corpus_size_and_coverage():
    cases = all_cases()
    assert len(cases) >= 150, len(cases)
    text = "\n".join(c.sql.upper() for c in cases)
    for form in ("CREATE OR REPLACE TABLE", "AS SELECT", "PARTITIONED BY", "LOCATION", "TBLPROPERTIES",
                 "INSERT OVERWRITE", "REPLACE WHERE", "PARTITION (", "DELETE FROM", "UPDATE ",
                 "MERGE INTO", "MERGE WITH SCHEMA EVOLUTION", "VERSION AS OF", "TIMESTAMP AS OF",
                 "CHANGES FROM VERSION", "CHANGES FROM TIMESTAMP", "TABLE_CHANGES(", ".CHANGES",
                 "DESCRIBE HISTORY", "DESCRIBE DETAIL", "DESCRIBE EXTENDED", "SHOW TABLES",
                 "SHOW TBLPROPERTIES", "SHOW CREATE TABLE", "ADD COLUMNS", "SET TBLPROPERTIES",
                 "RENAME TO", "DROP TABLE", "CREATE SCHEMA", "DROP SCHEMA", "CREATE VIEW",
                 "TEMPORARY VIEW", "DROP VIEW", "UNION", "WITH ", "JOIN", "DELTA.`", "SET ",
                 "RESTORE", "OPTIMIZE", "VACUUM"):
        assert form in text, form


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.stem)
def test_corpus(spark, tmp_path, path, execution_mode):
    cases = load(path)
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    # a session of its own: temporary views, settings and the current schema stay in it; it
    # starts from the static settings, so the execution path is set on it too
    session = spark.newSession()
    if execution_mode is not None:
        session.conf.set(MODE_CONF, execution_mode)
    schema = f"corpus_{path.stem}"   # the scenario names it; the run on another path finds it
    sqlext.sql(session, f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    Catalog(session).create_schema(schema)
    session.catalog.setCurrentDatabase(schema)
    commit_time = commit_time_of(session)
    try:
        for case in cases:
            try:
                _run(session, con, case, str(tmp_path), commit_time)
            except (AssertionError, Exception) as exc:
                raise AssertionError(f"{case}\n{type(exc).__name__}: {exc}") from exc
    finally:
        con.close()


def _run(spark, con, case: Case, tmp: str, commit_time) -> None:
    sql = substitute(case.sql, tmp, commit_time)
    kinds = {kind for kind, _ in case.checks}
    assert case.checks, "every corpus statement needs a check"
    for kind, arg in case.checks:
        if kind == "error":
            name, _, pattern = arg.partition(" ")
            with pytest.raises(getattr(sqlext.errors, name), match=pattern or None):
                sqlext.sql(spark, sql)
            return
    result = sqlext.sql(spark, sql)
    duck = substitute(case.duckdb, tmp, commit_time) if case.duckdb else (
        sql if kinds & {"rows", "table"} else None)
    duck_result = None
    if duck and duck != "-":
        cursor = con.execute(duck)
        duck_result = cursor.to_arrow_table() if "rows" in kinds else None
    for kind, arg in case.checks:
        CHECKS[kind](spark, con, result, duck_result, arg, tmp, commit_time)


# --- checks -----------------------------------------------------------------------------------


def _positional(table: pa.Table) -> pa.Table:
    return table.rename_columns([f"c{i}" for i in range(table.num_columns)])


def _check_rows(spark, con, result, duck_result, arg, tmp, commit_time):
    actual, expected = _positional(to_arrow(result)), _positional(duck_result)
    assert actual.num_columns == expected.num_columns, (actual.schema, expected.schema)
    if arg == "ordered":
        assert _in_order(actual) == _in_order(expected)
    else:
        assert_same_rows(actual, expected)


def _in_order(table: pa.Table) -> list[tuple]:
    """Normalised rows in the table's order."""
    numbered = table.append_column("__row", pa.array(range(table.num_rows)))
    return [r[:-1] for r in rows(numbered, sort_by=["__row"])]


def _table_ref(spark, name: str) -> str:
    return Catalog(spark).resolve(name).location


def _check_table(spark, con, result, duck_result, arg, tmp, commit_time):
    name, _, duck_name = (part.strip() for part in substitute(arg, tmp, commit_time).partition("="))
    actual = read_deltalake(_table_ref(spark, name))
    expected = con.execute(f"SELECT * FROM {duck_name or name}").to_arrow_table()
    assert_same_rows(actual, expected)


def _check_expect(spark, con, result, duck_result, arg, tmp, commit_time):
    expected = ast.literal_eval(substitute(arg, tmp, commit_time))
    assert Counter(rows(result)) == Counter(tuple(r) for r in expected), rows(result)


def _check_api(spark, con, result, duck_result, arg, tmp, commit_time):
    scope = {"spark": spark, "sqlext": sqlext, "DeltaTable": sqlext.DeltaTable,
             "loc": lambda name: _table_ref(spark, name)}
    expected = eval(substitute(arg, tmp, commit_time), scope)  # noqa: S307 - corpus expressions
    assert_same_rows(result, expected)


def _check_count(spark, con, result, duck_result, arg, tmp, commit_time):
    assert result.count() == int(arg)


def _check_columns(spark, con, result, duck_result, arg, tmp, commit_time):
    assert result.columns == [c.strip() for c in arg.split(",")]


def _check_match(spark, con, result, duck_result, arg, tmp, commit_time):
    text = "\n".join("|".join(str(v) for v in row) for row in result.collect())
    assert re.search(arg, text, re.MULTILINE), text


def _check_history(spark, con, result, duck_result, arg, tmp, commit_time):
    name, version, operation = substitute(arg, tmp, commit_time).split(None, 2)
    log = DeltaLog(_table_ref(spark, name))
    latest = log.listing().latest_version
    assert latest == int(version), f"latest version {latest}, expected {version}"
    assert log.commit_info(latest).operation == operation


CHECKS = {"rows": _check_rows, "table": _check_table, "expect": _check_expect, "api": _check_api,
          "count": _check_count, "columns": _check_columns, "match": _check_match,
          "history": _check_history}


def test_corpus_annotations_are_known():
    for case in all_cases():
        for kind, _ in case.checks:
            assert kind in CHECKS or kind == "error", f"{case}: unknown check {kind!r}"
