"""Benchmark (issue 30): the example dbt project's second ``dbt build`` as a command, the way
users run it (a new ``dbt`` process each time), on three set-ups:

- ``session``: ``type: sqlext``, ``method: session``: the command starts Spark itself;
- ``connect``: ``type: sqlext``, ``method: connect`` to a ``sqlext-connect-server`` started once
  before the builds (its start is not timed: it is paid once, not per command);
- ``dbt-spark``: dbt-spark 1.11's ``method: session`` on plain parquet (``bench/dbt_project.py``'s
  peer project): the command starts Spark itself.

    .venv/bin/python bench/dbt_cli.py [--only session,connect,dbt-spark] [--dbt PATH]

Each set-up builds the project once, gets the second version of the seeds and builds again; the
second build's wall time (the whole ``dbt build`` process) is printed. The snapshot is left out
everywhere (dbt-spark cannot snapshot into parquet); threads 2 (the example's profile).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples"))
sys.path.insert(0, str(REPO / "bench"))

import dbt_project  # noqa: E402
import run_example  # noqa: E402

DBT = str(Path(sys.executable).with_name("dbt"))


def dbt_build(project: Path, window: tuple[str, str]) -> float:
    """One ``dbt build`` process (without the snapshot); its wall time in seconds."""
    t = time.perf_counter()
    done = subprocess.run([DBT, "build", "--event-time-start", window[0],
                           "--event-time-end", window[1], *dbt_project.EXCLUDE_SNAPSHOT,
                           "--project-dir", str(project), "--profiles-dir", str(project)],
                          cwd=project.parent, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"dbt build failed in {project}:\n{done.stdout[-3000:]}")
    return time.perf_counter() - t


def start_server(workdir: Path, port: int) -> subprocess.Popen:
    """``sqlext-connect-server`` on ``port`` with its tables in ``<workdir>/warehouse``."""
    log = open(workdir / "server.log", "wb")
    server = subprocess.Popen([sys.executable, "-m", "sqlext.connect_server", "--port", str(port),
                               "--warehouse", str(workdir / "warehouse")],
                              stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return server
        except OSError:
            time.sleep(0.5)
    server.terminate()
    raise SystemExit(f"sqlext-connect-server did not start; see {workdir / 'server.log'}")


def project_for(system: str, workdir: Path, port: int) -> Path:
    if system == "dbt-spark":
        project = dbt_project.peer_project(workdir)
        profile = project / "profiles.yml"
        profile.write_text(profile.read_text().replace("threads: 1", "threads: 2"))
        return project
    target = (run_example.connect_target(f"sc://127.0.0.1:{port}") if system == "connect"
              else {"type": "sqlext", "threads": 2, "warehouse": str(workdir / "warehouse")})
    return run_example.prepare(workdir, "shop", target)


def measure(system: str) -> tuple[float, float]:
    """(first build, second build) seconds of ``system``, in a temporary directory."""
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-dbt-cli-{system}-")).resolve()
    server = None
    try:
        port = 15002 + os.getpid() % 1000
        if system == "connect":
            server = start_server(workdir, port)
        project = project_for(system, workdir, port)
        first = dbt_build(project, run_example.FIRST_WINDOW)
        run_example.change_seeds(project)
        return first, dbt_build(project, run_example.SECOND_WINDOW)
    finally:
        if server is not None:
            server.terminate()
            server.wait(60)
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    global DBT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="session,connect,dbt-spark")
    parser.add_argument("--dbt", default=DBT, help="the dbt command (default: this venv's)")
    args = parser.parse_args()
    DBT = args.dbt
    for system in args.only.split(","):
        load = os.getloadavg()[0]
        first, second = measure(system)
        print(f"{system:10s} first build {first:6.1f} s   second build {second:6.1f} s   "
              f"(load average at start {load:.1f})", flush=True)


if __name__ == "__main__":
    main()
