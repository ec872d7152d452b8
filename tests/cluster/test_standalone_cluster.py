"""sqlext on a real Spark cluster: a standalone master and two workers started from the installed
pyspark on 127.0.0.1, a driver in its own process connected to ``spark://127.0.0.1:<port>``, and a
table in a directory all of them share. Executors (separate JVMs) write the data files; the
driver commits. The cluster is always torn down, and every wait is bounded."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark
import pytest

from tests.support import read_deltalake

SPARK_HOME = Path(pyspark.__file__).parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
DRIVER = Path(__file__).with_name("driver.py")
START_TIMEOUT = 240
DRIVER_TIMEOUT = 900


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(tmp: Path) -> dict:
    return {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": "256m", "SPARK_LOG_DIR": str(tmp / "logs"),
            "SPARK_WORKER_DIR": str(tmp / "work"), "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable, "SPARK_NO_DAEMONIZE": "1"}


class Cluster:
    """A master and workers, each in its own process group so that a worker's executors go
    with it."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.procs: list[subprocess.Popen] = []
        self.port = _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, *args: str) -> Path:
        log = self.tmp / f"{name}.log"
        with open(log, "wb") as out:
            self.procs.append(subprocess.Popen([str(SPARK_CLASS), *args], stdout=out,
                                               stderr=subprocess.STDOUT, env=_env(self.tmp),
                                               start_new_session=True))
        return log

    def start(self, workers: int = 2) -> None:
        master_log = self._start("master", "org.apache.spark.deploy.master.Master",
                                 "--host", "127.0.0.1", "--port", str(self.port),
                                 "--webui-port", str(_free_port()))
        self._wait(lambda: _listening(self.port), "the master to listen", master_log)
        for i in range(workers):
            self._start(f"worker{i}", "org.apache.spark.deploy.worker.Worker",
                        "--host", "127.0.0.1", "--cores", "1", "--memory", "768m",
                        "--webui-port", str(_free_port()), "--work-dir",
                        str(self.tmp / f"work{i}"), self.url)
        self._wait(lambda: master_log.read_text(errors="replace").count("Registering worker")
                   >= workers, f"{workers} workers to register", master_log)

    def _wait(self, ready, what: str, log: Path) -> None:
        deadline = time.time() + START_TIMEOUT
        while not ready():
            for p in self.procs:
                assert p.poll() is None, f"a cluster process exited while waiting for {what}:\n" \
                                         f"{log.read_text(errors='replace')[-3000:]}"
            assert time.time() < deadline, f"timed out waiting for {what}"
            time.sleep(0.5)

    def stop(self) -> None:
        for p in reversed(self.procs):          # workers first: they stop their executors
            _stop_group(p)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _stop_group(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)    # anything left in the group (executors)
    except ProcessLookupError:
        pass
    proc.wait()


@pytest.mark.skipif(not SPARK_CLASS.exists(), reason="pyspark ships no bin/spark-class")
def test_sqlext_on_a_standalone_cluster(tmp_path):
    cluster = Cluster(tmp_path)
    table = tmp_path / "shared" / "table"
    out = tmp_path / "result.json"
    try:
        cluster.start(workers=2)
        with open(tmp_path / "driver.log", "wb") as log:
            driver = subprocess.Popen([sys.executable, str(DRIVER), cluster.url, str(table),
                                       str(out)], stdout=log, stderr=subprocess.STDOUT,
                                      env=_env(tmp_path), start_new_session=True)
            try:
                code = driver.wait(timeout=DRIVER_TIMEOUT)
            finally:
                _stop_group(driver)
        assert code == 0, (tmp_path / "driver.log").read_text(errors="replace")[-4000:]
    finally:
        cluster.stop()
    result = json.loads(out.read_text())
    assert result["master"] == cluster.url and result["executors"] == 2
    # the data files were written by Python workers of the executors, in two processes, none of
    # them the driver
    assert result["driver_pid"] not in result["writer_pids"] and len(result["writer_pids"]) >= 2

    expected: dict[int, tuple] = {i: (i % 4, i * 10) for i in range(40) if i % 10}
    for i, (part, val) in list(expected.items()):
        if part == 1:
            expected[i] = (part, val + 1)
    expected[1] = (1, -1)
    expected[100] = (0, 1000)
    rows = sorted([i, p, v] for i, (p, v) in expected.items())
    assert sorted(result["rows_latest"]) == rows == sorted(result["rows_after_optimize"])
    assert sorted(result["rows_v0"]) == sorted([i, i % 4, i * 10] for i in range(40))
    assert result["operations"][:4] == ["MERGE", "UPDATE", "DELETE", "WRITE"]
    assert result["optimize"] > 0
    kinds = {}
    for _, _, change, version in result["changes"]:
        kinds.setdefault(version, set()).add(change)
    assert kinds[1] == {"delete"}
    assert kinds[2] == {"update_preimage", "update_postimage"}
    assert {"update_preimage", "update_postimage", "insert"} <= kinds[3]
    # another engine reads what the cluster wrote
    dl = sorted([r["id"], r["part"], r["val"]] for r in read_deltalake(table).to_pylist())
    assert dl == rows
