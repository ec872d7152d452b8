"""Progress lines for long statements: one line on standard error per phase of a MERGE or an
OPTIMIZE (finding files, rewriting, committing), printed when the session shows Spark's console
progress bar (``sqlext.session(progress=...)``, ``sqlext-sql --no-progress``), so the bar's
stages can be told apart. ``SET sqlext.progress = true|false`` turns the lines on or off in a
running session (Spark's own setting cannot change after start)."""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession

from sqlext.engine.session import PROGRESS_CONF

PROGRESS_LINES_CONF = "sqlext.progress"


class Progress:
    """``progress("rewriting 3 files")`` prints ``MERGE t: rewriting 3 files`` when the
    session's progress bar is on; otherwise nothing (the setting is read once)."""

    def __init__(self, spark: SparkSession, operation: str, table: str, stream=None):
        self.prefix = f"{operation} {table}: "
        self.stream = stream
        default = spark.conf.get(PROGRESS_CONF, "false")
        self.on = str(spark.conf.get(PROGRESS_LINES_CONF, default)).lower() == "true"

    def __call__(self, text: str) -> None:
        if self.on:
            stream = self.stream if self.stream is not None else sys.stderr
            print(self.prefix + text, file=stream, flush=True)
