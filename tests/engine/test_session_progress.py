"""Spark's console progress bar: on by default in a terminal, off with ``progress=False`` (and
``sqlext-sql --no-progress``); a real new session in a subprocess shows it on a slow job."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

from sqlext.engine.session import progress_setting
from sqlext.sql.shell import parse_args

ROOT = Path(__file__).resolve().parents[2]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_default_follows_the_terminal():
    assert progress_setting(None, _Terminal()) == "true"
    assert progress_setting(None, io.StringIO()) == "false"
    assert progress_setting(False, _Terminal()) == "false"
    assert progress_setting(True, io.StringIO()) == "true"
    assert parse_args(["--no-progress"]).progress is False
    assert parse_args([]).progress is None


def _slow_job(progress: bool) -> subprocess.CompletedProcess:
    code = textwrap.dedent(f"""
        import time, sqlext
        spark = sqlext.session(progress={progress}, master="local[2]")
        print(spark.sparkContext.getConf().get("spark.ui.showConsoleProgress"))
        spark.sparkContext.parallelize(range(4), 2).map(lambda x: time.sleep(2) or x).count()
    """)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_a_new_session_shows_the_bar_only_when_asked():
    shown, hidden = _slow_job(True), _slow_job(False)
    assert shown.returncode == 0 and hidden.returncode == 0, shown.stderr[-2000:]
    assert shown.stdout.split() == ["true"] and hidden.stdout.split() == ["false"]
    assert "[Stage 0:" in shown.stderr
    assert "[Stage" not in hidden.stderr
