"""Benchmark: the example dbt project's second run, ``type: sqlext`` vs dbt-spark.

    .venv/bin/python bench/dbt_project.py [--runs 1] [--threads 1] [--models 20]

``--models N`` builds a generated project of N small incremental models instead
(``bench/dbt_many_models.py``: merge on sqlext, insert_overwrite on dbt-spark's parquet).

Both systems build the same project (examples/shop) twice in a fresh process each, with the seed
data changed between the builds (examples/run_example.py), and the SECOND build is timed:

- sqlext: ``type: sqlext`` as the example is written (Delta tables; incremental merge,
  delete+insert, microbatch);
- peer: dbt-spark 1.11's ``method: session`` writing plain parquet with ``insert_overwrite``, what
  users do without a table format: ``customers_current`` recomputed whole, ``daily_revenue``
  partitioned by day (dynamic partition overwrite of the changed days), ``events_enriched`` a
  microbatch model partitioned by an added ``event_date`` column (dbt-spark needs one).

dbt-spark cannot snapshot into parquet, so the compared builds exclude the snapshot; sqlext's
build with the snapshot is reported on its own line. Each child process reports: Spark start
(SparkSession up, before dbt), dbt's start and parse (until dbt reports what it found), the
statements (sum of dbt's per-statement times; threads=1 by default, so they do not overlap) and
the rest of the build (compilation, adapter cache, materialization logic); plus the statements
grouped by kind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples"))

import run_example  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))
import dbt_many_models  # noqa: E402

EXCLUDE_SNAPSHOT = ["--exclude", "orders_snapshot"]

PEER_MODELS = {
    "customers_current.sql": """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite') }}
select customer_id, name, email, country, updated_at from {{ ref('stg_customers') }}
""",
    "daily_revenue.sql": """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite',
          partition_by=['order_date']) }}
select count(*) as orders, sum(amount) as revenue, max(updated_at) as last_updated_at, order_date
from {{ ref('stg_orders') }}
{% if is_incremental() %}
where order_date in (
    select order_date from {{ ref('stg_orders') }}
    where updated_at > (select max(last_updated_at) from {{ this }})
)
{% endif %}
group by order_date
""",
    "events_enriched.sql": """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_time',
          batch_size='day', begin='2024-01-01', partition_by=['event_date']) }}
select e.event_id, e.event_time, e.event_type, e.customer_id, c.country,
       cast(e.event_time as date) as event_date
from {{ ref('stg_events') }} as e
left join {{ ref('stg_customers') }} as c on c.customer_id = e.customer_id
""",
}


def peer_project(workdir: Path) -> Path:
    """The example rewritten for dbt-spark on parquet (see the module docstring)."""
    target = {"type": "spark", "method": "session", "host": "localhost", "threads": 1,
              "server_side_parameters": {"spark.sql.warehouse.dir": str(workdir / "warehouse")}}
    project = run_example.prepare(workdir, "shop", target)
    shutil.rmtree(project / "snapshots")
    for name, sql in PEER_MODELS.items():
        (project / "models" / "marts" / name).write_text(sql)
    config = (project / "dbt_project.yml").read_text()
    config = config.replace("seeds:\n  shop:\n", "seeds:\n  shop:\n    +file_format: parquet\n")
    config = config.replace("models:\n  shop:\n", "models:\n  shop:\n    +file_format: parquet\n")
    (project / "dbt_project.yml").write_text(config)
    return project


# --- child process: one system, two builds ---------------------------------------------------


def _kind(sql: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", sql, flags=re.S)
    text = re.sub(r"--[^\n]*", " ", text)
    words = text.lower().split()[:6]
    for kind in ("merge", "insert overwrite", "insert into", "create or replace table",
                 "create table", "create or replace view", "create or replace temporary view",
                 "describe", "show table extended", "show", "drop", "set", "alter", "select",
                 "with", "create schema"):
        if " ".join(words).startswith(kind):
            return kind
    return " ".join(words[:2])


class Recorder:
    """Collects dbt's SQL events: statement text and elapsed time."""

    def __init__(self):
        self.pending = {}
        self.by_kind = defaultdict(lambda: [0, 0.0])
        self.total = 0.0
        self.parsed_at = None

    def __call__(self, event):
        name = event.info.name
        thread = event.info.thread
        if name == "FoundStats":          # "Found 6 models, ...": the manifest is loaded
            self.parsed_at = time.perf_counter()
        elif name == "SQLQuery":
            self.pending[thread] = event.data.sql
        elif name == "SQLQueryStatus":
            kind = _kind(self.pending.pop(thread, ""))
            self.by_kind[kind][0] += 1
            self.by_kind[kind][1] += event.data.elapsed
            self.total += event.data.elapsed


def child(system: str, workdir: Path, threads: int, with_snapshot: bool, models: int = 0) -> dict:
    from dbt.cli.main import dbtRunner

    if models:
        project = dbt_many_models.prepare(workdir, system, models, threads)
    elif system == "sqlext":
        project = run_example.prepare(workdir, "shop", {
            "type": "sqlext", "threads": threads, "warehouse": str(workdir / "warehouse")})
    else:
        project = peer_project(workdir)
        prof = project / "profiles.yml"
        prof.write_text(prof.read_text().replace("threads: 1", f"threads: {threads}"))
    os.chdir(workdir)                      # dbt-spark's Hive metastore (derby) lands here
    t0 = time.perf_counter()
    if system == "sqlext":
        import sqlext
        sqlext.session(**{"spark.sql.warehouse.dir": str(workdir / "warehouse")})
    else:
        from pyspark.sql import SparkSession
        SparkSession.builder.enableHiveSupport() \
            .config("spark.sql.warehouse.dir", str(workdir / "warehouse")) \
            .config("spark.ui.enabled", "false").getOrCreate().sparkContext.setLogLevel("ERROR")
    spark_start = time.perf_counter() - t0
    exclude = [] if with_snapshot else EXCLUDE_SNAPSHOT

    def build(window, recorder=None):
        times = [] if models else ["--event-time-start", window[0], "--event-time-end", window[1]]
        args = ["build", *times, *([] if models else exclude), "--project-dir", str(project),
                "--profiles-dir", str(project)]
        result = dbtRunner(callbacks=[recorder] if recorder else []).invoke(args)
        if not result.success:
            raise SystemExit(f"{system}: dbt build failed: {result.exception}")

    t = time.perf_counter()
    build(run_example.FIRST_WINDOW)
    first = time.perf_counter() - t
    if models:
        dbt_many_models.change_seed(project, models)
    else:
        run_example.change_seeds(project)
    recorder = Recorder()
    t = time.perf_counter()
    build(run_example.SECOND_WINDOW, recorder)
    second = time.perf_counter() - t
    parse = recorder.parsed_at - t
    if models:
        _check_rows(system, models)
    return {"system": system, "spark_start": spark_start, "first": first, "second": second,
            "parse": parse, "statements": recorder.total,
            "rest": second - parse - recorder.total,
            "by_kind": {k: v for k, v in sorted(recorder.by_kind.items(),
                                                 key=lambda kv: -kv[1][1])}}


def _check_rows(system: str, models: int) -> None:
    """Both systems end with the same rows: every model's group, updated and extended."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    total = 0
    for k in range(models):
        name = f"many.m_{k:02d}"
        if system == "sqlext":
            import sqlext
            total += sqlext.sql(spark, f"SELECT count(*) FROM {name}").collect()[0][0]
        else:
            total += spark.sql(f"SELECT count(*) FROM {name}").collect()[0][0]
    if total != dbt_many_models.expected_rows(models):
        raise SystemExit(f"{system}: {total} rows after the second build, expected "
                         f"{dbt_many_models.expected_rows(models)}")


# --- parent ------------------------------------------------------------------------------------


def run_child(system: str, threads: int, with_snapshot: bool, models: int = 0) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-dbt-{system}-"))
    try:
        cmd = [sys.executable, __file__, "--child", system, "--workdir", str(workdir),
               "--threads", str(threads), "--models", str(models)] + (
                   ["--with-snapshot"] if with_snapshot else [])
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
        if out.returncode or not line:
            raise SystemExit(f"{system} child failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
        return json.loads(line[-1][len("RESULT "):])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def load_average() -> str:
    try:
        return os.getloadavg().__repr__()
    except OSError:
        return "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--child", choices=["sqlext", "spark"])
    parser.add_argument("--workdir")
    parser.add_argument("--with-snapshot", action="store_true")
    parser.add_argument("--models", type=int, default=0,
                        help="build a generated project of this many incremental models")
    args = parser.parse_args()
    if args.child:
        result = child(args.child, Path(args.workdir), args.threads, args.with_snapshot,
                       args.models)
        print("RESULT " + json.dumps(result), flush=True)
        return

    print(f"load average before: {load_average()}")
    results = defaultdict(list)
    for i in range(args.runs):             # interleaved, so that load changes hit both
        contenders = (("sqlext", False), ("spark", False)) if args.models else (
            ("sqlext", False), ("spark", False), ("sqlext", True))
        for system, snap in contenders:
            key = system + (" + snapshot" if snap else "")
            results[key].append(run_child(system, args.threads, snap, args.models))
            print(f"run {i + 1} {key}: second build {results[key][-1]['second']:.1f}s "
                  f"(load {load_average()})", flush=True)

    def med(key, field):
        return statistics.median(r[field] for r in results[key])

    print(f"\nmedian of {args.runs} run(s), threads={args.threads}, seconds")
    print(f"{'system':22} {'spark start':>11} {'1st build':>9} {'2nd build':>9} "
          f"{'parse':>6} {'statements':>10} {'rest':>6}")
    for key in results:
        print(f"{key:22} {med(key, 'spark_start'):11.1f} {med(key, 'first'):9.1f} "
              f"{med(key, 'second'):9.1f} {med(key, 'parse'):6.1f} "
              f"{med(key, 'statements'):10.1f} {med(key, 'rest'):6.1f}")
    ratio = med("sqlext", "second") / med("spark", "second")
    print(f"\nsecond build, sqlext / dbt-spark parquet insert_overwrite: {ratio:.2f}x")
    for key in results:
        print(f"\nstatements of the second build, {key} (last run): kind: count, seconds")
        for kind, (count, secs) in results[key][-1]["by_kind"].items():
            print(f"  {kind:34} {count:4d} {secs:8.2f}")


if __name__ == "__main__":
    main()
