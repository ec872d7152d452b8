"""``sqlext-thriftserver`` in its own process, for tests of sqlext's tables over JDBC, and
beeline (Hive's JDBC command-line client, in pyspark's jars) to query it.

The server is started as ``python -m sqlext.thrift`` on a free port with ``local[1]`` and a small
heap (the test JVM runs beside it on a 2-core machine), on the warehouse of the test session, so
that the tables the test creates with sqlext are the server's.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support.connect_server import ServerProcess, free_port


class ThriftServer(ServerProcess):
    """``sqlext-thriftserver`` on ``<port>`` of its default address, 127.0.0.1, or ``host``
    (``url`` is a Hive JDBC URL to 127.0.0.1) serving the sqlext tables of ``warehouse``, its
    catalog refreshed every ``refresh`` seconds; its output goes to
    ``<workdir>/thrift-server.log``."""

    def __init__(self, warehouse: str, workdir: Path, refresh: float = 2.0,
                 timeout: float = 120.0, host: str | None = None):
        port = free_port()
        self.url = f"jdbc:hive2://127.0.0.1:{port}/default"
        command = [sys.executable, "-m", "sqlext.thrift", "--port", str(port),
                   *(["--host", host] if host else []),
                   "--warehouse", warehouse, "--master", "local[1]",
                   "--refresh", str(refresh),
                   "--conf", "spark.driver.memory=768m",
                   "--conf", "spark.sql.shuffle.partitions=1",
                   "--conf", "spark.ui.enabled=false"]
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
        env.pop("SPARK_CONNECT_MODE_ENABLED", None)
        env.pop("HIVE_SERVER2_THRIFT_BIND_HOST", None)
        super().__init__(command, env, port, workdir / "thrift-server.log",
                         "sqlext Thrift server", timeout, cwd=workdir)
        self._wait_for_line("sqlext-thriftserver: listening on", timeout)

    def _wait_for_line(self, text: str, timeout: float) -> None:
        """Wait for the server's ready line: it prints it once it answers errors in one line
        (its port opens a moment before: sqlext.thrift.one_line)."""
        deadline = time.monotonic() + timeout
        while text not in self.log.read_text(errors="replace"):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"the {self.what} did not say it listens; see {self.log}")
            time.sleep(0.2)


def listening_addresses(port: int) -> set[str]:
    """The local addresses sockets listen on at TCP ``port`` on this machine (Linux's
    ``/proc/net/tcp`` and ``tcp6``; IPv4-mapped IPv6 addresses as IPv4), e.g. ``{"127.0.0.1"}``,
    or ``{"0.0.0.0"}`` / ``{"::"}`` for every interface."""
    import ipaddress

    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, _, hex_port = fields[1].partition(":")
            if fields[3] != "0A" or int(hex_port, 16) != port:      # 0A: LISTEN
                continue
            raw = bytes.fromhex(address)
            # the kernel prints each 32-bit word in host (little-endian) order
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            ip = ipaddress.ip_address(raw)
            mapped = getattr(ip, "ipv4_mapped", None)
            found.add(str(mapped or ip))
    return found


class BeelineError(Exception):
    """A statement failed in beeline: its message (beeline's standard error)."""


def beeline(url: str, statement: str, timeout: float = 120.0) -> list[dict]:
    """Run one statement with beeline over JDBC; its rows, each {column: value as beeline
    prints it} (csv2 output, NULL as ``NULL``). Raises :class:`BeelineError` when it fails."""
    import pyspark
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")
    command = ["java", "-Xmx256m", "-cp", jars, "org.apache.hive.beeline.BeeLine", "-u", url,
               "-n", "sqlext", "--outputformat=csv2", "--silent=true", "--showHeader=true",
               "-e", statement]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0 or "Error:" in done.stderr:
        errors = [line for line in done.stderr.splitlines() if "Error" in line]
        raise BeelineError("\n".join(errors[:5]) or done.stderr[-4000:] or done.stdout[-4000:])
    text = done.stdout
    prompt = text.find("> ")        # beeline echoes its prompt before the output
    if text.startswith("0: jdbc:") and prompt >= 0:
        text = text[prompt + 2:]
    # csv2 leaves values unquoted unless they hold a delimiter; it quotes those with NUL
    return list(csv.DictReader(io.StringIO(text), quotechar="\x00"))
