"""Structured Streaming: sink and source throughput and commit-to-row latency, sqlext vs
delta-spark 4.4 in the same run (issue 28).

Both engines run the same PySpark code (:data:`WORKLOAD`), delta-spark's way: sqlext on this
process's session after ``sqlext.install(spark)``, delta-spark in its own process on pyspark 4.2
(``bench/deltaspark_peer.py``, the same Spark settings). Each times itself inside its process.

  sink      ``--rows`` rows (10 million by default) in ``--batches`` parquet files (100), read as
            a stream one file per trigger (``maxFilesPerTrigger`` 1) and written by
            ``writeStream.format("delta")`` with ``Trigger.AvailableNow``: one micro-batch, one
            commit per file
  source    the table the sink wrote, read back by ``readStream.format("delta")`` one file per
            trigger (so as many micro-batches) into Spark's ``noop`` sink, ``AvailableNow``
  latency   a running query (``Trigger.ProcessingTime("0 seconds")``, foreachBatch noting when
            each row arrives) over a small table; ``--commits`` single-row appends, one at a
            time: the time from the append's commit (its ``_delta_log`` file's modification
            time) to its row reaching the query

A small untimed round of the same workload warms each JVM up first. Reported: each engine's
times, rows/s, the ratios sqlext / delta-spark (target for throughput: at most 1.0) and the
latency medians.

    .venv/bin/python bench/streaming.py [--rows 10000000 --batches 100 --commits 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import sqlext  # noqa: E402

#: The benchmark, as a delta-spark user writes it; ``spark`` and the upper-case names are given.
#: It leaves its measurements in ``value``.
WORKLOAD = """
import os
import time

SCHEMA = "id BIGINT, v STRING, x DOUBLE, ts TIMESTAMP"
spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", "100000")
start = time.perf_counter()
sink = (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(INPUT)
        .writeStream.format("delta").option("checkpointLocation", ROOT + "/sink-checkpoint")
        .trigger(availableNow=True).start(TABLE))
sink.awaitTermination()
sink_seconds = time.perf_counter() - start
sink_batches = len(sink.recentProgress)

start = time.perf_counter()
source = (spark.readStream.format("delta").option("maxFilesPerTrigger", 1).load(TABLE)
          .writeStream.format("noop").option("checkpointLocation", ROOT + "/source-checkpoint")
          .trigger(availableNow=True).start())
source.awaitTermination()
source_seconds = time.perf_counter() - start
source_rows = sum(p["numInputRows"] for p in source.recentProgress)

spark.range(1).selectExpr("id", "'seed' AS v", "0D AS x", "current_timestamp() AS ts") \\
    .write.format("delta").save(ROOT + "/latency")
arrived = {}

def note(batch, batch_id):
    now = time.time()
    for row in batch.select("id").collect():
        arrived.setdefault(row.id, now)

query = (spark.readStream.format("delta").load(ROOT + "/latency").writeStream.foreachBatch(note)
         .option("checkpointLocation", ROOT + "/latency-checkpoint")
         .trigger(processingTime="0 seconds").start())
while 0 not in arrived:
    time.sleep(0.002)
latencies = []
for marker in range(1, COMMITS + 1):
    spark.range(marker, marker + 1).selectExpr("id", "'row' AS v", "1D AS x",
                                               "current_timestamp() AS ts") \\
        .write.format("delta").mode("append").save(ROOT + "/latency")
    # the commit's moment: its log file's modification time (a write returns only after its
    # post-commit work, which a running query does not wait for)
    log = ROOT + "/latency/_delta_log"
    newest = max(n for n in os.listdir(log) if n.endswith(".json"))
    committed = os.path.getmtime(os.path.join(log, newest))
    deadline = time.time() + 120
    while marker not in arrived and time.time() < deadline:
        time.sleep(0.002)
    latencies.append(arrived.get(marker, float("inf")) - committed)
query.stop()
table_rows = spark.read.format("delta").load(TABLE).count()
value = {"sink_seconds": sink_seconds, "sink_batches": sink_batches,
         "source_seconds": source_seconds, "source_rows": source_rows,
         "table_rows": table_rows, "latencies": latencies}
"""


def make_input(spark, path: str, rows: int, files: int) -> None:
    """``rows`` rows in ``files`` parquet files at ``path``: the stream's input."""
    (spark.range(0, rows, 1, files)
     .selectExpr("id", "concat('value-', id % 1000) AS v", "CAST(id AS DOUBLE) * 0.5D AS x",
                 "timestamp_seconds(1700000000 + id) AS ts")
     .write.parquet(path))


def bindings(root: str, input_path: str, commits: int) -> dict:
    """The names :data:`WORKLOAD` expects, for one engine's run in ``root``."""
    return {"ROOT": root, "INPUT": input_path, "TABLE": root + "/table", "COMMITS": commits}


def run_sqlext(spark, names: dict) -> dict:
    """:data:`WORKLOAD` on this process's sqlext-installed session."""
    scope = dict(names, spark=spark)
    exec(WORKLOAD, scope)   # noqa: S102 - the benchmark's own code
    return scope["value"]


def run_delta_spark(peer, names: dict) -> dict:
    """:data:`WORKLOAD` in delta-spark's process."""
    setup = "\n".join(f"{k} = {v!r}" for k, v in names.items())
    return peer.timed_code(WORKLOAD, setup=setup)[1]


def report(name: str, result: dict, rows: int) -> None:
    """One engine's line of results."""
    lat = sorted(result["latencies"])
    print(f"  {name:<12} sink {result['sink_seconds']:7.2f} s ({rows / result['sink_seconds']:,.0f}"
          f" rows/s, {result['sink_batches']} batches)  source {result['source_seconds']:7.2f} s"
          f" ({result['source_rows'] / result['source_seconds']:,.0f} rows/s)  latency median "
          f"{statistics.median(lat) * 1000:.0f} ms (min {lat[0] * 1000:.0f}, max "
          f"{lat[-1] * 1000:.0f})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--dir", default=None, help="where the temporary tables go")
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="bench-streaming-", dir=args.dir)
    spark = sqlext.session(master=args.master, **{"spark.driver.memory": "3g",
                                                  "spark.sql.warehouse.dir": f"{root}/wh"})
    sqlext.install(spark)
    from bench.deltaspark_peer import Peer
    peer = Peer(spark, os.path.join(root, "delta-spark.log"))
    try:
        make_input(spark, f"{root}/input", args.rows, args.batches)
        make_input(spark, f"{root}/warmup-input", 20_000, 4)
        results = {}
        for engine, run in (("sqlext", lambda n: run_sqlext(spark, n)),
                            ("delta-spark", lambda n: run_delta_spark(peer, n))):
            run(bindings(f"{root}/{engine}-warmup", f"{root}/warmup-input", 3))
            results[engine] = run(bindings(f"{root}/{engine}", f"{root}/input", args.commits))
            for key in ("table_rows", "source_rows"):
                assert results[engine][key] == args.rows, (engine, key, results[engine])
    finally:
        peer.close()
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)

    print(f"\nstreaming {args.rows:,} rows in {args.batches} micro-batches, master {args.master}, "
          f"{args.commits} latency commits, load {os.getloadavg()[0]:.1f}")
    for engine, result in results.items():
        report(engine, result, args.rows)
    ours, theirs = results["sqlext"], results["delta-spark"]
    print(f"  sqlext / delta-spark: sink {ours['sink_seconds'] / theirs['sink_seconds']:.2f}x, "
          f"source {ours['source_seconds'] / theirs['source_seconds']:.2f}x (target <= 1.0), "
          f"latency median {statistics.median(ours['latencies']) / statistics.median(theirs['latencies']):.2f}x")


if __name__ == "__main__":
    main()
