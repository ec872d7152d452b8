"""DELETE and UPDATE: sqlext against the physical floor, plain Spark and deltalake, same run.

Tables (built once, untimed, by ``sqlext.write``; the change feed on, sqlext's default; a copy
of ``ranged`` with the change feed off, as the floor writes no change data):

  ranged       ``--rows`` rows (10 million) in ``--files`` files (100), each file one contiguous
               range of ``id`` (``spark.range`` partitions), so min/max statistics single out
               the file a narrow ``id`` range lives in. Columns id, k, v, s.
  parted       partitioned by ``part``: ``--rows / 10`` rows in ``--files`` partitions, then
  parted10x    ``--rows`` rows in ``10 * --files`` partitions (the table grown 10x), one file per
               partition.

Workloads (each run uses another file / partition, so the table keeps its shape; the order of
the contenders alternates between runs; the median and the best of ``--runs`` are reported):

  DELETE one file   ``DELETE WHERE id >= a AND id < a + 100`` (100 rows of one file) with
                    sqlext, against
                      floor: Spark reading just that parquet file and writing it back without
                        the 100 rows (no log, no statistics, no change feed): target <= 1.5x,
                        judged on the copy without the change feed (like for like);
                      whole: Spark reading every file of the table and writing it back without
                        the rows (what a table format without file skipping does): speed-up;
                      deltalake: ``DeltaTable.delete`` of the same predicate (ratio).
  UPDATE one file   ``UPDATE SET v = v + 1 WHERE id >= a AND id < a + 100`` with sqlext, against
                    the floor (read the file, update in a projection, write it) and deltalake's
                    ``DeltaTable.update``.
  partition DELETE  ``DELETE WHERE part = n`` on ``parted`` and on ``parted10x``: a metadata-only
                    commit whose time should not grow with the table.

With ``--delta-spark``, delta-spark 4.4 (``bench/deltaspark_peer.py``: its own process, the same
Spark settings, timed inside that process) runs the same DELETE and UPDATE statements on copies
of ``ranged`` and ``ranged_nocdf`` (the same row ranges sqlext deletes and updates in its
copies), and the partition DELETEs on copies of ``parted`` and ``parted10x``.

    .venv/bin/python bench/delete_update.py [--rows 10000000 --files 100 --runs 5] [--delta-spark]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pyspark.sql import functions as F  # noqa: E402

import sqlext  # noqa: E402
from sqlext import DeltaTable  # noqa: E402
from sqlext.log.table import DeltaLog  # noqa: E402
from bench.merge import build_target, without_change_feed  # noqa: E402


def build_parted(spark, path: str, rows: int, partitions: int) -> None:
    df = spark.range(0, rows, 1, numPartitions=partitions).select(
        "id", (F.col("id") * 3).alias("v"),
        F.floor(F.col("id") * partitions / rows).cast("int").alias("part"))
    sqlext.write(df, path, partitionBy=["part"])


def file_holding(path: str, value: int):
    """The live add action whose id range holds ``value``."""
    for f in DeltaLog(path).snapshot().files:
        stats = f.parsed_stats()
        if stats["minValues"]["id"] <= value <= stats["maxValues"]["id"]:
            return f
    raise LookupError(value)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def timed_in(name: str, fn) -> float:
    """Seconds of ``fn``: delta-spark's contenders return their own (timed in its process)."""
    return fn() if "delta-spark" in name else timed(fn)


def rows_range(a: int) -> str:
    return f"id >= {a} AND id < {a + 100}"


def run(args) -> None:
    spark = sqlext.session()
    spark.sparkContext.setLogLevel("ERROR")
    root = tempfile.mkdtemp(prefix="bench-dml-", dir=args.dir)
    ranged, parted, parted10, plain = (os.path.join(root, n) for n in (
        "ranged", "parted", "parted10x", "ranged_nocdf"))
    scratch = os.path.join(root, "scratch")
    t0 = time.perf_counter()
    build_target(spark, ranged, args.rows, args.files)
    without_change_feed(ranged, plain)
    build_parted(spark, parted, args.rows // 10, args.files)
    build_parted(spark, parted10, args.rows, args.files * 10)
    print(f"tables built in {time.perf_counter() - t0:.0f} s under {root}; load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)

    from deltalake import DeltaTable as RsTable

    peer = ds_tables = None
    if args.delta_spark:
        from bench.deltaspark_peer import Peer, table
        peer = Peer(spark, os.path.join(root, "delta-spark.log"))
        ds_tables = {}
        for name, source in (("cdf", ranged), ("nocdf", plain), ("parted", parted),
                             ("parted10x", parted10)):
            ds_tables[name] = table(os.path.join(root, "ds_" + name))
            shutil.copytree(source, os.path.join(root, "ds_" + name))

    def ds(statement: str):
        return lambda: peer.timed_sql(statement)[0]

    per_file = args.rows // args.files
    times: dict[str, list[float]] = {k: [] for k in (
        "delete sqlext", "delete sqlext nocdf", "delete floor", "delete whole",
        "delete deltalake", "update sqlext", "update sqlext nocdf", "update floor",
        "update deltalake", "part delete", "part delete 10x")}
    if peer:
        times.update({k: [] for k in ("delete delta-spark", "delete delta-spark nocdf",
                                      "update delta-spark", "update delta-spark nocdf",
                                      "part delete delta-spark", "part delete 10x delta-spark")})
    dt = DeltaTable.forPath(spark, ranged)
    dt_plain = DeltaTable.forPath(spark, plain)
    for r in range(args.runs):
        # every contender gets a file of its own in every run: files 1.. and 50..
        a_sqlext = (1 + 4 * r) * per_file + 17
        a_rs = (2 + 4 * r) * per_file + 17
        target = file_holding(ranged, a_sqlext)
        file_path = DeltaLog(ranged).data_path(target.path)

        def floor_delete(a=a_sqlext, file_path=file_path):
            out = os.path.join(scratch, f"floor-{time.time_ns()}")
            spark.read.parquet(file_path).filter(~F.expr(rows_range(a))).write.parquet(out)

        def whole_delete(a=a_sqlext):
            out = os.path.join(scratch, f"whole-{time.time_ns()}")
            paths = [DeltaLog(ranged).data_path(f.path) for f in DeltaLog(ranged).snapshot().files]
            spark.read.parquet(*paths).filter(~F.expr(rows_range(a))).write.parquet(out)

        contenders = [("delete floor", floor_delete),
                      ("delete sqlext", lambda a=a_sqlext: dt.delete(rows_range(a))),
                      ("delete sqlext nocdf", lambda a=a_sqlext: dt_plain.delete(rows_range(a))),
                      ("delete deltalake", lambda a=a_rs: RsTable(ranged).delete(rows_range(a)))]
        if r < args.whole_runs:
            contenders.append(("delete whole", whole_delete))
        if peer:
            contenders += [
                ("delete delta-spark", ds(f"DELETE FROM {ds_tables['cdf']} WHERE {rows_range(a_sqlext)}")),
                ("delete delta-spark nocdf",
                 ds(f"DELETE FROM {ds_tables['nocdf']} WHERE {rows_range(a_sqlext)}"))]
        for name, fn in (contenders if r % 2 == 0 else contenders[::-1]):
            times[name].append(timed_in(name, fn))

        b_sqlext = (3 + 4 * r) * per_file + 17
        b_rs = (4 + 4 * r) * per_file + 17
        u_file = DeltaLog(ranged).data_path(file_holding(ranged, b_sqlext).path)

        def floor_update(b=b_sqlext, u_file=u_file):
            out = os.path.join(scratch, f"floor-u-{time.time_ns()}")
            df = spark.read.parquet(u_file)
            df.withColumn("v", F.when(F.expr(rows_range(b)), F.col("v") + 1)
                          .otherwise(F.col("v"))).write.parquet(out)

        contenders = [("update floor", floor_update),
                      ("update sqlext",
                       lambda b=b_sqlext: dt.update(rows_range(b), {"v": "v + 1"})),
                      ("update sqlext nocdf",
                       lambda b=b_sqlext: dt_plain.update(rows_range(b), {"v": "v + 1"})),
                      ("update deltalake", lambda b=b_rs: RsTable(ranged).update(
                          updates={"v": "v + 1"}, predicate=rows_range(b)))]
        if peer:
            contenders += [
                ("update delta-spark",
                 ds(f"UPDATE {ds_tables['cdf']} SET v = v + 1 WHERE {rows_range(b_sqlext)}")),
                ("update delta-spark nocdf",
                 ds(f"UPDATE {ds_tables['nocdf']} SET v = v + 1 WHERE {rows_range(b_sqlext)}"))]
        for name, fn in (contenders if r % 2 == 0 else contenders[::-1]):
            times[name].append(timed_in(name, fn))

        pairs = [("part delete", lambda n=r: DeltaTable.forPath(spark, parted).delete(
                     f"part = {n}")),
                 ("part delete 10x", lambda n=r: DeltaTable.forPath(spark, parted10).delete(
                     f"part = {n}"))]
        if peer:
            pairs += [("part delete delta-spark", ds(f"DELETE FROM {ds_tables['parted']} WHERE part = {r}")),
                      ("part delete 10x delta-spark",
                       ds(f"DELETE FROM {ds_tables['parted10x']} WHERE part = {r}"))]
        for name, fn in (pairs if r % 2 == 0 else pairs[::-1]):
            times[name].append(timed_in(name, fn))
        shutil.rmtree(scratch, ignore_errors=True)
        print(f"run {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items()
                                           if len(v) == r + 1)
              + f" (load {os.getloadavg()[0]:.1f})", flush=True)

    # both engines really deleted their 100 rows per run, and updated theirs (+1 on v)
    remaining = DeltaLog(ranged).snapshot().num_records
    assert remaining == args.rows - 200 * args.runs, remaining
    assert DeltaLog(plain).snapshot().num_records == args.rows - 100 * args.runs
    history = {row.version: row for row in dt.history().collect()}
    updates = [h for h in history.values()
               if h.operation == "UPDATE" and (h.engineInfo or "").startswith("sqlext")]
    assert len(updates) == args.runs and all(
        h.operationMetrics["numUpdatedRows"] == "100" for h in updates), updates
    if peer:  # delta-spark deleted and updated the same rows in its copies
        for name in ("ds_cdf", "ds_nocdf"):
            assert DeltaLog(os.path.join(root, name)).snapshot().num_records == \
                args.rows - 100 * args.runs, name
        peer.close()
    for label, pick in (("median", statistics.median), ("best", min)):
        report(args, {k: pick(v) for k, v in times.items() if v}, label)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


def report(args, med: dict[str, float], label: str) -> None:
    print(f"\n{args.rows:,} rows in {args.files} files; {label} of {args.runs} runs "
          f"(whole-table rewrite: {min(args.runs, args.whole_runs)})")
    for k, v in med.items():
        print(f"  {k:18s} {v:7.2f} s")
    print("ratios:")
    print(f"  DELETE one file   sqlext / floor      "
          f"{med['delete sqlext nocdf'] / med['delete floor']:.2f}x  (change feed off; target <= 1.5x)")
    print(f"  DELETE one file   sqlext / floor      "
          f"{med['delete sqlext'] / med['delete floor']:.2f}x  (change feed on)")
    if "delete whole" in med:
        print(f"  DELETE one file   whole / sqlext      "
              f"{med['delete whole'] / med['delete sqlext']:.1f}x faster than rewriting the table")
    print(f"  DELETE one file   sqlext / deltalake  "
          f"{med['delete sqlext'] / med['delete deltalake']:.2f}x")
    print(f"  UPDATE one file   sqlext / floor      "
          f"{med['update sqlext nocdf'] / med['update floor']:.2f}x  (change feed off)")
    print(f"  UPDATE one file   sqlext / floor      "
          f"{med['update sqlext'] / med['update floor']:.2f}x  (change feed on)")
    print(f"  UPDATE one file   sqlext / deltalake  "
          f"{med['update sqlext'] / med['update deltalake']:.2f}x")
    print(f"  partition DELETE  10x table / table   "
          f"{med['part delete 10x'] / med['part delete']:.2f}x")
    if "delete delta-spark" in med:
        for op, suffix, note in (("delete", "", "change feed on"), ("delete", " nocdf", "change feed off"),
                                 ("update", "", "change feed on"), ("update", " nocdf", "change feed off"),
                                 ("part delete", "", "partition"), ("part delete 10x", "", "partition, 10x")):
            print(f"  {op.upper():17s} sqlext / delta-spark "
                  f"{med[f'{op} sqlext{suffix}' if 'part' not in op else op] / med[f'{op} delta-spark{suffix}']:.2f}x  ({note})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--whole-runs", type=int, default=2,
                        help="runs that also time the whole-table rewrite (slow)")
    parser.add_argument("--dir", default=None, help="where to build the tables (default: tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the tables afterwards")
    parser.add_argument("--delta-spark", action="store_true",
                        help="also time delta-spark (.venv-delta, a second process)")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
