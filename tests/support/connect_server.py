"""A local Spark Connect server in its own process, for tests of sqlext on Connect sessions.

pyspark ships the server (``spark-connect_*.jar``); it is started with ``spark-submit --class
org.apache.spark.sql.connect.service.SparkConnectServer`` on a free port, with the test session's
settings (:data:`tests.support.spark.SPARK_CONF`), and stopped by :meth:`ConnectServer.stop`.
:class:`ServerProcess` starts any such local server process and waits for its port.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.support.spark import MASTER, SPARK_CONF

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """A server in its own process (``command``, in its own session, output to ``log``),
    listening on ``127.0.0.1:<port>`` once started; :meth:`stop` ends it. ``what`` names it in
    errors."""

    def __init__(self, command: list[str], env: dict, port: int, log: Path, what: str,
                 timeout: float = 120.0, cwd: Path | None = None):
        self.port, self.log, self.what = port, log, what
        with open(log, "wb") as out:
            self.process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True, cwd=cwd)
        self._wait(timeout)

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the {self.what} exited ({self.process.returncode}); "
                                   f"see {self.log}:\n{self.log.read_text()[-3000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"the {self.what} did not listen within {timeout}s; see {self.log}")

    def stop(self) -> None:
        """Stop the server (and its JVM) and wait for it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class ConnectServer(ServerProcess):
    """A Spark Connect server on ``127.0.0.1:<port>`` (``url``), with its warehouse at
    ``warehouse``; its output goes to ``<warehouse>/../connect-server.log``."""

    def __init__(self, warehouse: Path, timeout: float = 120.0):
        import pyspark
        home = os.path.dirname(pyspark.__file__)
        port = free_port()
        self.url = f"sc://127.0.0.1:{port}"
        conf = {**SPARK_CONF, "spark.sql.warehouse.dir": str(warehouse),
                "spark.connect.grpc.binding.address": "127.0.0.1",
                "spark.connect.grpc.binding.port": str(port),
                "spark.driver.memory": "1g"}
        command = [os.path.join(home, "bin", "spark-submit"), "--master", MASTER,
                   "--class", SERVER_CLASS]
        for key, value in conf.items():
            command += ["--conf", f"{key}={value}"]
        command.append("spark-internal")
        env = dict(os.environ, SPARK_HOME=home, PYSPARK_PYTHON=sys.executable,
                   SPARK_LOCAL_IP="127.0.0.1")
        env.pop("SPARK_CONNECT_MODE_ENABLED", None)
        super().__init__(command, env, port, warehouse.parent / "connect-server.log",
                         "Spark Connect server", timeout)


class SqlextConnectServer(ServerProcess):
    """The project's own ``sqlext-connect-server`` (``python -m sqlext.connect_server``) on a free
    port (``url``) with its tables in ``warehouse``, small enough to run next to the test
    session's Spark (one core, 768 MB); its output goes to ``log``."""

    def __init__(self, warehouse: Path, log: Path, cwd: Path | None = None):
        port = free_port()
        self.url = f"sc://127.0.0.1:{port}"
        command = [sys.executable, "-m", "sqlext.connect_server", "--port", str(port),
                   "--warehouse", str(warehouse), "--master", "local[1]",
                   "--conf", "spark.driver.memory=768m", "--conf", "spark.sql.shuffle.partitions=1"]
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
        env.pop("SPARK_CONNECT_MODE_ENABLED", None)
        super().__init__(command, env, port, log, "sqlext-connect-server", cwd=cwd)
