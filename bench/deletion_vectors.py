"""DELETE with deletion vectors against copy-on-write, same run (issue 16).

Tables (built once, untimed, by ``sqlext.write``): ``--rows`` rows (10 million) in ``--files``
files (100), each file one contiguous range of ``id`` (so min/max statistics single out the
file), columns id, k, v, s; copies with ``delta.enableDeletionVectors=true`` (``ALTER TABLE ...
SET TBLPROPERTIES``), with the change feed on (sqlext's default) and off.

Workload: ``DELETE WHERE id >= a AND id < a + 100``, 100 rows of one file, on each table; every
run deletes from another file of each table (so no file gets a second vector, the usual case);
the order of the contenders alternates between runs; median and best of ``--runs``.

  cow      copy-on-write: the file is rewritten without the 100 rows
  dv       deletion vectors: the 100 rows marked, one deletion vector file written; the
           condition is in the subset whose rows the driver finds by itself
           (sqlext.engine.dml.local_match: pyarrow reads the id column of the one candidate)
  dv job   the same with that turned off (spark.sqlext.delete.localMatchMaxBytes=0): one Spark
           job finds the rows, as for any other condition (change feed on)

Target (issue 16): the deletion vector DELETE at most a fifth of the copy-on-write time.

    .venv/bin/python bench/deletion_vectors.py [--rows 10000000 --files 100 --runs 5]
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

import sqlext  # noqa: E402
from sqlext import DeltaTable  # noqa: E402
from sqlext.log.table import DeltaLog  # noqa: E402
from bench.delete_update import rows_range  # noqa: E402
from bench.merge import build_target, without_change_feed  # noqa: E402
from sqlext.engine.dml.local_match import MAX_BYTES_CONF  # noqa: E402


def run(args) -> None:
    spark = sqlext.session()
    spark.sparkContext.setLogLevel("ERROR")
    root = tempfile.mkdtemp(prefix="bench-dv-", dir=args.dir)
    cow, cow_plain = os.path.join(root, "cow"), os.path.join(root, "cow_nocdf")
    dv, dv_plain = os.path.join(root, "dv"), os.path.join(root, "dv_nocdf")
    dv_job = os.path.join(root, "dv_job")
    t0 = time.perf_counter()
    build_target(spark, cow, args.rows, args.files)
    without_change_feed(cow, cow_plain)
    for source, target in ((cow, dv), (cow_plain, dv_plain), (cow, dv_job)):
        shutil.copytree(source, target)
        sqlext.sql(spark, f"ALTER TABLE delta.`{target}` SET TBLPROPERTIES "
                          "('delta.enableDeletionVectors' = 'true')")
    print(f"tables built in {time.perf_counter() - t0:.0f} s under {root}; load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)

    per_file = args.rows // args.files
    tables = {"cow": cow, "cow nocdf": cow_plain, "dv": dv, "dv nocdf": dv_plain,
              "dv job": dv_job}
    handles = {k: DeltaTable.forPath(spark, p) for k, p in tables.items()}
    times: dict[str, list[float]] = {k: [] for k in tables}
    def delete(name: str, condition: str) -> None:
        if name == "dv job":
            spark.conf.set(MAX_BYTES_CONF, "0")
        try:
            handles[name].delete(condition)
        finally:
            spark.conf.unset(MAX_BYTES_CONF)

    # a warm-up statement per table (first-use costs: JIT, caches), not timed
    for name in handles:
        delete(name, rows_range(17))
    for r in range(args.runs):
        contenders = list(handles.items())
        for i, (name, _) in enumerate(contenders if r % 2 == 0 else contenders[::-1]):
            a = (1 + r) * per_file + 17 + 1000 * (i + 1)
            start = time.perf_counter()
            delete(name, rows_range(a))
            times[name].append(time.perf_counter() - start)
        print(f"run {r + 1}: " + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in times.items())
              + f" (load {os.getloadavg()[0]:.1f})", flush=True)

    # every table lost its 100 rows per run (and the warm-up's); the vector tables rewrote
    # no data file
    for name, path in tables.items():
        snapshot = DeltaLog(path).snapshot()
        assert snapshot.num_records == args.rows - 100 * (args.runs + 1), name
        if name.startswith("dv"):
            assert len(snapshot.files) == args.files, name
            assert sum(1 for f in snapshot.files if f.deletion_vector) == args.runs + 1, name
    for label, pick in (("median", statistics.median), ("best", min)):
        med = {k: pick(v) for k, v in times.items()}
        print(f"\n{args.rows:,} rows in {args.files} files; {label} of {args.runs} runs")
        for k, v in med.items():
            print(f"  {k:10s} {v:7.3f} s")
        print(f"  dv / cow  {med['dv'] / med['cow']:.2f}x (change feed on), "
              f"{med['dv nocdf'] / med['cow nocdf']:.2f}x (off); target <= 0.20x")
        print(f"  dv job / cow  {med['dv job'] / med['cow']:.2f}x (change feed on)")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", default=None, help="where to build the tables (default: tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the tables")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
