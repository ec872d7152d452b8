"""The Spark Connect tests' server and client session: one local Spark Connect server for the
whole folder (:class:`tests.support.connect_server.ConnectServer`, its own process with the test
session's settings), and a client session to it per module."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="package")
def server(tmp_path_factory):
    """The folder's local Spark Connect server (started on first use, stopped after the last
    test of tests/connect)."""
    pytest.importorskip("grpc")
    from tests.support.connect_server import ConnectServer
    warehouse = tmp_path_factory.mktemp("connect") / "warehouse"
    warehouse.mkdir()
    running = ConnectServer(warehouse)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def connect(server):
    """A Spark Connect session to the local server, via ``sqlext.session(remote=...)``."""
    import sqlext
    from sqlext.catalog.views import TEMPORARY_VIEWS
    had_mode = "SPARK_CONNECT_MODE_ENABLED" in os.environ
    try:
        session = sqlext.session(remote=server.url)
        yield session
        session.stop()
    finally:
        if not had_mode:    # pyspark's functions build classic Columns again
            os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
        TEMPORARY_VIEWS.clear()
