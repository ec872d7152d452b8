"""Spark's console progress bar and sqlext's MERGE/OPTIMIZE progress lines: on by default in a
terminal, as asked with ``progress=True|False`` (and ``sqlext-sql --no-progress``); a real new
session in a subprocess shows them on a slow job and a MERGE, with standard error a pipe."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

from sqlext.engine.progress import progress_lines_on
from sqlext.engine.session import (PROGRESS_CONF, PROGRESS_LINES_CONF, progress_setting,
                                   progress_settings)
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
    # asked either way, the lines are asked for too; not asked, they follow the terminal
    assert progress_settings(None, _Terminal()) == {PROGRESS_CONF: "true"}
    assert progress_settings(True, io.StringIO()) == {PROGRESS_CONF: "true",
                                                      PROGRESS_LINES_CONF: "true"}
    assert progress_settings(False, _Terminal()) == {PROGRESS_CONF: "false",
                                                     PROGRESS_LINES_CONF: "false"}


class _Session:
    """A session's settings, as :func:`progress_lines_on` reads them."""

    def __init__(self, **settings):
        self.conf = self
        self.settings = settings

    def get(self, key, default=None):
        return self.settings.get(key, default)


def test_progress_lines_go_to_a_terminal_or_where_asked():
    bar = {PROGRESS_CONF: "true"}
    assert progress_lines_on(_Session(**bar), _Terminal())
    assert not progress_lines_on(_Session(**bar), io.StringIO())       # a log file, a pipe
    assert not progress_lines_on(_Session(), _Terminal())              # no bar, nothing asked
    asked = {PROGRESS_LINES_CONF: "true"}
    assert progress_lines_on(_Session(**asked), io.StringIO())
    assert not progress_lines_on(_Session(**bar, **{PROGRESS_LINES_CONF: "false"}), _Terminal())


def _slow_job(progress: bool, table: Path) -> subprocess.CompletedProcess:
    code = textwrap.dedent(f"""
        import sys, time, sqlext
        spark = sqlext.session(progress={progress}, master="local[2]")
        print(spark.sparkContext.getConf().get("spark.ui.showConsoleProgress"))
        spark.sparkContext.parallelize(range(4), 2).map(lambda x: time.sleep(2) or x).count()
        sqlext.write(spark.range(3), sys.argv[1])
        t = sqlext.DeltaTable.forPath(spark, sys.argv[1])
        t.alias("t").merge(spark.range(2, 4).alias("s"), "t.id = s.id") \\
            .whenNotMatchedInsertAll().execute()
    """)
    return subprocess.run([sys.executable, "-c", code, str(table)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_a_new_session_shows_the_bar_and_the_lines_only_when_asked(tmp_path):
    shown, hidden = _slow_job(True, tmp_path / "a"), _slow_job(False, tmp_path / "b")
    assert shown.returncode == 0 and hidden.returncode == 0, shown.stderr[-2000:]
    assert shown.stdout.split() == ["true"] and hidden.stdout.split() == ["false"]
    assert "[Stage 0:" in shown.stderr
    assert "[Stage" not in hidden.stderr
    assert f"MERGE {tmp_path / 'a'}: " in shown.stderr        # asked: also into a pipe
    assert "MERGE " not in hidden.stderr
