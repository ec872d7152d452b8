"""``sqlext-sql`` driven as a user would: ``-e``, ``-f`` with a script, and an interactive session
under a pseudo-terminal (pexpect). Each run starts its own JVM, so there are three runs, sharing
one warehouse: what one run creates, the next (a new SparkSession) finds.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sqlext.sql.shell import complete_statements, split_statements
from sqlext.sql.table_format import render, render_vertical

SCRIPT = Path(sys.executable).with_name("sqlext-sql")
TIMEOUT = 600


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("shell-warehouse")


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HOME=str(home), SQLEXT_SQL_HISTORY=str(home / "history"), TERM="dumb",
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    return env


def _args(warehouse: Path) -> list[str]:
    return ["--master", "local[1]", "--conf", f"spark.sql.warehouse.dir={warehouse}",
            "--conf", "spark.sql.shuffle.partitions=1", "--conf", "spark.ui.enabled=false"]


@pytest.fixture(scope="module")
def e_run(warehouse, tmp_path_factory):
    """``sqlext-sql -e`` creating a table and a view, querying, then failing on a bad column."""
    home = tmp_path_factory.mktemp("home-e")
    sql = ("CREATE TABLE people (id INT, name STRING) USING delta;"
           "INSERT INTO people VALUES (1, 'ann'), (22, NULL);"
           "CREATE VIEW named AS SELECT name FROM people WHERE name IS NOT NULL;"
           "SELECT id, name FROM people ORDER BY id;"
           "SELECT nope FROM people;"
           "SELECT 'not reached' AS x")
    return subprocess.run([str(SCRIPT), *_args(warehouse), "-e", sql], capture_output=True,
                          text=True, timeout=TIMEOUT, env=_env(home))


def test_e_prints_tables_and_stops_at_the_first_error(e_run):
    assert e_run.returncode == 1, e_run.stderr
    assert ("+----+------+\n"
            "| id | name |\n"
            "+----+------+\n"
            "|  1 | ann  |\n"
            "| 22 | NULL |\n"
            "+----+------+\n") in e_run.stdout
    assert "Error (AnalysisException)" in e_run.stderr and "`nope`" in e_run.stderr
    assert "not reached" not in e_run.stdout
    assert "Time taken:" in e_run.stderr and "Fetched 2 row(s)" in e_run.stderr
    assert '"level": "ERROR"' not in e_run.stderr    # the error is reported once, by the shell


def test_f_runs_a_script_in_a_new_session(e_run, warehouse, tmp_path):
    script = tmp_path / "script.sql"
    script.write_text(
        "-- a new JVM: the table and the persistent view come from the catalog\n"
        "INSERT INTO people VALUES (3, 'cid');\n"
        "SELECT * FROM named ORDER BY name;  /* the view shows the new row */\n"
        "SELECT count(*) AS n\n"
        "FROM people\n"
        "WHERE id > 0;\n"
        "SELECT ';' AS `semi;colon`;\n")
    run = subprocess.run([str(SCRIPT), *_args(warehouse), "-S", "-f", str(script)],
                         capture_output=True, text=True, timeout=TIMEOUT, env=_env(tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout == (
        "+------+\n| name |\n+------+\n| ann  |\n| cid  |\n+------+\n"
        "+---+\n| n |\n+---+\n| 3 |\n+---+\n"
        "+------------+\n| semi;colon |\n+------------+\n| ;          |\n+------------+\n")
    assert "Time taken" not in run.stderr        # -S


def test_f_syntax_error_names_line_and_column(e_run, warehouse, tmp_path):
    script = tmp_path / "bad.sql"
    script.write_text("SELECT 1 AS one;\n\nSELECT id\nFROM people WHERE id = = 1;\nSELECT 2;\n")
    run = subprocess.run([str(SCRIPT), *_args(warehouse), "-S", "-f", str(script)],
                         capture_output=True, text=True, timeout=TIMEOUT, env=_env(tmp_path))
    assert run.returncode == 1
    assert "| one |" in run.stdout and "| 2 |" not in run.stdout
    # Spark's wording, at the offending token of the script
    assert ("Error (ParseError): [PARSE_SYNTAX_ERROR] Syntax error at or near '='. "
            "SQLSTATE: 42601 (line 4, pos 23)") in run.stderr


def test_e_unknown_table_is_pointed_at(warehouse, tmp_path):
    run = subprocess.run([str(SCRIPT), *_args(warehouse), "-S", "-e",
                          "SELECT 1 AS one; SELECT * FROM evnets"],
                         capture_output=True, text=True, timeout=TIMEOUT, env=_env(tmp_path))
    assert run.returncode == 1
    assert "Error (AnalysisException): [TABLE_OR_VIEW_NOT_FOUND]" in run.stderr
    assert "line 1 pos 31;" in run.stderr                 # `evnets`, as Spark points at it


def test_interactive_session(e_run, warehouse, tmp_path):
    import pexpect
    child = pexpect.spawn(str(SCRIPT), _args(warehouse), env=_env(tmp_path), encoding="utf-8",
                          timeout=TIMEOUT, dimensions=(40, 200))
    try:
        # the banner names the version pyproject.toml gives (read from the package metadata)
        child.expect_exact(f"sqlext-sql {importlib.metadata.version('sqlext')}: end statements")
        child.expect_exact("sqlext-sql> ")
        child.sendline("SELECT id, name")                 # a statement over two lines
        child.expect_exact("          > ")
        child.sendline("FROM people WHERE id = 1;")
        child.expect(r"\| id \| name \|\r\n\+-+\+-+\+\r\n\| +1 \| ann +\|\r\n\+")
        child.expect_exact("sqlext-sql> ")
        child.sendline("SELECT * FROM people WHERE = 1;")
        child.expect(r"ParseError\): \[PARSE_SYNTAX_ERROR\] Syntax error at or near '='\. "
                     r"SQLSTATE: 42601 \(line 1, pos 27\)")
        child.expect_exact("sqlext-sql> ")
        child.sendline("SELECT count(*) FROM range(1000000000000) a CROSS JOIN range(10) b;")
        time.sleep(5)                                      # the statement is running
        child.sendintr()                                   # Ctrl-C cancels it, not the shell
        child.expect_exact("Cancelled.")
        child.expect_exact("sqlext-sql> ")
        child.sendline("SELECT 40 + 2 AS answer;")
        child.expect(r"\| answer \|\r\n\+-+\+\r\n\| +42 \|")
        child.expect_exact("sqlext-sql> ")
        child.sendline("SELECT repeat('w', 500) AS wide;")      # fitted to the 200 columns
        child.expect(r"\| (w+)\.\.\. \|\r\n")
        assert 150 < len(child.match.group(1)) + len("| ... |") <= 200
        child.expect_exact("sqlext-sql> ")
        child.sendline("\\x")                                   # vertical display
        child.expect_exact("Vertical display is on.")
        child.sendline("SELECT 40 + 2 AS answer, 'ann' AS name;")
        child.expect(r"-\[ RECORD 1 \]-*\r\nanswer \| 42\r\nname   \| ann\r\n")
        child.expect_exact("sqlext-sql> ")
        child.sendline("exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    history = (tmp_path / "history").read_text()
    assert "SELECT 40 + 2 AS answer;" in history


# --- without Spark --------------------------------------------------------------------------


def test_statement_completion():
    assert complete_statements("SELECT 1") == ("", "SELECT 1")
    assert complete_statements("SELECT ';'") == ("", "SELECT ';'")
    assert complete_statements("SELECT 'open;") == ("", "SELECT 'open;")
    assert complete_statements("SELECT 1; SELECT\n2") == ("SELECT 1;", " SELECT\n2")
    assert complete_statements("SELECT 1 /* ; */;") == ("SELECT 1 /* ; */;", "")
    assert complete_statements("SELECT 1; -- done") == ("SELECT 1;", "")


def test_split_statements_keeps_positions():
    text = "SELECT 1;\nSELECT 2; SELECT 'a;b'\n;"
    pieces = split_statements(text)
    assert [p.strip() for p in pieces] == ["SELECT 1;", "SELECT 2;", "SELECT 'a;b'\n;"]

    def line_column(s: str, i: int) -> tuple[int, int]:
        return s.count("\n", 0, i) + 1, i - (s.rfind("\n", 0, i) + 1) + 1

    assert line_column(pieces[2], pieces[2].index("SELECT")) == line_column(
        text, text.index("SELECT 'a"))


def test_render_fits_a_width_and_renders_vertically():
    table = render(["id", "text"], [(1, "a" * 50), (2, "b")], width=30)
    assert all(len(line) <= 30 for line in table.splitlines())
    assert "| aaaaaaaaaaaaaaaaaa... |" in table and "| b                     |" in table
    assert render(["id"], [(1,)], width=3) == render(["id"], [(1,)])     # never below 8 wide
    assert render_vertical(["id", "text"], [(1, "x"), (2, None)]) == (
        "-[ RECORD 1 ]\nid   | 1\ntext | x\n-[ RECORD 2 ]\nid   | 2\ntext | NULL")
    assert render_vertical(["id"], []) == "(0 rows)"


def test_render_aligns_columns():
    assert render(["n", "name"], [(1, "a"), (100, None)]) == (
        "+-----+------+\n| n   | name |\n+-----+------+\n|   1 | a    |\n| 100 | NULL |\n"
        "+-----+------+")


def test_describe_history_is_compact_unless_vertical(spark, tmp_path):
    import io

    import sqlext
    from sqlext.sql.shell import Shell

    path = tmp_path / "h"
    sqlext.write(spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string"), str(path),
                 userMetadata="load")
    sqlext.sql(spark, f"DELETE FROM delta.`{path}` WHERE id = 1")
    out = io.StringIO()
    shell = Shell(spark, silent=True, out=out, err=io.StringIO())
    assert shell.run_script(f"DESCRIBE HISTORY delta.`{path}`")
    lines = out.getvalue().splitlines()
    header = [c.strip() for c in lines[1].strip("|").split("|")]
    assert header == ["version", "timestamp", "operation", "parameters", "metrics",
                      "userMetadata"]
    delete = next(line for line in lines if "| DELETE" in line)
    assert "numDeletedRows=1" in delete and "predicate=" in delete
    assert "=0," not in delete and not delete.rstrip(" |").endswith("=0")   # zero metrics left out
    assert "clusterId" not in out.getvalue()
    vertical = io.StringIO()
    Shell(spark, silent=True, out=vertical, err=io.StringIO(), vertical=True).run_script(
        f"DESCRIBE HISTORY delta.`{path}`")
    assert "clusterId" in vertical.getvalue() and "isolationLevel" in vertical.getvalue()
