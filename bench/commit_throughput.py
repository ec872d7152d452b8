"""Commit throughput: small appends by 1, 2 and 4 concurrent writer processes on one table.

Kernel level: each writer writes a one-row parquet file with pyarrow and commits it as a blind
append through ``sqlext.log`` (put-if-absent ``N.json``; on losing a race the kernel checks the
winners and retries at the next version; a checkpoint every 10 versions). Peer: the same appends
with delta-rs (``write_deltalake(mode="append")``), which also commits with put-if-absent on a
local disk; delta-rs gives up on a commit after 15 lost races (and sometimes fails reading a
commit another writer is creating), so its writer retries a failed write and counts it. Writers
start together (after their imports) and each makes ``--commits`` commits;
commits/s is all commits over the wall time until the last writer finishes.

Spark level: one process appending a one-row DataFrame with ``sqlext.write``, against plain
Spark ``df.write.mode("append").parquet`` (no log: the floor).

    .venv/bin/python bench/commit_throughput.py [--commits 100 --spark-commits 20]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _wait(go: Path) -> None:
    while not go.exists():
        time.sleep(0.001)


def sqlext_writer(path: str, commits: int, go: str, out: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from sqlext.log.actions import AddFile
    from sqlext.log.table import DeltaLog
    log = DeltaLog(path)
    log.snapshot()
    Path(out + ".ready").touch()
    _wait(Path(go))
    retries = 0
    for i in range(commits):
        rel = f"part-00000-{uuid.uuid4()}.c000.snappy.parquet"
        pq.write_table(pa.table({"id": [i]}), os.path.join(path, rel))
        size = os.path.getsize(os.path.join(path, rel))
        txn = log.start_transaction()
        txn.commit([AddFile(rel, {}, size, int(time.time() * 1000))], "WRITE",
                   {"mode": "Append"})
        retries += txn.attempts - 1
    Path(out).write_text(json.dumps({"retries": retries, "end": time.time()}))


def deltalake_writer(path: str, commits: int, go: str, out: str) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake
    Path(out + ".ready").touch()
    _wait(Path(go))
    failures = 0
    done = 0
    while done < commits:
        try:
            write_deltalake(path, pa.table({"id": pa.array([done], pa.int64())}), mode="append")
            done += 1
        except Exception:  # noqa: BLE001 - delta-rs gives up under contention; counted, retried
            failures += 1
            assert failures < 10 * commits
    Path(out).write_text(json.dumps({"retries": failures, "end": time.time()}))


def create_tables(root: str) -> tuple[str, str]:
    import pyarrow as pa
    from deltalake import write_deltalake
    from sqlext.log.actions import Metadata
    from sqlext.log.protocol import protocol_for_new_table
    from sqlext.log.schema import Field, schema_string
    from sqlext.log.table import DeltaLog
    ours, theirs = os.path.join(root, "sqlext"), os.path.join(root, "deltalake")
    txn = DeltaLog(ours).start_transaction()
    txn.update_protocol(protocol_for_new_table({}))
    txn.update_metadata(Metadata.new(schema_string([Field("id", "long")]), [], {},
                                     int(time.time() * 1000)))
    txn.commit([], "CREATE TABLE")
    write_deltalake(theirs, pa.table({"id": pa.array([], pa.int64())}), mode="append")
    return ours, theirs


def run_writers(target, path: str, writers: int, commits: int, root: str) -> dict:
    ctx = multiprocessing.get_context("forkserver")
    go = os.path.join(root, f"go-{uuid.uuid4().hex}")
    outs = [os.path.join(root, f"out-{uuid.uuid4().hex}") for _ in range(writers)]
    procs = [ctx.Process(target=target, args=(path, commits, go, out)) for out in outs]
    for p in procs:
        p.start()
    for out in outs:
        _wait(Path(out + ".ready"))
    start = time.time()
    Path(go).touch()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    results = [json.loads(Path(out).read_text()) for out in outs]
    elapsed = max(r["end"] for r in results) - start
    retries = None if results[0]["retries"] is None else sum(r["retries"] for r in results)
    return {"commits_per_s": writers * commits / elapsed, "seconds": elapsed, "retries": retries}


def spark_level(commits: int, root: str) -> dict:
    import sqlext
    spark = sqlext.session(master="local[2]", **{"spark.sql.shuffle.partitions": "1"})
    df = spark.range(1).selectExpr("id")
    out = {}
    for name, fn in (("sqlext.write", lambda p: sqlext.write(df, p)),
                     ("plain Spark append", lambda p: df.write.mode("append").parquet(p))):
        path = os.path.join(root, f"spark-{name.split()[0]}")
        fn(path)                                      # warm-up, not timed
        start = time.perf_counter()
        for _ in range(commits):
            fn(path)
        out[name] = commits / (time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=100, help="commits per writer")
    parser.add_argument("--spark-commits", type=int, default=20)
    parser.add_argument("--writers", default="1,2,4")
    args = parser.parse_args()
    multiprocessing.get_context("forkserver").set_forkserver_preload(
        ["pyarrow.parquet", "pandas", "sqlext.log.table", "sqlext.log.transaction", "deltalake"])
    print(f"load average {os.getloadavg()[0]:.1f}")
    rows = []
    for writers in [int(w) for w in args.writers.split(",")]:
        root = tempfile.mkdtemp(prefix="sqlext-bench-commits-")
        try:
            ours, theirs = create_tables(root)
            a = run_writers(sqlext_writer, ours, writers, args.commits, root)
            b = run_writers(deltalake_writer, theirs, writers, args.commits, root)
            from sqlext.log.table import DeltaLog
            assert DeltaLog(ours).latest_version() == writers * args.commits
            rows.append((writers, a, b))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\nkernel-level blind appends, {args.commits} commits per writer:")
    print("  writers  sqlext commits/s (kernel retries)  deltalake commits/s (failed writes)"
          "  sqlext/deltalake")
    for writers, a, b in rows:
        print(f"  {writers:7d}  {a['commits_per_s']:16.1f} ({a['retries']:4d})         "
              f"{b['commits_per_s']:19.1f} ({b['retries']:4d})        "
              f"{a['commits_per_s'] / b['commits_per_s']:8.2f}x")
    root = tempfile.mkdtemp(prefix="sqlext-bench-commits-")
    try:
        spark = spark_level(args.spark_commits, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\nSpark level, one writer, {args.spark_commits} appends of one row:")
    for name, rate in spark.items():
        print(f"  {name:20s} {rate:6.2f} commits/s")
    print(f"  sqlext.write / plain Spark = "
          f"{spark['sqlext.write'] / spark['plain Spark append']:.2f}x the rate")


if __name__ == "__main__":
    main()
