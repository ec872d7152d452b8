"""SQL front overhead: parse, resolve and plan each statement of the corpus (no Spark execution).

For every statement of ``tests/sql/corpus/*.sql`` (run in order, so the tables each statement
names exist), the time ``sqlext.sql`` spends before Spark runs anything: parsing with the sqlext
dialect, resolving table references through the catalog, planning (rewritten tree, bound reads,
rendered SQL). The statement is then executed (not timed) to move the scenario on.

Peer, in the same run: Spark's own SQL parser (``sessionState.sqlParser.parsePlan``, no analysis)
on the SQL the statement hands to Spark. Target: median rewrite under 5 ms.

    .venv/bin/python bench/sql_rewrite.py [--repeat 5] [--only queries,dml]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5,
                        help="plan each statement this many times; its time is the median")
    parser.add_argument("--only", help="comma-separated scenario names (default: all)")
    args = parser.parse_args()

    import sqlext
    from sqlext.catalog import Catalog
    from sqlext.engine.session import prepare
    from sqlext.errors import SqlextError
    from sqlext.sql.parse import parse_statements
    from sqlext.sql.resolve import Resolver
    from sqlext.sql.runner import execute, plan_statement
    from tests.sql.corpus import commit_time_of, load, scenario_files, substitute

    work = Path(tempfile.mkdtemp(prefix="sqlext-bench-rewrite-"))
    spark = sqlext.session(**{"spark.sql.warehouse.dir": str(work / "warehouse"),
                              "spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("OFF")
    from pyspark.logger import PySparkLogger
    PySparkLogger.getLogger("SQLQueryContextLogger").disabled = True
    spark_parser = spark._jsparkSession.sessionState().sqlParser()
    commit_time = commit_time_of(spark)
    only = set(args.only.split(",")) if args.only else None

    ours: list[float] = []
    peer: list[float] = []
    by_kind: dict[str, list[float]] = {}
    started = time.time()
    for path in scenario_files():
        if only and path.stem not in only:
            continue
        schema = f"corpus_{path.stem}"
        Catalog(spark).create_schema(schema)
        spark.catalog.setCurrentDatabase(schema)
        for case in load(path):
            sql = substitute(case.sql, str(work / path.stem), commit_time)
            samples, plans = [], None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                try:
                    prepare(spark)
                    resolver = Resolver(spark)
                    plans = [(resolver, s, plan_statement(resolver, s))
                             for s in parse_statements(sql)]
                except SqlextError:
                    plans = None      # an error case: planning is where it fails
                samples.append((time.perf_counter() - t0) * 1000)
            ms = statistics.median(samples)
            ours.append(ms)
            kind = sql.split(None, 1)[0].upper()
            by_kind.setdefault(kind, []).append(ms)
            handed = [p.sql for _, _, p in plans or [] if p.sql] or [sql]
            peer_samples = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                for text in handed:
                    try:
                        spark_parser.parsePlan(text)
                    except Exception:  # noqa: BLE001 - statements Spark alone cannot parse
                        pass
                peer_samples.append((time.perf_counter() - t0) * 1000)
            peer.append(statistics.median(peer_samples))
            if plans is not None:
                for resolver, stmt, _ in plans:
                    try:
                        execute(resolver, stmt)
                    except SqlextError:
                        pass
        spark.catalog.setCurrentDatabase("default")

    print(f"statements: {len(ours)}  (repeat {args.repeat}, wall {time.time() - started:.0f} s "
          "including execution)")
    print(f"{'':24}{'median ms':>10}{'p99 ms':>10}{'max ms':>10}")
    rows = [("sqlext parse+resolve+plan", ours), ("Spark parsePlan (peer)", peer)]
    for name, values in rows:
        print(f"{name:24}{statistics.median(values):>10.2f}{percentile(values, 0.99):>10.2f}"
              f"{max(values):>10.2f}")
    print(f"ratio median sqlext / Spark parser: "
          f"{statistics.median(ours) / max(statistics.median(peer), 1e-9):.1f}x")
    print(f"target median < 5 ms: {'met' if statistics.median(ours) < 5 else 'NOT met'}")
    print("\nby statement kind (median ms, count):")
    for kind, values in sorted(by_kind.items(), key=lambda kv: -len(kv[1])):
        print(f"  {kind:12}{statistics.median(values):>8.2f}{len(values):>6}")
    spark.stop()


if __name__ == "__main__":
    main()
