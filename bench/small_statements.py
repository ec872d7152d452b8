"""Small statements on a warm session: sqlext against delta-rs and plain Spark parquet, same run.

A loop of ``--statements`` (200) statements, cycling through five kinds, on a table of
``--rows`` (2,000) rows in ``--files`` (10) files (columns ``id`` bigint, ``v`` string, ``n``
bigint; even ids ``0, 2, ..., 2 * rows - 2``, each file one contiguous id range):

  INSERT   3 new rows (ids above the table's)
  UPDATE   ``SET n = n + 1 WHERE id = <one existing id>`` (one row; ids divisible by 4)
  DELETE   ``WHERE id = <one existing id>`` (one row; ids 2 mod 4, each deleted once)
  MERGE    10 source rows: 5 update existing ids of one file, 5 insert odd ids in that file's
           range (``WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *``)
  SELECT   ``SELECT * FROM t VERSION AS OF <current - 3>``, collected

Contenders (each on its own copy of the same starting table, after ``--warmup`` untimed
statements of each kind on a throw-away copy):

  sqlext     ``sqlext.sql(spark, <statement>)``; a SELECT's result is collected
  deltalake  ``write_deltalake(mode="append")``, ``DeltaTable.update``, ``DeltaTable.delete``,
             ``DeltaTable.merge`` (``streamed_exec=False``),
             ``DeltaTable(path, version=v).to_pyarrow_table()``
  plain      Spark on a directory of parquet files (floor: no log, no versions): INSERT =
             ``df.write.mode("append").parquet``; UPDATE / MERGE = read the one file that holds
             the rows (known in advance), update / full-outer-join in Spark, write it back, delete
             the old file; SELECT = read the directory and collect
  delta-spark (with ``--delta-spark``) the same SQL statements as sqlext, in delta-spark 4.4's own
             process (``bench/deltaspark_peer.py``), each timed inside that process

Checks: the final tables hold the same rows (id, v, n) in all of them; every time-travel SELECT
returns the same number of rows in sqlext, deltalake (and delta-spark). Reports statements per second and the
ratios; with ``--breakdown``, sqlext's time per statement kind split into planning (prepare,
parse, resolve, plan: no Spark job), snapshot loads, commits and the rest, and the number of
Spark jobs each kind runs (``statusTracker().getJobIdsForGroup``).

    .venv/bin/python bench/small_statements.py [--statements 200] [--breakdown] [--delta-spark]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pyarrow as pa  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import sqlext  # noqa: E402
from sqlext.log.table import DeltaLog  # noqa: E402

KINDS = ("INSERT", "UPDATE", "DELETE", "MERGE", "SELECT")


# --- the workload: the same statements for every engine ----------------------------------------


class Workload:
    """The deterministic statement sequence (statement ``i`` is the same for every engine)."""

    def __init__(self, rows: int, files: int):
        self.rows, self.files = rows, files
        self.per_file = rows // files
        self.next_id = 2 * rows          # INSERT ids start above the table's
        self.merges = 0

    def statement(self, i: int) -> tuple:
        kind = KINDS[i % len(KINDS)]
        if kind == "INSERT":
            ids = list(range(self.next_id, self.next_id + 3))
            self.next_id += 3
            return kind, [(k, f"ins{i}", 0) for k in ids]
        if kind == "UPDATE":   # ids 0 mod 4: never deleted
            return kind, 4 * ((i * 37) % (self.rows // 2))
        if kind == "DELETE":   # ids 2 mod 4, distinct for each i (37 is prime to rows // 2)
            return kind, 4 * ((i * 37) % (self.rows // 2)) + 2
        if kind == "MERGE":
            j = self.merges % self.files               # one file of the starting table
            m = self.merges // self.files              # how often that file was merged before
            self.merges += 1
            base = 2 * (j * self.per_file + (10 * m) % max(self.per_file - 10, 1))
            updates = [(base + 2 * k, f"m{i}", 100 + k) for k in range(5)]
            inserts = [(base + 2 * k + 1, f"m{i}", 200 + k) for k in range(5)]
            return kind, updates + inserts
        return kind, None

    def file_of(self, key: int) -> int:
        """The starting file whose id range holds ``key``."""
        return min(key // (2 * self.per_file), self.files - 1)


def values_sql(rows) -> str:
    return ", ".join(f"({k}, '{v}', {n})" for k, v, n in rows)


def sql_statement(table: str, kind: str, arg, version: int) -> str:
    """The SQL text of one statement (sqlext and delta-spark run the same text)."""
    if kind == "INSERT":
        return f"INSERT INTO {table} VALUES {values_sql(arg)}"
    if kind == "UPDATE":
        return f"UPDATE {table} SET n = n + 1 WHERE id = {arg}"
    if kind == "DELETE":
        return f"DELETE FROM {table} WHERE id = {arg}"
    if kind == "MERGE":
        return (f"MERGE INTO {table} AS t USING (SELECT * FROM VALUES {values_sql(arg)} "
                "AS s(id, v, n)) AS s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    return f"SELECT * FROM {table} VERSION AS OF {max(version - 3, 0)}"


def arrow(rows) -> pa.Table:
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int64()),
                     "v": pa.array([r[1] for r in rows], pa.string()),
                     "n": pa.array([r[2] for r in rows], pa.int64())})


# --- contenders --------------------------------------------------------------------------------


class Sqlext:
    name = "sqlext"

    def __init__(self, spark, path: str):
        self.spark, self.path = spark, path
        self.t = f"delta.`{path}`"
        self.version = DeltaLog(path).snapshot().version
        self.selected: list[int] = []

    def run(self, kind: str, arg) -> None:
        if kind == "SELECT":
            rows = sqlext.sql(self.spark, sql_statement(self.t, kind, arg, self.version)).collect()
            self.selected.append(len(rows))
            return
        else:
            sqlext.sql(self.spark, sql_statement(self.t, kind, arg, self.version))
        self.version += 1

    def final(self) -> list:
        return sorted(tuple(r) for r in sqlext.read(self.spark, self.path)
                      .select("id", "v", "n").collect())


class DeltaRs:
    name = "deltalake"

    def __init__(self, path: str):
        from deltalake import DeltaTable
        self.path = path
        self.dt = DeltaTable(path)
        self.selected: list[int] = []

    def run(self, kind: str, arg) -> None:
        from deltalake import DeltaTable, write_deltalake
        if kind == "INSERT":
            write_deltalake(self.dt, arrow(arg), mode="append")
            self.dt.update_incremental()
        elif kind == "UPDATE":
            self.dt.update(predicate=f"id = {arg}", updates={"n": "n + 1"})
        elif kind == "DELETE":
            self.dt.delete(f"id = {arg}")
        elif kind == "MERGE":
            (self.dt.merge(arrow(arg), predicate="t.id = s.id", source_alias="s",
                           target_alias="t", streamed_exec=False)
             .when_matched_update_all().when_not_matched_insert_all().execute())
        else:
            version = max(self.dt.version() - 3, 0)
            self.selected.append(DeltaTable(self.path, version=version).to_pyarrow_table()
                                 .num_rows)

    def final(self) -> list:
        from deltalake import DeltaTable
        t = DeltaTable(self.path).to_pyarrow_table(columns=["id", "v", "n"])
        return sorted(zip(*(t.column(c).to_pylist() for c in ("id", "v", "n"))))


class PlainSpark:
    """The floor: a directory of parquet files, the files a statement touches known in advance."""

    name = "plain"

    def __init__(self, spark, path: str, workload: Workload, starting: list[str]):
        self.spark, self.path, self.workload = spark, path, workload
        os.makedirs(path)
        self.by_range: dict[int, str] = {}
        for j, src in enumerate(starting):   # starting files in id order: file j = range j
            dst = os.path.join(path, f"part-start-{j:05d}.parquet")
            shutil.copyfile(src, dst)
            self.by_range[j] = dst
        self.scratch = path + "-scratch"
        self.counter = 0

    def source(self, rows):
        return self.spark.sql("SELECT CAST(id AS BIGINT) AS id, v, CAST(n AS BIGINT) AS n "
                              f"FROM VALUES {values_sql(rows)} AS s(id, v, n)")

    def rewrite(self, j: int, df) -> None:
        """Write ``df`` as the new file of range ``j`` and delete the old one."""
        self.counter += 1
        out = f"{self.scratch}/{self.counter}"
        df.coalesce(1).write.parquet(out)
        (new,) = glob.glob(f"{out}/part-*.parquet")
        final = os.path.join(self.path, f"part-r{self.counter:06d}.parquet")
        os.replace(new, final)
        shutil.rmtree(out)
        os.remove(self.by_range[j])
        self.by_range[j] = final

    def run(self, kind: str, arg) -> None:
        spark = self.spark
        if kind == "INSERT":
            self.source(arg).write.mode("append").parquet(self.path)
        elif kind == "UPDATE":
            j = self.workload.file_of(arg)
            df = spark.read.parquet(self.by_range[j])
            self.rewrite(j, df.withColumn(
                "n", F.when(F.col("id") == arg, F.col("n") + 1).otherwise(F.col("n"))))
        elif kind == "DELETE":
            j = self.workload.file_of(arg)
            self.rewrite(j, spark.read.parquet(self.by_range[j]).where(F.col("id") != arg))
        elif kind == "MERGE":
            j = self.workload.file_of(arg[0][0])
            t = spark.read.parquet(self.by_range[j]).alias("t")
            s = self.source(arg).alias("s")
            joined = t.join(s, F.col("t.id") == F.col("s.id"), "full_outer")
            self.rewrite(j, joined.select(
                *[F.coalesce(F.col(f"s.{c}"), F.col(f"t.{c}")).alias(c) for c in ("id", "v", "n")]))
        else:
            spark.read.parquet(self.path).collect()

    def final(self) -> list:
        return sorted(tuple(r) for r in self.spark.read.parquet(self.path)
                      .select("id", "v", "n").collect())


class DeltaSparkPeer:
    """delta-spark 4.4 in its own process, running sqlext's SQL text; only the time inside that
    process counts (the pipe between the processes is left out)."""

    name = "delta-spark"

    def __init__(self, peer, path: str):
        from bench.deltaspark_peer import table
        self.peer, self.path, self.t = peer, path, table(path)
        self.version = DeltaLog(path).snapshot().version
        self.selected: list[int] = []
        self.seconds = 0.0

    def run(self, kind: str, arg) -> None:
        statement = sql_statement(self.t, kind, arg, self.version)
        seconds, count = self.peer.timed_code(f"value = len(spark.sql({statement!r}).collect())")
        self.seconds += seconds
        if kind == "SELECT":
            self.selected.append(count)
        else:
            self.version += 1

    def final(self) -> list:
        _, rows = self.peer.timed_code(
            f"value = [tuple(r) for r in spark.sql('SELECT id, v, n FROM {self.t}').collect()]")
        return sorted(tuple(r) for r in rows)


# --- sqlext's breakdown -------------------------------------------------------------------------


class Breakdown:
    """Time spent in named functions (wrapped in place) and Spark jobs, per statement kind."""

    def __init__(self, spark):
        self.spark = spark
        self.kind = None
        self.times: dict[str, dict[str, float]] = collections.defaultdict(
            lambda: collections.defaultdict(float))
        self.jobs: dict[str, list[int]] = collections.defaultdict(list)
        self.total: dict[str, list[float]] = collections.defaultdict(list)
        self.depth = 0

    def wrap(self, owner, attr: str, phase: str) -> None:
        original = getattr(owner, attr)
        tracker = self

        def timed(*args, **kwargs):
            if tracker.depth or tracker.kind is None:
                return original(*args, **kwargs)
            tracker.depth += 1
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                tracker.times[tracker.kind][phase] += time.perf_counter() - start
                tracker.depth -= 1
        setattr(owner, attr, timed)

    @contextlib.contextmanager
    def statement(self, i: int, kind: str):
        group = f"small-{i}"
        self.spark.sparkContext.setJobGroup(group, group)
        self.kind = kind
        start = time.perf_counter()
        try:
            yield
        finally:
            self.total[kind].append(time.perf_counter() - start)
            self.kind = None
            self.jobs[kind].append(
                len(self.spark.sparkContext.statusTracker().getJobIdsForGroup(group)))

    def report(self) -> None:
        phases = sorted({p for per in self.times.values() for p in per})
        print("\nsqlext per statement kind (mean ms per statement; jobs = Spark jobs):")
        print(f"{'kind':8}{'count':>6}{'total':>9}" + "".join(f"{p:>10}" for p in phases)
              + f"{'other':>9}{'jobs':>6}")
        for kind in KINDS:
            count = len(self.total[kind])
            if not count:
                continue
            total = sum(self.total[kind]) / count * 1000
            parts = [self.times[kind][p] / count * 1000 for p in phases]
            jobs = statistics.mean(self.jobs[kind])
            print(f"{kind:8}{count:>6}{total:>9.1f}" + "".join(f"{x:>10.1f}" for x in parts)
                  + f"{total - sum(parts):>9.1f}{jobs:>6.1f}")


def install_breakdown(spark) -> Breakdown:
    """Wrap the phases of sqlext's statement path (planning, snapshot load, commit)."""
    from sqlext.log import table as log_table
    from sqlext.log import transaction
    from sqlext.sql import runner
    b = Breakdown(spark)
    b.wrap(runner, "plan_statement", "plan")
    b.wrap(runner, "parse_statements", "parse")
    b.wrap(log_table.DeltaLog, "snapshot", "snapshot")
    b.wrap(transaction.Transaction, "commit", "commit")
    return b


# --- driver -------------------------------------------------------------------------------------


def build_table(spark, path: str, rows: int, files: int) -> None:
    df = spark.range(0, rows, 1, numPartitions=files).select(
        (F.col("id") * 2).alias("id"), F.concat(F.lit("v"), F.col("id").cast("string")).alias("v"),
        F.lit(0).cast("long").alias("n"))
    sqlext.write(df, path)


def starting_files(path: str) -> list[str]:
    files = DeltaLog(path).snapshot().files
    return [os.path.join(path, f.path) for f in
            sorted(files, key=lambda f: f.parsed_stats()["minValues"]["id"])]


def loop(engine, workload: Workload, statements: int, breakdown: Breakdown | None = None,
         kind_times: dict | None = None) -> float:
    """Run ``statements`` statements on ``engine``: seconds in all (for delta-spark, the seconds
    timed inside its process)."""
    start = time.perf_counter()
    own = getattr(engine, "seconds", None)
    for i in range(statements):
        kind, arg = workload.statement(i)
        t0 = time.perf_counter() if own is None else engine.seconds
        if breakdown is not None:
            with breakdown.statement(i, kind):
                engine.run(kind, arg)
        else:
            engine.run(kind, arg)
        if kind_times is not None:
            kind_times[kind].append(time.perf_counter() - t0 if own is None
                                    else engine.seconds - t0)
    return time.perf_counter() - start if own is None else engine.seconds - own


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=200)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=12,
                        help="untimed statements per engine on a throw-away copy first")
    parser.add_argument("--breakdown", action="store_true",
                        help="sqlext's time per kind split into phases, and its Spark jobs")
    parser.add_argument("--keep", help="work directory (default: a temporary one, removed)")
    parser.add_argument("--delta-spark", action="store_true",
                        help="also run the loop on delta-spark 4.4 (.venv-delta, a second process)")
    args = parser.parse_args()

    work = args.keep or tempfile.mkdtemp(prefix="sqlext-bench-small-")
    os.makedirs(work, exist_ok=True)
    spark = sqlext.session(**{"spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("ERROR")
    base = os.path.join(work, "base")
    if not os.path.exists(base):
        build_table(spark, base, args.rows, args.files)
    starting = starting_files(base)
    print(f"table: {args.rows} rows in {len(starting)} files; {args.statements} statements; "
          f"{load()}")

    peer = None
    if args.delta_spark:
        from bench.deltaspark_peer import Peer
        peer = Peer(spark, os.path.join(work, "delta-spark.log"))

    def engines(tag: str, workload: Workload) -> list:
        for name in ("sqlext", "deltalake", "plain", "delta-spark"):
            shutil.rmtree(os.path.join(work, f"{tag}-{name}"), ignore_errors=True)
            shutil.rmtree(os.path.join(work, f"{tag}-{name}-scratch"), ignore_errors=True)
        shutil.copytree(base, os.path.join(work, f"{tag}-sqlext"))
        shutil.copytree(base, os.path.join(work, f"{tag}-deltalake"))
        found = [Sqlext(spark, os.path.join(work, f"{tag}-sqlext")),
                 DeltaRs(os.path.join(work, f"{tag}-deltalake")),
                 PlainSpark(spark, os.path.join(work, f"{tag}-plain"), workload, starting)]
        if peer is not None:
            shutil.copytree(base, os.path.join(work, f"{tag}-delta-spark"))
            found.append(DeltaSparkPeer(peer, os.path.join(work, f"{tag}-delta-spark")))
        return found

    for engine in engines("warm", Workload(args.rows, args.files)):
        loop(engine, Workload(args.rows, args.files), args.warmup)

    breakdown = install_breakdown(spark) if args.breakdown else None
    results = {}
    per_kind = {}
    workload = Workload(args.rows, args.files)
    contenders = engines("run", workload)
    for engine in contenders:
        times = collections.defaultdict(list)
        wl = Workload(args.rows, args.files)
        if isinstance(engine, PlainSpark):
            engine.workload = wl
        results[engine.name] = loop(engine, wl, args.statements,
                                    breakdown if engine.name == "sqlext" else None, times)
        per_kind[engine.name] = times
        print(f"  {engine.name:10} {results[engine.name]:8.2f} s  {load()}")

    finals = {e.name: e.final() for e in contenders}
    same = all(rows == finals["sqlext"] for rows in finals.values())
    selects = all(e.selected == contenders[0].selected for e in contenders
                  if not isinstance(e, PlainSpark))
    print(f"final tables equal: {same} ({len(finals['sqlext'])} rows); "
          f"time-travel SELECT row counts equal (sqlext, deltalake"
          f"{', delta-spark' if peer else ''}): {selects}")

    print(f"\n{'engine':12}{'total s':>9}{'stmt/s':>9}{'sqlext / it':>13}")
    for name, total in results.items():
        print(f"{name:12}{total:>9.2f}{args.statements / total:>9.1f}"
              f"{results['sqlext'] / total:>12.2f}x")
    print("\nmedian ms per statement kind:")
    print(f"{'kind':8}" + "".join(f"{n:>13}" for n in results)
          + "".join(f"{'/' + n:>14}" for n in results if n != "sqlext"))
    for kind in KINDS:
        med = {n: statistics.median(per_kind[n][kind]) * 1000 for n in results
               if per_kind[n][kind]}
        if not med:
            continue
        print(f"{kind:8}" + "".join(f"{med[n]:>13.1f}" for n in results)
              + "".join(f"{med['sqlext'] / med[n]:>13.2f}x" for n in results if n != "sqlext"))
    if breakdown is not None:
        breakdown.report()
    if peer is not None:
        peer.close()
    if not (same and selects):
        sys.exit("results differ")
    spark.stop()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
