"""``sqlext-connect-server`` (``python -m sqlext.connect_server``): Spark's Connect server on a
local Spark with sqlext's settings, listening on 127.0.0.1 by default, its tables in the
warehouse it was given; ``sqlext-sql --remote`` (a process without a JVM) writes and reads a
table through it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("grpc")

from sqlext.connect_server import (HOST_CONF, PLUGIN, PORT_CONF, parse_args,  # noqa: E402
                                   server_settings)
from sqlext.engine.session import WAREHOUSE_CONF  # noqa: E402
from tests.support.connect_server import SqlextConnectServer  # noqa: E402
from tests.support.thrift_server import listening_addresses  # noqa: E402

SHELL = Path(sys.executable).with_name("sqlext-sql")


def test_settings(tmp_path):
    conf = server_settings(parse_args(["--warehouse", str(tmp_path)]), {})
    assert (conf[HOST_CONF], conf[PORT_CONF], conf[WAREHOUSE_CONF]) == \
        ("127.0.0.1", "15002", str(tmp_path))
    assert conf["spark.plugins"] == PLUGIN
    conf = server_settings(parse_args(["--host", "0.0.0.0", "--port", "15003", "--conf",
                                       "spark.plugins=a.B"]), {"SQLEXT_WAREHOUSE": "/e"})
    assert (conf[HOST_CONF], conf[PORT_CONF], conf[WAREHOUSE_CONF]) == ("0.0.0.0", "15003", "/e")
    assert conf["spark.plugins"] == f"a.B,{PLUGIN}"


def test_a_remote_shell_uses_the_servers_warehouse(tmp_path):
    warehouse = tmp_path / "warehouse"
    server = SqlextConnectServer(warehouse, tmp_path / "connect-server.log", cwd=tmp_path)
    port = server.port
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    try:
        if os.path.exists("/proc/net/tcp"):
            assert listening_addresses(port) == {"127.0.0.1"}
        done = subprocess.run(
            [str(SHELL), "--remote", f"sc://127.0.0.1:{port}", "-S", "-e",
             "CREATE TABLE remote_events (id INT) USING delta; "
             "INSERT INTO remote_events VALUES (5); SELECT id FROM remote_events"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "5" in done.stdout
        assert (warehouse / "remote_events" / "_delta_log").is_dir()
        assert not (tmp_path / "spark-warehouse").exists()
        log = (tmp_path / "connect-server.log").read_text()
        assert f"listening on 127.0.0.1:{port}" in log and str(warehouse) in log
    finally:
        server.stop()
