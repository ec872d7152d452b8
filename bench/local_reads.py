"""Benchmark (issue 30): SQL reads of a table on the driver path against Spark's scan, by table
size, to choose ``spark.sqlext.execution.localReadMaxBytes``.

    .venv/bin/python bench/local_reads.py [--rows 20000,100000,1000000] [--runs 5]

For each size a table of ``rows`` rows (id, a double, a short string; written by Spark's path)
is read by four queries (an aggregate, a GROUP BY, a point lookup, a time-travel LIMIT), each
timed alternately with ``spark.sqlext.execution.local=force`` (read on the driver into a local
relation) and ``off`` (the parquet scan); the first round is a warm-up. Prints the median of
each and their ratio. Both paths must return the same rows (checked).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import sqlext  # noqa: E402

MODE = "spark.sqlext.execution.local"


def measure(spark, rows: int, runs: int) -> None:
    """Print one table size's medians, driver path against the scan."""
    root = tempfile.mkdtemp(prefix="local_reads_")
    table = f"delta.`{root}/t`"
    try:
        spark.conf.set(MODE, "off")
        sqlext.sql(spark, f"CREATE TABLE {table} (id BIGINT, v DOUBLE, s STRING) USING delta")
        sqlext.sql(spark, f"INSERT INTO {table} SELECT id, id * 0.37, concat('s', id % 1000) "
                          f"FROM range({rows})")
        size = sum(os.path.getsize(os.path.join(root, "t", f))
                   for f in os.listdir(os.path.join(root, "t")) if f.endswith(".parquet"))
        print(f"{rows:,} rows, {size / 1e6:.2f} MB of parquet")
        queries = [f"SELECT count(*), sum(v) FROM {table}",
                   f"SELECT s, count(*) FROM {table} GROUP BY s ORDER BY s LIMIT 3",
                   f"SELECT * FROM {table} WHERE id = 5",
                   f"SELECT * FROM {table} VERSION AS OF 1 ORDER BY id LIMIT 10"]
        times: dict[tuple[str, str], list[float]] = {}
        for round_ in range(runs + 1):
            for mode in ("force", "off"):
                spark.conf.set(MODE, mode)
                for q in queries:
                    t = time.perf_counter()
                    got = sqlext.sql(spark, q).collect()
                    elapsed = time.perf_counter() - t
                    if round_:
                        times.setdefault((q, mode), []).append(elapsed)
                    else:
                        times.setdefault((q, "rows " + mode), got)
        for q in queries:
            assert times[(q, "rows force")] == times[(q, "rows off")], q
            local, scan = (statistics.median(times[(q, m)]) for m in ("force", "off"))
            print(f"  driver {local * 1000:7.0f} ms  scan {scan * 1000:7.0f} ms  "
                  f"{local / scan:5.2f}x  {q.replace(table, 't')}")
    finally:
        spark.conf.unset(MODE)
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="20000,100000,1000000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    spark = sqlext.session(**{"spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("ERROR")
    for rows in (int(r) for r in args.rows.split(",")):
        measure(spark, rows, args.runs)


if __name__ == "__main__":
    main()
