"""Concurrency across engines: sqlext (this process) and delta-spark (the worker process) commit
to one table at the same time. Every operation either commits or fails with a typed conflict
(sqlext's ``ConcurrentModificationException`` subclasses, delta-spark's
``io.delta.exceptions.Concurrent*``), and nothing committed is lost.

Each writer increments its own counter row with UPDATE; all rows live in one file, so every
UPDATE rewrites the file the other writer's UPDATE reads: concurrent ones conflict. At the end
each writer's counter equals the number of its UPDATEs that committed, and the history holds
exactly those commits.
"""

from __future__ import annotations

import json
import time

import sqlext
from sqlext.errors import ConcurrentModificationException
from tests.support.deltaspark import delta_path

ROUNDS = 6

# delta-spark's writer: at least ROUNDS UPDATEs, and on while sqlext's writer runs (MARK exists)
DELTA_SPARK_LOOP = """
import os
outcomes = []
while (len(outcomes) < ROUNDS or os.path.exists(MARK)) and len(outcomes) < 60:
    try:
        spark.sql(f"UPDATE {TABLE} SET n = n + 1 WHERE writer = 'delta-spark'")
        outcomes.append("committed")
    except Exception as exc:
        java = getattr(exc, "_origin", None) or getattr(exc, "java_exception", None)
        if java is not None:
            outcomes.append(java.getClass().getName())
        elif "DELTA_CONCURRENT" in str(exc) or type(exc).__name__.startswith("Concurrent"):
            outcomes.append("io.delta.exceptions.Concurrent:" + type(exc).__name__)
        else:
            outcomes.append(repr(exc))
result = outcomes
"""


def _operations(path):
    """(operation, engineInfo) of every commit in the log."""
    found = []
    for commit in sorted((path / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            info = json.loads(line).get("commitInfo")
            if info:
                found.append((info.get("operation"), info.get("engineInfo", "")))
    return found


def test_sqlext_and_delta_spark_update_one_table(spark, delta_spark, tmp_path):
    path = tmp_path / "shared"
    table = delta_path(path)
    mark = tmp_path / "sqlext-writing"
    sqlext.write(spark.createDataFrame([("sqlext", 0), ("delta-spark", 0)], "writer STRING, n INT")
                 .coalesce(1), str(path))
    mark.touch()
    pending = delta_spark.submit("exec", code=f"ROUNDS = {ROUNDS}\nTABLE = {table!r}\n"
                                 f"MARK = {str(mark)!r}\n" + DELTA_SPARK_LOOP)
    # sqlext starts once delta-spark's writer is committing, so the two loops overlap
    deadline = time.monotonic() + 600
    while not any("Delta-Lake" in engine for _, engine in _operations(path)):
        assert time.monotonic() < deadline, "delta-spark committed nothing in 10 minutes"
        time.sleep(0.5)
    mine = []
    try:
        for _ in range(ROUNDS):
            try:
                sqlext.sql(spark, f"UPDATE {table} SET n = n + 1 WHERE writer = 'sqlext'")
                mine.append("committed")
            except ConcurrentModificationException as exc:
                mine.append(type(exc).__name__)
    finally:
        mark.unlink()
    theirs = pending.result()

    assert all(o == "committed" or o.startswith("io.delta.exceptions.Concurrent") for o in theirs), theirs
    counts = dict(sqlext.read(spark, str(path)).select("writer", "n").collect())
    assert counts == {"sqlext": mine.count("committed"), "delta-spark": theirs.count("committed")}, (
        mine, theirs)
    updates = [op for op, _ in _operations(path) if op == "UPDATE"]
    assert len(updates) == mine.count("committed") + theirs.count("committed")
    assert mine.count("committed") >= 1 and theirs.count("committed") >= 1
    conflicts = len(mine) + len(theirs) - len(updates)
    assert conflicts >= 1, (mine, theirs)  # the loops overlapped: someone lost a race
    # delta-spark reads the final state the same
    final = delta_spark.sql(f"SELECT * FROM {table}").to_pylist()
    assert {r["writer"]: r["n"] for r in final} == counts
