"""Concurrency: four processes mix appends, deletes, updates and merges on one table for a bounded
time. Every operation either commits or fails with a typed conflict error; every commit in the
log belongs to exactly one operation; each version equals replaying the committed operations in
version order (Serializable isolation), so no row is lost or duplicated."""

from __future__ import annotations

import multiprocessing
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from sqlext import errors
from sqlext.log.table import DeltaLog
from tests.support import fault_ops as ops
from tests.faults.verify import verify_history
from tests.faults.workers import kernel_writer
from tests.support.kernel_tables import clear_caches

TYPED_CONFLICTS = {name for name in dir(errors)
                   if isinstance(getattr(errors, name), type)
                   and issubclass(getattr(errors, name), errors.ConcurrentModificationException)}
WORKERS_SCRIPT = Path(__file__).with_name("workers.py")


def _outcomes(journals: list[Path]) -> tuple[dict[int, dict], Counter]:
    """version -> operation for every committed operation, and counts of outcomes by kind."""
    by_version: dict[int, dict] = {}
    counts: Counter = Counter()
    for journal in journals:
        pending = None
        for entry in ops.read_journal(journal):
            if "op" in entry:
                assert pending is None, f"{journal}: an operation without an outcome"
                pending = entry["op"]
                continue
            assert pending is not None
            kind = pending["kind"]
            if entry.get("conflict"):
                assert entry["conflict"] in TYPED_CONFLICTS, entry
                counts[f"{kind}:{entry['conflict']}"] += 1
            elif entry["done"] is None:
                counts[f"{kind}:no-op"] += 1
            else:
                assert entry["done"] not in by_version, f"version {entry['done']} claimed twice"
                by_version[entry["done"]] = pending
                counts[f"{kind}:committed"] += 1
            pending = None
        assert pending is None, f"{journal}: the last operation has no outcome"
    return by_version, counts


def _check(path, journals: list[Path]) -> Counter:
    by_version, counts = _outcomes(journals)
    clear_caches()
    latest = DeltaLog(str(path)).latest_version()
    assert sorted(by_version) == list(range(1, latest + 1)), "commits without an operation"
    state = verify_history(path, by_version, random.Random(1), deltalake_versions=2)
    ids = [r[0] for r in ops.rows_at(DeltaLog(str(path)))]
    assert len(ids) == len(set(ids)) == len(state)
    return counts


def test_four_kernel_processes(tmp_path):
    path = tmp_path / "t"
    ops.create(path, checkpoint_interval=5)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["pandas", "pyarrow.parquet", "sqlext.log.table",
                                "sqlext.log.transaction",
                                "tests.faults.workers"])
    go = tmp_path / "go"
    journals, procs = [], []
    for w in range(4):
        journal, ready = tmp_path / f"w{w}.journal", tmp_path / f"w{w}.ready"
        journals.append(journal)
        proc = ctx.Process(target=kernel_writer,
                           args=(str(path), str(journal), 100 + w, w + 1, str(ready), str(go), 8.0))
        proc.start()
        procs.append((proc, ready))
    for proc, ready in procs:
        ops.wait_for(ready, timeout=120)
    go.touch()
    for proc, _ in procs:
        proc.join(timeout=300)
        assert proc.exitcode == 0, f"a writer failed (exit {proc.exitcode})"
    counts = _check(path, journals)
    print(f"\nfour kernel writers: {dict(sorted(counts.items()))}")
    for kind in ("append", "delete", "update", "merge"):
        assert counts[f"{kind}:committed"] > 0, counts
    assert sum(n for k, n in counts.items() if "Concurrent" in k) > 0, counts


def test_spark_writer_among_kernel_writers(tmp_path):
    """One process runs sqlext's DELETE / UPDATE / MERGE / write on Spark while three kernel
    writers change the same table."""
    path = tmp_path / "t"
    ops.create(path, checkpoint_interval=5)
    go = tmp_path / "go"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1"}
    spark_journal, spark_ready = tmp_path / "spark.journal", tmp_path / "spark.ready"
    with open(tmp_path / "spark.log", "wb") as out:
        spark = subprocess.Popen([sys.executable, str(WORKERS_SCRIPT), "spark", str(path),
                                  str(spark_journal), "5", str(spark_ready), "9", str(go), "25"],
                                 stdout=out, stderr=subprocess.STDOUT, env=env,
                                 start_new_session=True)
    try:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["pandas", "pyarrow.parquet", "sqlext.log.table",
                                    "sqlext.log.transaction", "tests.faults.workers"])
        journals, procs = [spark_journal], []
        for w in range(3):
            journal, ready = tmp_path / f"w{w}.journal", tmp_path / f"w{w}.ready"
            journals.append(journal)
            # kernel writers pause between operations so that the Spark writer's slower
            # transactions sometimes get through
            proc = ctx.Process(target=kernel_writer,
                               args=(str(path), str(journal), 200 + w, w + 1, str(ready), str(go),
                                     25.0, 0.3))
            proc.start()
            procs.append((proc, ready))
        deadline = time.time() + 600
        while not spark_ready.exists():
            assert spark.poll() is None, (tmp_path / "spark.log").read_text()[-3000:]
            assert time.time() < deadline
            time.sleep(0.1)
        for proc, ready in procs:
            ops.wait_for(ready, timeout=120)
        go.touch()
        for proc, _ in procs:
            proc.join(timeout=300)
            assert proc.exitcode == 0
        assert spark.wait(timeout=600) == 0, (tmp_path / "spark.log").read_text()[-3000:]
    finally:
        if spark.poll() is None:
            os.killpg(spark.pid, 9)
            spark.wait()
    counts = _check(path, journals)
    spark_outcomes = _outcomes([spark_journal])[1]
    print(f"\nSpark writer: {dict(spark_outcomes)}; all: {dict(sorted(counts.items()))}")
    # besides its first append, the Spark writer ran operations that committed, found nothing
    # to change, or lost to a kernel writer with a typed conflict (checked in _outcomes)
    assert sum(spark_outcomes.values()) >= 2, spark_outcomes

