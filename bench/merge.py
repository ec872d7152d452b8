"""MERGE (upsert): sqlext against deltalake's merge and against the physical floor, same run.

The target (built once, untimed, by ``sqlext.write``): ``--rows`` rows (10 million) in ``--files``
files (100), each file one contiguous range of ``id`` (``spark.range`` partitions). Columns id,
k, v, s. Two copies: the change feed on (sqlext's default) and off.

The source (a parquet file): ``--source`` rows (100,000): half update existing ids, spread over
1% of the files (every other id of those files, from the middle of the table), half insert new
ids above the table's. The MERGE is::

    MERGE INTO t USING s ON t.id = s.id
    WHEN MATCHED THEN UPDATE SET *  WHEN NOT MATCHED THEN INSERT *

Contenders (each run on a fresh copy of the table; copying is not timed; the order alternates
between runs; the median of ``--runs`` is reported, after ``--warmup`` untimed rounds):

  sqlext     ``DeltaTable.forPath(...).merge(spark.read.parquet(source), ...)`` ... ``execute()``
  deltalake  ``deltalake.DeltaTable(...).merge(pyarrow source, ...)`` with the same clauses
             (``streamed_exec=False``, so that delta-rs may prune the target by the source's key
             range; the source is read from parquet inside the timing)
  floor      plain Spark reading just the touched file(s) and the source, joining them (full
             outer: updates and inserts) and writing parquet: no log, no statistics, no change
             data, and the touched files known in advance

  delta-spark  (with ``--delta-spark``) delta-spark 4.4 on pyspark 4.2, in its own process with
             the same Spark settings (``bench/deltaspark_peer.py``): the same MERGE in SQL with the
             source read from the parquet file, timed inside its process

Targets: sqlext / deltalake at most 2x (goal: faster); sqlext / floor at most 1.5x, compared
with the change feed off (the floor writes no change data).

    .venv/bin/python bench/merge.py [--rows 10000000 --files 100 --source 100000 --runs 3 --warmup 3]
                                    [--delta-spark]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import sqlext  # noqa: E402
from sqlext import DeltaTable  # noqa: E402
from sqlext.log.table import DeltaLog  # noqa: E402

CONDITION = "t.id = s.id"


def build_target(spark, path: str, rows: int, files: int) -> None:
    df = spark.range(0, rows, 1, numPartitions=files).select(
        "id", (F.col("id") % 97).cast("int").alias("k"),
        ((F.col("id") * 7919) % 1000003).cast("double").alias("v"),
        F.concat(F.lit("name-"), (F.col("id") % 1000).cast("string")).alias("s"))
    sqlext.write(df, path)


def without_change_feed(source: str, path: str) -> None:
    """A copy of the table with ``delta.enableChangeDataFeed=false`` (one metadata commit)."""
    shutil.copytree(source, path)
    log = DeltaLog(path)
    txn = log.start_transaction()
    md = txn.snapshot.metadata
    txn.update_metadata(dataclasses.replace(
        md, configuration={**md.configuration, "delta.enableChangeDataFeed": "false"}))
    txn.commit([], "SET TBLPROPERTIES", {"properties": {"delta.enableChangeDataFeed": "false"}})


def touched_files(path: str, rows: int, files: int) -> list:
    """The add actions of 1% of the files (at least one), taken from the middle of the table."""
    adds = sorted(DeltaLog(path).snapshot().files,
                  key=lambda f: f.parsed_stats()["minValues"]["id"])
    n = max(1, files // 100)
    middle = len(adds) // 2
    return adds[middle:middle + n]


def build_source(path: str, touched: list, rows: int, size: int) -> None:
    """Half updates (every other id of the touched files), half inserts (new ids)."""
    updates = []
    for f in touched:
        stats = f.parsed_stats()
        updates.extend(range(stats["minValues"]["id"], stats["maxValues"]["id"] + 1, 2))
    updates = updates[:size // 2]
    inserts = list(range(rows, rows + size - len(updates)))
    ids = updates + inserts
    table = pa.table({
        "id": pa.array(ids, pa.int64()),
        "k": pa.array([i % 89 for i in ids], pa.int32()),
        "v": pa.array([float(-i) for i in ids], pa.float64()),
        "s": pa.array([f"merged-{i % 1000}" for i in ids], pa.string())})
    pq.write_table(table, path)


def run_sqlext(spark, path: str, source: str) -> dict:
    src = spark.read.parquet(source).alias("s")
    row = (DeltaTable.forPath(spark, path).alias("t").merge(src, CONDITION)
           .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute().collect()[0])
    return row.asDict()


def run_deltalake(path: str, source: str) -> dict:
    import deltalake
    metrics = (deltalake.DeltaTable(path)
               .merge(pq.read_table(source), CONDITION, source_alias="s", target_alias="t",
                      streamed_exec=False)
               .when_matched_update_all().when_not_matched_insert_all().execute())
    return {"num_updated_rows": metrics.get("num_target_rows_updated"),
            "num_inserted_rows": metrics.get("num_target_rows_inserted")}


def run_floor(spark, table: str, touched: list, source: str, out: str) -> None:
    t = spark.read.parquet(*[os.path.join(table, f.path) for f in touched]).alias("t")
    s = spark.read.parquet(source).alias("s")
    matched = F.col("s.id").isNotNull()
    joined = t.join(s, F.col("t.id") == F.col("s.id"), "full_outer")
    joined.select(*[F.when(matched, F.col(f"s.{c}")).otherwise(F.col(f"t.{c}")).alias(c)
                    for c in ("id", "k", "v", "s")]).write.mode("overwrite").parquet(out)


def run_delta_spark(peer, path: str, source: str) -> float:
    """The same MERGE in delta-spark; seconds timed in its process."""
    from bench.deltaspark_peer import parquet, table
    seconds, _ = peer.timed_sql(
        f"MERGE INTO {table(path)} t USING {parquet(source)} s ON {CONDITION} "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    return seconds


def fresh_copy(base: str, path: str) -> str:
    """A copy of a table at a new path (the kernel caches snapshots by location)."""
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(base, path)
    return path


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def summary(path: str) -> tuple:
    """(rows, sum of v, distinct ids) of the table, by DuckDB's delta extension."""
    from tests.support import duckdb_query
    t = duckdb_query("SELECT count(*) AS n, sum(v) AS v, count(DISTINCT id) AS d "
                     "FROM delta_scan($p)", {"p": os.path.abspath(path)})
    return tuple(t.to_pylist()[0].values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--source", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3,
                        help="untimed rounds of sqlext and the floor on both tables first")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--delta-spark", action="store_true",
                        help="also time delta-spark (.venv-delta, a second process)")
    args = parser.parse_args()

    spark = sqlext.session()
    spark.sparkContext.setLogLevel("ERROR")
    work = args.workdir or tempfile.mkdtemp(prefix="sqlext-bench-merge-")
    base_cdf, base_plain = os.path.join(work, "base_cdf"), os.path.join(work, "base_plain")
    source = os.path.join(work, "source.parquet")
    start = time.perf_counter()
    if not os.path.exists(base_cdf):
        build_target(spark, base_cdf, args.rows, args.files)
    if not os.path.exists(base_plain):
        without_change_feed(base_cdf, base_plain)
    touched = touched_files(base_cdf, args.rows, args.files)
    build_source(source, touched, args.rows, args.source)
    print(f"tables: {args.rows:,} rows in {args.files} files; source {args.source:,} rows "
          f"({len(touched)} touched file(s)); built in {time.perf_counter() - start:.1f}s; "
          f"work dir {work}", flush=True)

    peer = None
    if args.delta_spark:
        from bench.deltaspark_peer import Peer
        peer = Peer(spark, os.path.join(work, "delta-spark.log"))

    # warm-up (untimed): the JVM compiles Spark's hot paths over the first jobs
    for _ in range(args.warmup):
        for base in (base_plain, base_cdf):
            warm = fresh_copy(base, os.path.join(work, "warmup"))
            run_sqlext(spark, warm, source)
            run_floor(spark, warm, touched, source, os.path.join(work, "floor_out"))
            if peer:
                shutil.rmtree(warm, ignore_errors=True)
                run_delta_spark(peer, fresh_copy(base, warm), source)
            shutil.rmtree(warm, ignore_errors=True)

    times: dict[str, list[float]] = {k: [] for k in (
        "sqlext cdf", "deltalake cdf", "sqlext", "deltalake", "floor")}
    if peer:
        times.update({"delta-spark cdf": [], "delta-spark": []})
    results: dict[str, tuple] = {}

    def fresh(base: str, name: str) -> str:
        return fresh_copy(base, os.path.join(work, name))

    contenders = [
        ("sqlext cdf", base_cdf, lambda p: run_sqlext(spark, p, source)),
        ("deltalake cdf", base_cdf, lambda p: run_deltalake(p, source)),
        ("sqlext", base_plain, lambda p: run_sqlext(spark, p, source)),
        ("deltalake", base_plain, lambda p: run_deltalake(p, source)),
        ("floor", base_plain, lambda p: run_floor(spark, p, touched, source,
                                                 os.path.join(work, "floor_out"))),
    ]
    if peer:
        contenders += [("delta-spark cdf", base_cdf, lambda p: run_delta_spark(peer, p, source)),
                       ("delta-spark", base_plain, lambda p: run_delta_spark(peer, p, source))]
    for run in range(args.runs):
        order = contenders if run % 2 == 0 else contenders[::-1]
        for name, base, fn in order:
            path = fresh(base, f"run{run}-{name.replace(' ', '-')}")
            seconds, out = timed(lambda: fn(path))
            if name.startswith("delta-spark"):
                seconds = out  # timed inside delta-spark's process
            times[name].append(seconds)
            if run == 0 and name != "floor":
                results[name] = summary(path)
            print(f"  run {run + 1} {name:14s} {seconds:8.2f}s", flush=True)
            shutil.rmtree(path, ignore_errors=True)
    expected = results["sqlext"]
    assert all(r == expected for r in results.values()), results

    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"\nmedian of {args.runs} (load average {os.getloadavg()[0]:.1f}):")
    for k, v in med.items():
        print(f"  {k:14s} {v:8.2f}s")
    ratios = {"sqlext/deltalake (cdf on)": med["sqlext cdf"] / med["deltalake cdf"],
              "sqlext/deltalake (cdf off)": med["sqlext"] / med["deltalake"],
              "sqlext/floor (cdf off)": med["sqlext"] / med["floor"],
              "sqlext cdf on/floor": med["sqlext cdf"] / med["floor"]}
    if peer:
        ratios["sqlext/delta-spark (cdf on)"] = med["sqlext cdf"] / med["delta-spark cdf"]
        ratios["sqlext/delta-spark (cdf off)"] = med["sqlext"] / med["delta-spark"]
        peer.close()
    for k, v in ratios.items():
        print(f"  {k:28s} {v:6.2f}x")
    print(json.dumps({"rows": args.rows, "files": args.files, "source": args.source,
                      "median_s": med, "ratios": ratios}))
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
