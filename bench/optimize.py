"""OPTIMIZE (compaction) of 1,000 small files, against rewriting the same files with plain Spark.

The table: ``--rows`` (1,000,000) rows of ``id long, val double, s string`` in ``--files``
(1,000) files, written by sqlext. A first, untimed round warms the JVM up; then each timed run
works on a fresh copy:

- sqlext: ``DeltaTable.optimize().executeCompaction()`` (one bin: read the 1,000 files, write one
  file, collect its statistics, commit dataChange=false adds/removes);
- plain Spark (the floor): ``spark.read.parquet(<the 1,000 files>).coalesce(1).write.parquet`` to a
  new directory (no log, no statistics);
- deltalake: ``DeltaTable.optimize.compact()`` (delta-rs, same table), as a second peer;
- delta-spark (with ``--delta-spark``): ``OPTIMIZE delta.`<copy>``` by delta-spark 4.4 in its own
  process with the same Spark settings, timed there (``bench/deltaspark_peer.py``).

    .venv/bin/python bench/optimize.py [--files 1000 --rows 1000000 --runs 3] [--delta-spark]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import sqlext  # noqa: E402
from sqlext import DeltaTable  # noqa: E402
from sqlext.log.cache import LOG_CACHE  # noqa: E402
from sqlext.log.table import DeltaLog  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delta-spark", action="store_true",
                        help="also time delta-spark (.venv-delta, a second process)")
    args = parser.parse_args()
    spark = sqlext.session(master="local[2]", **{"spark.sql.shuffle.partitions": "2"})
    root = tempfile.mkdtemp(prefix="sqlext-bench-optimize-")
    template = os.path.join(root, "template")
    df = spark.range(0, args.rows).selectExpr("id", "rand(7) AS val", "concat('s', id % 997) AS s")
    sqlext.write(df.repartition(args.files), template)
    files = DeltaLog(template).snapshot().files
    size = sum(f.size for f in files)
    print(f"table: {len(files)} files, {size / 1e6:.1f} MB, {args.rows} rows; "
          f"load average {os.getloadavg()[0]:.1f}")

    def sqlext_optimize(path):
        LOG_CACHE.clear()
        result = DeltaTable.forPath(spark, path).optimize().executeCompaction().collect()[0]
        assert result.metrics.numFilesRemoved == len(files) and result.metrics.numFilesAdded == 1

    def plain_spark(path):
        paths = [os.path.join(path, f.path) for f in files]
        spark.read.parquet(*paths).coalesce(1).write.parquet(os.path.join(path, "_rewritten"))

    def deltalake_compact(path):
        from deltalake import DeltaTable as RsTable
        metrics = RsTable(path).optimize.compact()
        assert metrics["numFilesRemoved"] == len(files), metrics

    contenders = {"sqlext": sqlext_optimize, "plain Spark": plain_spark,
                  "deltalake": deltalake_compact}
    peer = None
    if args.delta_spark:
        from bench.deltaspark_peer import Peer, table
        peer = Peer(spark, os.path.join(root, "delta-spark.log"))

        def delta_spark_optimize(path):
            seconds, rows = peer.timed_sql(f"OPTIMIZE {table(path)}")
            assert rows[0]["metrics"]["numFilesRemoved"] == len(files), rows
            return seconds

        contenders["delta-spark"] = delta_spark_optimize
    times: dict[str, list[float]] = {name: [] for name in contenders}
    try:
        for run in range(-1, args.runs):          # run -1 warms the JVM up and is not counted
            for name, fn in contenders.items():
                copy = os.path.join(root, f"run{run}-{name.replace(' ', '_')}")
                shutil.copytree(template, copy)
                start = time.perf_counter()
                own = fn(copy)                    # delta-spark's time, taken in its process
                if run >= 0:
                    times[name].append(own if own is not None else time.perf_counter() - start)
                shutil.rmtree(copy)
    finally:
        if peer:
            peer.close()
        shutil.rmtree(root, ignore_errors=True)
    best = {name: min(t) for name, t in times.items()}
    print(f"\nOPTIMIZE of {len(files)} small files (best of {args.runs}; all runs "
          f"{ {k: [round(x, 2) for x in v] for k, v in times.items()} }):")
    for name, t in best.items():
        print(f"  {name:12s} {t:7.2f} s   sqlext/{name} = {best['sqlext'] / t:.2f}x")


if __name__ == "__main__":
    main()
