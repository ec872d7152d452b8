"""The example dbt project on ``type: sqlext``: run it, change the seed data, run it again, then
look at what the second run changed.

    python examples/run_example.py [--workdir DIR] [--schema shop] [--remote sc://HOST:PORT]

Steps (each printed as it runs):

1. copy ``examples/shop`` into the work directory and write a ``profiles.yml`` for ``type: sqlext``
   (warehouse ``<workdir>/warehouse``);
2. ``dbt build``: seeds, staging views, an incremental merge model (``customers_current``), a
   delete+insert model (``daily_revenue``), a microbatch model (``events_enriched``, one batch per
   day), a snapshot (``orders_snapshot``) and data tests;
3. replace the seed CSVs with ``shop/seeds_v2`` (a customer changes e-mail, a customer and orders
   are added, an order changes, an order disappears, new events arrive);
4. ``dbt build`` again: every model commits a new version of its Delta table;
5. ``SELECT * FROM <schema>.customers_current.changes`` (the table's change feed) and
   ``DESCRIBE HISTORY`` of ``daily_revenue`` (each version's operation and the dbt invocation and
   model that wrote it, in ``userMetadata``).

dbt runs in this process (``dbtRunner``), so both builds share one Spark application; with
``--remote sc://HOST:PORT`` the profile is ``method: connect`` and everything runs on that running
Spark Connect server (``sqlext-connect-server``; its own warehouse holds the tables, so give the
server the same ``--warehouse`` as ``<workdir>/warehouse`` to keep them with the project). Without
``--workdir`` the project and its tables are in a temporary directory, removed at the end.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

import yaml

EXAMPLE = Path(__file__).resolve().parent / "shop"
#: the microbatch model's batches: days 1-3 on the first build, days 3-4 on the second
FIRST_WINDOW = ("2024-01-01", "2024-01-04")
SECOND_WINDOW = ("2024-01-03", "2024-01-05")


def prepare(workdir: Path, schema: str = "shop", target: dict | None = None) -> Path:
    """Copy the example project into ``workdir`` with a profile; returns the project directory."""
    project = workdir / "shop"
    if project.exists():
        shutil.rmtree(project)
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
    output = target or {"type": "sqlext", "threads": 2,
                        "warehouse": str(workdir / "warehouse")}
    profile = {"shop": {"target": "dev", "outputs": {"dev": {**output, "schema": schema}}}}
    (project / "profiles.yml").write_text(yaml.safe_dump(profile))
    return project


def connect_target(url: str) -> dict:
    """The profile output of ``method: connect`` to the Spark Connect server at ``url``."""
    parsed = urlparse(url)
    return {"type": "sqlext", "threads": 2, "method": "connect", "host": parsed.hostname,
            "port": parsed.port or 15002}


def dbt(project: Path, *args: str):
    """Run one dbt command in this process; raises if it fails."""
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke([*args, "--project-dir", str(project),
                                 "--profiles-dir", str(project)])
    if not result.success:
        failed = [f"{r.node.unique_id}: {r.message}" for r in getattr(result.result, "results", [])
                  if str(r.status) in ("error", "fail")]
        raise RuntimeError(f"dbt {' '.join(args)} failed: "
                           + ("\n".join(failed) or str(result.exception)))
    return result


def build(project: Path, window: tuple[str, str]):
    """``dbt build`` with the microbatch model's batches limited to ``window``."""
    return dbt(project, "build", "--event-time-start", window[0], "--event-time-end", window[1])


def change_seeds(project: Path) -> None:
    """Replace the seed CSVs with their second version."""
    for csv in sorted((project / "seeds_v2").glob("*.csv")):
        shutil.copyfile(csv, project / "seeds" / csv.name)


def step(title: str, out) -> float:
    print(f"\n=== {title}", file=out, flush=True)
    return time.perf_counter()


def main(argv: list[str] | None = None, out=sys.stdout) -> dict:
    """Run the example; returns the DataFrames shown (for tests: give ``--workdir``, since a
    temporary work directory is removed before this returns)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", help="where to put the project and the warehouse, kept "
                                          "afterwards (default: a temporary directory, removed "
                                          "at the end)")
    parser.add_argument("--schema", default="shop")
    parser.add_argument("--remote", metavar="sc://HOST:PORT",
                        help="build on this running Spark Connect server (profile method: "
                             "connect) instead of a Spark in this process")
    args = parser.parse_args(argv)
    if args.workdir:
        workdir = Path(args.workdir).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        return run(workdir, args.schema, out, args.remote)
    workdir = Path(tempfile.mkdtemp(prefix="sqlext-example-")).resolve()
    try:
        result = run(workdir, args.schema, out, args.remote)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\n(the project and its tables were in {workdir}, removed now; --workdir DIR keeps "
          "them)", file=out)
    return result


def run(workdir: Path, schema: str = "shop", out=sys.stdout, remote: str | None = None) -> dict:
    """The example's steps in ``workdir`` (on the Spark Connect server at ``remote``, if given);
    returns the DataFrames shown."""
    t = step(f"1. project in {workdir / 'shop'}", out)
    project = prepare(workdir, schema, connect_target(remote) if remote else None)
    t = step("2. dbt build (first run)", out)
    build(project, FIRST_WINDOW)
    print(f"first build: {time.perf_counter() - t:.1f}s", file=out)
    step("3. change the seed data (seeds_v2/)", out)
    change_seeds(project)
    t = step("4. dbt build (second run)", out)
    build(project, SECOND_WINDOW)
    print(f"second build: {time.perf_counter() - t:.1f}s", file=out)

    import sqlext

    spark = sqlext.session(remote=remote) if remote else sqlext.session()
    changes_sql = (f"SELECT * FROM {schema}.customers_current.changes "
                   "ORDER BY _commit_version, customer_id, _change_type")
    history_sql = f"DESCRIBE HISTORY {schema}.daily_revenue"
    step(changes_sql, out)
    changes = sqlext.sql(spark, changes_sql)
    print(changes._show_string(100, 40, False), file=out)
    step(history_sql, out)
    history = sqlext.sql(spark, history_sql).select(
        "version", "operation", "operationMetrics", "userMetadata")
    print(history._show_string(20, 120, True), file=out)
    return {"spark": spark, "project": project, "changes": changes, "history": history}


if __name__ == "__main__":
    main()
