"""Spark errors sqlext reports are printed once (issue 27): a bad column in a DELETE condition
raises sqlext's one-line error without pyspark's query context log first (``SQLQueryContextLogger``:
a ~10 KB JSON block with the JVM's stack on standard error), on a session from
``sqlext.session()`` and on one the user built and passed to ``sqlext.install``. Errors of the
user's own Spark calls are still logged as pyspark logs them. Each case runs in a fresh process
(the logs are set up once per process)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOGGED = ("SQLQueryContextLogger", "DataFrameQueryContextLogger", '{"ts"')

PREAMBLE = """
import sys
import sqlext

def report(what, call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001
        print(f"{what}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
    else:
        raise SystemExit(f"{what}: no error")
"""


def _run(tmp_path: Path, body: str) -> tuple[str, str]:
    """stderr of ``body`` run in a new process, cut at the line ``USER OWN`` (before it: what
    sqlext reported; after it: the user's own Spark call)."""
    code = PREAMBLE + textwrap.dedent(body)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SQLEXT_WAREHOUSE=str(tmp_path / "warehouse"))
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "t")], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    ours, _, users = done.stderr.partition("USER OWN")
    return ours, users


def _one_line_error(stderr: str, what: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith(what + ":")]
    assert len(lines) == 1, stderr[-3000:]
    return lines[0]


def test_sqlext_session_reports_a_bad_delete_condition_once(tmp_path):
    ours, users = _run(tmp_path, """
        spark = sqlext.session(master="local[1]", **{"spark.ui.enabled": "false"})
        path = sys.argv[1]
        sqlext.write(spark.range(3), path)
        report("DELETE", lambda: sqlext.DeltaTable.forPath(spark, path).delete("nope = 1"))
        report("SQL", lambda: sqlext.sql(spark, f"DELETE FROM delta.`{path}` WHERE nope = 1"))
        print("USER OWN", file=sys.stderr, flush=True)
        report("OWN", lambda: spark.sql("SELECT nope FROM range(1)"))
    """)
    assert not any(marker in ours for marker in LOGGED), ours[:3000]
    line = _one_line_error(ours, "DELETE")
    assert "nope" in line and "The table is unchanged" in line
    assert "nope" in _one_line_error(ours, "SQL")
    # the user's own call to Spark: pyspark's log, as without sqlext
    assert "SQLQueryContextLogger" in users


def test_install_on_the_users_session_reports_a_bad_delete_condition_once(tmp_path):
    ours, _ = _run(tmp_path, """
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .getOrCreate())
        sqlext.install(spark)
        path = sys.argv[1]
        spark.range(3).write.format("delta").save(path)
        report("DELETE", lambda: sqlext.DeltaTable.forPath(spark, path).delete("nope = 1"))
        report("SQL", lambda: spark.sql(f"DELETE FROM delta.`{path}` WHERE nope = 1"))
    """)
    assert not any(marker in ours for marker in LOGGED), ours[:3000]
    assert "The table is unchanged" in _one_line_error(ours, "DELETE")
    assert "nope" in _one_line_error(ours, "SQL")
