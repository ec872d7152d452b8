"""Writer processes for the fault tests. Each runs random operations on one table and journals
them (see :mod:`tests.support.fault_ops`) until it is killed or its deadline passes.

- :func:`kernel_writer`: kernel + pyarrow, started through a multiprocessing forkserver (cheap).
- ``python tests/faults/workers.py spark <path> <journal> <seed> <ready-file> [<worker> <go-file>
  <seconds>]``: sqlext on a ``local[1]`` SparkSession, for the runs that kill a Spark driver (and
  its JVM) and for a Spark writer among kernel writers.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

if __name__ == "__main__":     # run as a script: make `tests` and `sqlext` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sqlext.errors import ConcurrentModificationException  # noqa: E402
from sqlext.log.table import DeltaLog  # noqa: E402
from tests.support import fault_ops as ops  # noqa: E402

KERNEL_KINDS = ("append", "append", "delete", "update", "merge")


def _running(parent: int, deadline: float | None) -> bool:
    """Go on while the deadline (if any) is ahead and the process that started this writer is
    alive: a writer meant to run until killed must not outlive a test run that died first
    (an orphan is re-parented, so its parent pid changes)."""
    return os.getppid() == parent and (deadline is None or time.time() < deadline)


def kernel_writer(path: str, journal: str, seed: int, worker: int, ready: str,
                  go: str | None = None, seconds: float | None = None, pause: float = 0.0) -> None:
    """Run kernel operations on ``path``: forever (until killed), or for ``seconds`` after the
    file ``go`` appears, sleeping ``pause`` seconds between operations. Conflicts are journaled
    with their exception class name; any other error ends the process with a non-zero exit
    code."""
    parent = os.getppid()
    rng = random.Random(seed)
    ids = ops.IdSource(worker)
    log = DeltaLog(path)
    out = ops.Journal(journal)
    log.snapshot()
    deadline = None
    if go is not None:
        Path(ready).touch()
        ops.wait_for(Path(go))
        deadline = time.time() + (seconds or 5)
    first = go is None      # a writer to be killed says "ready" after its first operation
    while _running(parent, deadline):
        time.sleep(pause)
        kind = rng.choice(KERNEL_KINDS)
        # a merge updates rows of a few files picked at random (reading every file to choose
        # them would take longer than the operation)
        # one snapshot for both the population and its size: another writer may commit between
        # two reads of the log
        files = log.snapshot().files if kind == "merge" else []
        current = ops.rows_of_files(log, rng.sample(files, min(3, len(files)))) if files else []
        op = ops.random_op(rng, ids, current, (kind,))
        # the version the operation reads is taken once it is chosen: choosing a merge's rows
        # reads the whole table, which is no part of the operation
        snapshot = log.snapshot()
        out.write({"op": op, "before": snapshot.version, "worker": worker})
        try:
            version = ops.run_kernel(log, snapshot, op)
        except ConcurrentModificationException as exc:
            out.write({"done": None, "conflict": type(exc).__name__, "worker": worker})
            continue
        out.write({"done": version, "worker": worker})
        if first:
            Path(ready).touch()
            first = False


def spark_writer(path: str, journal: str, seed: int, ready: str, worker: int = 1,
                 go: str | None = None, seconds: float | None = None) -> None:
    """Run sqlext operations on Spark (``local[1]``): until killed, or for ``seconds`` after
    ``go`` appears. Conflicts are journaled; other errors end the process."""
    import sqlext
    parent = os.getppid()
    spark = sqlext.session(master="local[1]", **{"spark.sql.shuffle.partitions": "1",
                                                 "spark.ui.enabled": "false"})
    rng = random.Random(seed)
    ids = ops.IdSource(worker)
    log = DeltaLog(path)
    out = ops.Journal(journal)
    kinds = ops.spark_kinds()
    first = True          # the first append warms the JVM up; "ready" comes after it
    deadline = None
    while _running(parent, deadline):
        kind = "append" if first else rng.choice(kinds)
        current = ops.rows_at(log) if kind == "merge" else []
        op = ops.random_op(rng, ids, current, (kind,))
        try:
            version = ops.run_spark(spark, log, op, lambda before: out.write(
                {"op": op, "before": before, "worker": worker}))
        except ConcurrentModificationException as exc:
            out.write({"done": None, "conflict": type(exc).__name__, "worker": worker})
            continue
        out.write({"done": version, "worker": worker})
        if first:
            first = False
            Path(ready).touch()
            if go is not None:
                ops.wait_for(Path(go))
                deadline = time.time() + (seconds or 5)


if __name__ == "__main__":
    mode, path, journal, seed, ready, *rest = sys.argv[1:]
    assert mode == "spark"
    worker, go, seconds = (int(rest[0]), rest[1], float(rest[2])) if rest else (1, None, None)
    spark_writer(path, journal, int(seed), ready, worker, go, seconds)
