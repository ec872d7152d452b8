"""The fixed cost of a small MERGE on the driver path: two code versions, alternating, same run.

Each version runs in its own worker process (its own SparkSession, ``PYTHONPATH`` pointing at
that version's checkout) on its own copy of a ``--rows`` (2,000) row, ``--files`` (10) file table
(``id`` bigint even, ``v`` string, ``n`` bigint, as ``bench/small_statements.py``). The driver
sends each worker batches of ``--batch`` MERGEs of 10 source rows (5 updates, 5 inserts in one
file's id range, ``WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *``) in turn until
each ran ``--merges``; it reports, per version, the median ms per MERGE and the py4j round trips
(``send_command`` calls) per MERGE. Both final tables must hold the same rows.

    .venv/bin/python bench/merge_fixed_cost.py --old /tmp/merge_old [--new .] [--merges 50]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _count_round_trips() -> list[int]:
    """Count py4j commands sent to the JVM (one round trip each)."""
    from py4j import clientserver, java_gateway
    count = [0]
    for cls in (clientserver.ClientServerConnection, java_gateway.GatewayConnection):
        original = cls.send_command

        def counted(self, command, _original=original, **kwargs):
            count[0] += 1
            return _original(self, command, **kwargs)
        cls.send_command = counted
    return count


def merge_sql(table: str, i: int, rows: int, files: int) -> str:
    """MERGE number ``i``: 5 updates and 5 inserts in one starting file's id range."""
    per_file = rows // files
    j, m = i % files, i // files
    base = 2 * (j * per_file + (10 * m) % max(per_file - 10, 1))
    values = [(base + 2 * k, f"m{i}", 100 + k) for k in range(5)]
    values += [(base + 2 * k + 1, f"m{i}", 200 + k) for k in range(5)]
    text = ", ".join(f"({k}, '{v}', {n})" for k, v, n in values)
    return (f"MERGE INTO {table} AS t USING (SELECT * FROM VALUES {text} AS s(id, v, n)) AS s "
            "ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")


def worker(path: str, rows: int, files: int) -> None:
    """Build the table, then run the MERGEs the driver asks for (``<first> <count>`` a line),
    answering each batch with the ms and round trips of each MERGE; ``final``: the rows."""
    import sqlext
    from pyspark.sql import functions as F
    spark = sqlext.session(**{"spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("ERROR")
    sqlext.write(spark.range(0, rows, 1, numPartitions=files).select(
        (F.col("id") * 2).alias("id"), F.concat(F.lit("v"), F.col("id").cast("string")).alias("v"),
        F.lit(0).cast("long").alias("n")), path)
    table = f"delta.`{path}`"
    count = _count_round_trips()
    for i in range(-5, 0):      # warm up on the same table (ids far from the timed ones)
        sqlext.sql(spark, merge_sql(table, 10 * rows - i, rows, files))
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "final":
            out = sorted(tuple(r) for r in sqlext.read(spark, path).select("id", "v", "n")
                         .collect())
            print(json.dumps(out), flush=True)
            return
        first, n = map(int, line.split())
        result = []
        for i in range(first, first + n):
            before, t0 = count[0], time.perf_counter()
            sqlext.sql(spark, merge_sql(table, i, rows, files))
            result.append(((time.perf_counter() - t0) * 1000, count[0] - before))
        print(json.dumps(result), flush=True)


def _start(code: str, path: str, args) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(code))
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--worker", path, "--rows", str(args.rows),
         "--files", str(args.files)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True, cwd=tempfile.gettempdir())
    while proc.stdout.readline().strip() != "ready":
        if proc.poll() is not None:
            raise SystemExit(f"worker for {code} failed")
    return proc


def _ask(proc: subprocess.Popen, line: str):
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="checkout of the old code (required)")
    parser.add_argument("--new", default=os.path.dirname(HERE), help="checkout of the new code")
    parser.add_argument("--merges", type=int, default=50)
    parser.add_argument("--batch", type=int, default=5)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.rows, args.files)
        return
    if not args.old:
        parser.error("--old is required")
    work = tempfile.mkdtemp(prefix="sqlext-bench-merge-cost-")
    versions = {"old": args.old, "new": args.new}
    procs = {name: _start(code, os.path.join(work, name), args)
             for name, code in versions.items()}
    results: dict[str, list] = {name: [] for name in versions}
    load = [os.getloadavg()[0]]
    for first in range(0, args.merges, args.batch):
        n = min(args.batch, args.merges - first)
        for name, proc in procs.items():
            results[name] += _ask(proc, f"{first} {n}")
        load.append(os.getloadavg()[0])
    finals = {name: _ask(proc, "final") for name, proc in procs.items()}
    for proc in procs.values():
        proc.wait()
    print(f"{args.merges} MERGEs of 10 rows into {args.rows} rows / {args.files} files, "
          f"batches of {args.batch} alternating; load {min(load):.1f}-{max(load):.1f}")
    for name, rows in results.items():
        print(f"{name:4} ({versions[name]}): median {statistics.median(r[0] for r in rows):.1f} ms,"
              f" py4j round trips median {statistics.median(r[1] for r in rows):.0f}")
    if finals["old"] != finals["new"]:
        raise SystemExit("the final tables differ")
    print("final tables equal")


if __name__ == "__main__":
    main()
