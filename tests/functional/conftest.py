"""dbt-tests-adapter wiring for ``type: sqlext`` (as dbt adapters wire it in their own repos).

dbt-tests-adapter's project fixtures (``project``, ``adapter``, ``models``, ...) are imported here
rather than declared as a pytest plugin, so they exist only under ``tests/functional``. The
profile (:func:`dbt_profile_target`) asks for the suite's ``spark`` fixture first: every dbt
invocation of the run (``run_dbt`` is in-process) then works on that one Spark application and
its warehouse; each dbt connection opens its own SQL session on it.

``SQLEXT_TEST_DBT_METHOD=connect ./test.sh tests/functional`` runs the same suites with the
profile's ``method: connect``: dbt's statements go to a ``sqlext-connect-server`` started for the
run on the test session's warehouse (what the tests check through ``spark`` reads the same
tables).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dbt.tests.fixtures.project import *  # noqa: F401,F403


@pytest.fixture(scope="session")
def dbt_connect_server(spark, tmp_path_factory):
    """The run's ``sqlext-connect-server`` when ``SQLEXT_TEST_DBT_METHOD=connect``, else None."""
    if os.environ.get("SQLEXT_TEST_DBT_METHOD", "session") != "connect":
        yield None
        return
    from tests.support.connect_server import SqlextConnectServer

    warehouse = spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")
    server = SqlextConnectServer(Path(warehouse), tmp_path_factory.mktemp("server") / "log")
    yield server
    server.stop()


@pytest.fixture(scope="class")
def dbt_profile_target(spark, dbt_connect_server):
    """The profile of every functional test: ``type: sqlext`` on the test run's SparkSession,
    or on the run's Connect server (see the module docstring)."""
    if dbt_connect_server is None:
        return {"type": "sqlext", "threads": 2}
    return {"type": "sqlext", "threads": 2, "method": "connect", "host": "127.0.0.1",
            "port": dbt_connect_server.port}
