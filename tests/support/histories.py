"""Building a table's history from a list of steps, one commit each: SQL text with ``{p}`` for the
table (``delta.`/path```), or a function ``step(spark, path)`` for what SQL cannot say (a Python
write with ``mergeSchema``)."""

from __future__ import annotations

import sqlext
from tests.support.deltaspark import delta_path


def run_steps(spark, path, steps) -> None:
    """Run ``steps`` against the table at ``path`` in order, with sqlext."""
    for step in steps:
        if callable(step):
            step(spark, path)
        else:
            sqlext.sql(spark, step.format(p=delta_path(path)))


def append_merging_schema(query: str):
    """A step appending ``query``'s rows with schema evolution (``mergeSchema=True``)."""
    def step(spark, path):
        sqlext.write(spark.sql(query), str(path), mode="append", mergeSchema=True)
    return step
