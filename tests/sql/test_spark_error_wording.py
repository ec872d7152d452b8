"""Issue 27: errors of ``sqlext.sql`` say what Spark says, where Spark says it.

A statement sqlglot cannot parse is handed to Spark's parser, and the error is Spark's
(``[PARSE_SYNTAX_ERROR] Syntax error at or near '='. SQLSTATE: 42601 (line 1, pos 30)`` and
the quoted lines), with the position of the offending token in the user's script; sqlglot's is
kept only where Spark parses the text. An analysis error (an unknown table) points at the name,
as Spark's does. The shell's output is checked in ``tests/sql/test_shell.py``.
"""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException, ParseException

import sqlext
from sqlext.errors import ParseError
from sqlext.sql.parse import parse_statements


@pytest.fixture
def table(spark, schema):
    sqlext.sql(spark, "CREATE TABLE events (id INT, v STRING) USING delta")
    return "events"


def _parse_error(spark, text) -> ParseError:
    with pytest.raises(ParseError) as err:
        sqlext.sql(spark, text)
    return err.value


def _sparks(spark, text) -> str:
    with pytest.raises(ParseException) as err:
        spark.sql(text)
    return str(err.value)


def test_a_syntax_error_is_sparks_at_the_offending_token(spark, table):
    text = "SELECT * FROM events WHERE id = = 1"
    err = _parse_error(spark, text)
    assert str(err).startswith("[PARSE_SYNTAX_ERROR] Syntax error at or near '='. "
                               "SQLSTATE: 42601 (line 1, pos 32)")
    assert str(err).strip() == _sparks(spark, text).strip()          # word for word
    assert (err.line, err.column, err.token, err.statement) == (1, 33, "=", text)
    assert isinstance(err, ParseException) and err.getCondition() == "PARSE_SYNTAX_ERROR"


def test_positions_are_the_scripts(spark, table):
    script = "SELECT 1;\n\nSELECT id\nFROM events WHERE id = = 1;\nSELECT 2;\n"
    err = _parse_error(spark, script)
    assert "(line 4, pos 23)" in str(err) and (err.line, err.column) == (4, 24)
    assert str(err).endswith("== SQL ==\nSELECT id\nFROM events WHERE id = = 1;\n"
                             "-----------------------^^^")


@pytest.mark.parametrize("text, near, line, pos", [
    ("UPDATE events SET v = WHERE id = 1", "'id'", 1, 28),
    ("SELECT id,, v FROM events", "','", 1, 10),           # an empty list item
    ("SELECT 1;\nSELECT (1", "end of input", 2, 9),
    ("SELECT 1;\nSELECT 'abc FROM events", "'''", 2, 7),    # sqlglot cannot even tokenize it
])
def test_other_syntax_errors_are_sparks(spark, table, text, near, line, pos):
    err = _parse_error(spark, text)
    assert str(err).startswith(f"[PARSE_SYNTAX_ERROR] Syntax error at or near {near}. "
                               f"SQLSTATE: 42601 (line {line}, pos {pos})"), str(err)


def test_sqlglots_error_where_spark_parses_the_text(spark, table):
    # Spark reads WHERE as the table's alias; sqlglot refuses: its error stays
    err = _parse_error(spark, "SELECT * FROM events WHERE")
    assert "at line 1, column 22 near 'WHERE'" in str(err)


def test_without_a_session_parse_errors_are_sqlglots():
    with pytest.raises(ParseError, match="at line 1, column 33 near '='"):
        parse_statements("SELECT * FROM events WHERE id = = 1")


def test_an_unknown_table_is_pointed_at(spark, table):
    with pytest.raises(AnalysisException) as err:
        sqlext.sql(spark, "SELECT * FROM evnets")
    assert err.value.getCondition() == "TABLE_OR_VIEW_NOT_FOUND"
    assert str(err.value).rstrip(";").endswith("line 1 pos 14")
    with pytest.raises(AnalysisException) as err:
        sqlext.sql(spark, "SELECT 1;\nSELECT *\n  FROM evnets e JOIN events f ON e.id = f.id")
    assert str(err.value).rstrip(";").endswith("line 3 pos 7")
    with pytest.raises(AnalysisException) as err:
        sqlext.sql(spark, "DELETE FROM evnets WHERE id = 1")
    assert str(err.value).rstrip(";").endswith("line 1 pos 12")


def test_the_dbt_adapters_message_is_sparks(spark, table):
    connections = pytest.importorskip("dbt.adapters.sqlext.connections")
    cursor = connections.SqlextCursor(spark, "sqlext-test")
    with pytest.raises(ParseError) as err:
        cursor.execute("SELECT * FROM events WHERE id = = 1")
    assert str(err.value).startswith("[PARSE_SYNTAX_ERROR] Syntax error at or near '='")
