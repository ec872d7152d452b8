"""Shell start-up: ``sqlext-sql -S -e "SELECT 1"`` against Spark's own ``spark-sql -S -e
"SELECT 1"`` (the ``spark-sql`` script of the same pyspark installation), each a fresh process
from start to exit, run alternately; the median of each and the ratio.

    .venv/bin/python bench/shell_startup.py [--runs 5] [--statement "SELECT 1"]

Both start a local JVM with Spark; ``spark-sql`` also brings up Hive's client (its metastore in a
temporary directory), sqlext-sql a Python process driving the JVM over py4j.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _timed(cmd: list[str], cwd: str, env: dict) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or "1" not in done.stdout:
        raise SystemExit(f"{cmd[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--statement", default="SELECT 1")
    args = parser.parse_args()

    import pyspark

    spark_home = os.path.dirname(pyspark.__file__)
    bindir = Path(sys.executable).parent
    env = {**os.environ, "SPARK_HOME": spark_home, "PYSPARK_PYTHON": sys.executable}
    contenders = {
        "sqlext-sql": [str(bindir / "sqlext-sql"), "-S", "--no-progress", "-e", args.statement],
        "spark-sql": [os.path.join(spark_home, "bin", "spark-sql"), "-S",
                      "--conf", "spark.ui.enabled=false", "-e", args.statement],
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for run in range(args.runs):
        order = list(contenders) if run % 2 == 0 else list(reversed(contenders))
        for name in order:
            work = tempfile.mkdtemp(prefix="shell-startup-")
            try:
                times[name].append(_timed(contenders[name], work, env))
            finally:
                shutil.rmtree(work, ignore_errors=True)
        print(f"run {run + 1}: " + ", ".join(f"{n} {times[n][-1]:.2f} s" for n in contenders),
              f"(load {os.getloadavg()[0]:.1f})", flush=True)
    ours, theirs = (statistics.median(times[n]) for n in ("sqlext-sql", "spark-sql"))
    print(f"median: sqlext-sql {ours:.2f} s, spark-sql {theirs:.2f} s, "
          f"ratio {ours / theirs:.2f}x")


if __name__ == "__main__":
    main()
