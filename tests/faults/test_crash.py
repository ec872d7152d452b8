"""Crash safety: writer processes killed with SIGKILL at random moments during appends, deletes,
updates, merges, checkpoints and log cleanup. After each kill: every version reads and equals the
replay of the operations that committed (no commit is partly visible, none is lost), deltalake
agrees, VACUUM removes the orphans, and the table takes new commits.

Most runs kill a kernel-only writer (pyarrow files, kernel commits; forked from a forkserver so
that a run costs milliseconds, not an interpreter start); a few kill a Spark driver running
sqlext's public API, JVM included.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import fault_ops as ops
from tests.faults.verify import verify_history, vacuum_then_append
from tests.faults.workers import kernel_writer

KERNEL_RUNS = 48
SPARK_RUNS = 3
WORKERS_SCRIPT = Path(__file__).with_name("workers.py")


@pytest.fixture(scope="module")
def forkserver():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["pandas", "pyarrow.parquet", "sqlext.log.table",
                                "sqlext.log.transaction",
                                "sqlext.log.checkpoint", "tests.faults.workers"])
    return ctx


def _kill_kernel_writer(ctx, path: Path, journal: Path, seed: int, delay: float) -> int:
    ready = path.parent / f"{path.name}.ready"
    proc = ctx.Process(target=kernel_writer, args=(str(path), str(journal), seed, 0, str(ready)))
    proc.start()
    deadline = time.time() + 120
    while not ready.exists():
        assert proc.is_alive(), f"writer died before it was ready (exit {proc.exitcode})"
        assert time.time() < deadline, "writer never became ready"
        time.sleep(0.005)
    time.sleep(delay)
    assert proc.is_alive(), f"writer ended on its own (exit {proc.exitcode}) before the kill"
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    return proc.exitcode


def test_kernel_writers_killed_at_random_moments(tmp_path, forkserver):
    rng = random.Random(20240805)
    totals = {"versions": 0, "checkpoints": 0, "orphans": 0, "tmp": 0, "kills_mid_op": 0}
    for run in range(KERNEL_RUNS):
        path = tmp_path / f"t{run}"
        journal = tmp_path / f"t{run}.journal"
        ops.create(path, checkpoint_interval=rng.choice([2, 3]))
        exit_code = _kill_kernel_writer(forkserver, path, journal, seed=run,
                                        delay=rng.uniform(0.02, 0.8))
        assert exit_code == -signal.SIGKILL
        entries = ops.read_journal(journal)
        from sqlext.log.table import DeltaLog
        latest = DeltaLog(str(path)).latest_version()
        state = verify_history(path, ops.ops_by_version_single_writer(entries, latest),
                               random.Random(run))
        log_dir = path / "_delta_log"
        totals["versions"] += latest
        totals["checkpoints"] += len(list(log_dir.glob("*.checkpoint.parquet")))
        totals["tmp"] += len(list(log_dir.glob(".*.tmp")))
        totals["kills_mid_op"] += "op" in entries[-1] if entries else 0
        totals["orphans"] += vacuum_then_append(path, state)["orphans"]
    # the kills landed in many places: mid-operation in most runs, some leaving orphaned files
    assert totals["kills_mid_op"] >= KERNEL_RUNS // 2, totals
    assert totals["orphans"] > 0 and totals["checkpoints"] > KERNEL_RUNS, totals
    print(f"\n{KERNEL_RUNS} kernel kills: {totals}")


def test_spark_writers_killed_at_random_moments(tmp_path):
    rng = random.Random(7)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1"}
    staged = 0
    committed: dict[str, int] = {}
    for run in range(SPARK_RUNS):
        path = tmp_path / f"s{run}"
        journal = tmp_path / f"s{run}.journal"
        ready = tmp_path / f"s{run}.ready"
        ops.create(path, checkpoint_interval=2)
        with open(tmp_path / f"s{run}.log", "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, str(WORKERS_SCRIPT), "spark", str(path), str(journal),
                 str(run), str(ready)], stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True)          # its own process group: the JVM dies with it
            try:
                deadline = time.time() + 300
                while not ready.exists():
                    assert proc.poll() is None, (tmp_path / f"s{run}.log").read_text()[-3000:]
                    assert time.time() < deadline, "Spark writer never became ready"
                    time.sleep(0.05)
                time.sleep(rng.uniform(0.2, 6.0))
                assert proc.poll() is None, (tmp_path / f"s{run}.log").read_text()[-3000:]
            finally:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        entries = ops.read_journal(journal)
        from sqlext.log.table import DeltaLog
        latest = DeltaLog(str(path)).latest_version()
        assert latest >= 1
        by_version = ops.ops_by_version_single_writer(entries, latest)
        state = verify_history(path, by_version, random.Random(run))
        for op in by_version.values():
            committed[op["kind"]] = committed.get(op["kind"], 0) + 1
        staged += vacuum_then_append(path, state)["staging"]
    print(f"\n{SPARK_RUNS} Spark kills; committed operations {committed}; staging files "
          f"collected by VACUUM: {staged}")
