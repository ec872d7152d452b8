"""Snapshot load of a large Delta log: sqlext's kernel vs delta-rs (``deltalake``).

The log: one CREATE TABLE commit, then ``--commits`` commits of ``--adds`` add actions each
(300 x 1,000 = 300,000 files by default), partitioned by day, each add with a delta-spark-like
statistics string over 5 columns; the kernel writes a checkpoint every 10 commits. Data files
do not exist: a snapshot load never opens them.

Each timed load runs in a fresh Python process (imports done, caches empty), and times:
  sqlext     DeltaLog(path).snapshot(version) plus the list of file paths
  deltalake  DeltaTable(path, version=...) plus file_uris()          (the comparison of record)
  deltalake  DeltaTable(path, version=...) plus get_add_actions()    (also decodes the stats)
for the latest version (read from the checkpoint at 300 alone) and for version 299 (the
checkpoint at 290 plus 9 JSON commits of 1,000 adds). The engines take turns, run after run.

With ``--delta-spark``, delta-spark 4.4 (``bench/deltaspark_peer.py``: its own process on
pyspark 4.2, with sqlext's local session settings: local[2], shuffle partitions, driver memory)
loads the same versions too: ``DeltaLog.clearCache()`` (untimed), then
``spark.read.format("delta")[.option("versionAsOf", v)].load(path).inputFiles()`` timed in its
process. Its JVM stays up between loads (a JVM start costs 10-30 s) and gets one untimed load
first, so it loads with a warm JIT while sqlext loads in a fresh Python process.
Reported: the median and the best of ``--runs`` loads, and the ratio of the medians
sqlext / deltalake (below 1 means sqlext is faster).

    .venv/bin/python bench/snapshot_load.py [--commits 300 --adds 1000 --runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

DELTA_SPARK_SETUP = "spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()"
DELTA_SPARK_LOAD = """
reader = spark.read.format("delta")
if {version!r} is not None:
    reader = reader.option("versionAsOf", {version!r})
value = len(reader.load({path!r}).inputFiles())
"""


def _child(engine: str, path: str, version: int | None) -> None:
    if engine == "sqlext":
        import log_generator
        from sqlext.log.table import DeltaLog
        log_generator.clear_caches()
        start = time.perf_counter()
        snap = DeltaLog(path).snapshot(version)
        paths = [f.path for f in snap.files]
    else:
        import pyarrow as pa
        from deltalake import DeltaTable
        start = time.perf_counter()
        dt = DeltaTable(path, version=version)
        if engine == "deltalake":
            paths = dt.file_uris()
        else:
            paths = pa.table(dt.get_add_actions()).column("path").to_pylist()
    elapsed = time.perf_counter() - start
    print(json.dumps({"seconds": elapsed, "files": len(paths)}))


def _run(engine: str, path: str, version: int | None) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", engine, "--path", path]
    if version is not None:
        cmd += ["--version", str(version)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _delta_spark_load(peer, path: str, version: int | None) -> dict:
    seconds, files = peer.timed_code(DELTA_SPARK_LOAD.format(path=path, version=version),
                                     setup=DELTA_SPARK_SETUP)
    return {"seconds": seconds, "files": files}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commits", type=int, default=300)
    ap.add_argument("--adds", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--path", default=os.path.join(tempfile.gettempdir(), "sqlext-bench-snapshot-load"))
    ap.add_argument("--keep", action="store_true", help="keep the generated table")
    ap.add_argument("--child", choices=["sqlext", "deltalake", "deltalake-adds"])
    ap.add_argument("--version", type=int)
    ap.add_argument("--delta-spark", action="store_true",
                    help="also time delta-spark (.venv-delta, a second process)")
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.path, args.version)
        return

    import log_generator
    marker = os.path.join(args.path, f".generated-{args.commits}x{args.adds}")
    if not os.path.exists(marker):
        shutil.rmtree(args.path, ignore_errors=True)
        print(f"generating {args.commits} commits x {args.adds} adds at {args.path} ...", flush=True)
        secs = log_generator.generate(args.path, args.commits, args.adds)
        open(marker, "w").close()
        print(f"generated in {secs:.1f}s")
    log_dir = os.path.join(args.path, "_delta_log")
    n_files = len(os.listdir(log_dir))
    size_mb = sum(os.path.getsize(os.path.join(log_dir, f)) for f in os.listdir(log_dir)) / 1e6
    print(f"log: {n_files} files, {size_mb:.0f} MB; {args.commits * args.adds:,} add actions; "
          f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")

    last = args.commits
    targets = [("latest (checkpoint only)", None),
               (f"v{last - 1} (checkpoint {last - 10} + 9 commits)", last - 1)]
    engines = ["sqlext", "deltalake", "deltalake-adds"]
    peer = None
    if args.delta_spark:
        from bench.deltaspark_peer import Peer
        from sqlext.engine.session import LOCAL_DEFAULTS
        peer = Peer(settings=LOCAL_DEFAULTS,
                    log_path=os.path.join(tempfile.gettempdir(), "bench-snapshot-delta-spark.log"))
        engines.append("delta-spark")
        _delta_spark_load(peer, args.path, None)            # warm-up, untimed
    print(f"\n{'version':40s} {'engine':16s} {'median s':>9s} {'min s':>7s} {'files':>8s}")
    for label, version in targets:
        results: dict[str, list[dict]] = {e: [] for e in engines}
        for _ in range(args.runs):          # interleaved, so that machine noise hits all alike
            for engine in engines:
                results[engine].append(_delta_spark_load(peer, args.path, version)
                                       if engine == "delta-spark"
                                       else _run(engine, args.path, version))
        counts = {engine: {r["files"] for r in results[engine]} for engine in engines}
        assert all(c == counts["sqlext"] for c in counts.values()), counts
        medians = {}
        for engine in engines:
            secs = [r["seconds"] for r in results[engine]]
            medians[engine] = statistics.median(secs)
            print(f"{label:40s} {engine:16s} {medians[engine]:9.3f} {min(secs):7.3f} "
                  f"{results[engine][0]['files']:8,d}", flush=True)
        print(f"{'':40s} ratio sqlext / deltalake (file_uris)       = "
              f"{medians['sqlext'] / medians['deltalake']:.2f}x")
        print(f"{'':40s} ratio sqlext / deltalake (get_add_actions) = "
              f"{medians['sqlext'] / medians['deltalake-adds']:.2f}x")
        if peer:
            print(f"{'':40s} ratio sqlext / delta-spark                 = "
                  f"{medians['sqlext'] / medians['delta-spark']:.2f}x", flush=True)
    if peer:
        peer.close()
    if not args.keep:
        shutil.rmtree(args.path, ignore_errors=True)


if __name__ == "__main__":
    main()
