"""Progress lines for long statements: one line on standard error per phase of a MERGE or an
OPTIMIZE (finding files, rewriting, committing), so the stages of Spark's console progress bar
can be told apart.

When they are printed: as asked, by ``sqlext.session(progress=True|False)``, ``sqlext-sql
--no-progress`` or the setting ``sqlext.progress`` (``SET sqlext.progress = true|false`` in a
running session, ``--conf sqlext.progress=...``, a dbt profile's ``server_side_parameters``);
not asked, only when the session shows Spark's progress bar and standard error is a terminal
(a log file or a pipe gets none)."""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession

from sqlext.engine.session import PROGRESS_CONF, PROGRESS_LINES_CONF

__all__ = ["PROGRESS_LINES_CONF", "Progress", "progress_lines_on"]


def progress_lines_on(spark: SparkSession, stream=None) -> bool:
    """Whether the progress lines are printed on ``spark`` (see the module docstring);
    ``stream`` is where they go (default standard error)."""
    asked = spark.conf.get(PROGRESS_LINES_CONF, None)
    if asked is not None:
        return str(asked).strip().lower() == "true"
    stream = stream if stream is not None else sys.stderr
    terminal = bool(getattr(stream, "isatty", lambda: False)())
    return terminal and str(spark.conf.get(PROGRESS_CONF, "false")).lower() == "true"


class Progress:
    """``progress("rewriting 3 files")`` prints ``MERGE t: rewriting 3 files`` when the
    progress lines are on (:func:`progress_lines_on`, read once); otherwise nothing."""

    def __init__(self, spark: SparkSession, operation: str, table: str, stream=None):
        self.prefix = f"{operation} {table}: "
        self.stream = stream
        self.on = progress_lines_on(spark, stream)

    def __call__(self, text: str) -> None:
        if self.on:
            stream = self.stream if self.stream is not None else sys.stderr
            print(self.prefix + text, file=stream, flush=True)
