"""Shared pytest fixtures for the sqlext test suite.

- ``spark``: ONE local SparkSession per test run, built by
  :func:`tests.support.spark.build_session` (the single place that will call
  ``sqlext.session(...)``). The JVM starts on first use only.
- ``drop_in``: the ``spark`` session with ``sqlext.install`` applied for one test.
- ``table_path``: a fresh, not yet created directory path for a Delta table.
- ``fresh_caches``: the kernel's process caches cleared around a test.
- ``fixture_table``: ``fixture_table("simple_table") -> Path`` copies a fixture table (tests/fixtures)
  into the test's tmp_path with commit mtimes restored (see :func:`copy_fixture`).

Helpers (readers, comparison, fixtures) are in ``tests/support``: ``from tests.support import ...``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # `import sqlext` and `import tests.support` from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from tests.support import execution_paths  # noqa: E402
from tests.support.fixtures import copy_fixture  # noqa: E402
from tests.support.spark import build_session  # noqa: E402


SLOW_SUITES = ("deltaspark", "compat")   # each starts other Spark processes: delta-spark's, older pysparks'


def pytest_collection_modifyitems(config, items):
    """Mark the cross-engine suites ``slow``: ``./test.sh -m 'not slow'`` is the quick run."""
    for item in items:
        if Path(str(item.fspath)).parent.name in SLOW_SUITES:
            item.add_marker(pytest.mark.slow)


def pytest_generate_tests(metafunc):
    """A module marked ``pytestmark = pytest.mark.execution_paths("auto", "off")`` runs each of its
    Spark tests once per ``spark.sqlext.execution.local`` setting named
    (:mod:`tests.support.execution_paths`)."""
    marker = metafunc.definition.get_closest_marker("execution_paths")
    if marker is not None:
        execution_paths.parametrize(metafunc, marker.args)


execution_mode = execution_paths.execution_mode   # the fixture, autouse: the setting of a marked test


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """The test run's SparkSession (local[2], UTC, TIMESTAMP_MICROS; see ``SPARK_CONF``)."""
    session = build_session(tmp_path_factory.mktemp("spark-warehouse"))
    yield session
    session.stop()


@pytest.fixture
def drop_in(spark):
    """The shared session with ``sqlext.install`` applied (delta-spark's idioms routed to
    sqlext), uninstalled after the test."""
    import sqlext
    from sqlext.drop_in import uninstall
    sqlext.install(spark)
    yield spark
    uninstall(spark)


@pytest.fixture
def table_path(tmp_path) -> Path:
    """Path for a new Delta table under tmp_path; the directory does not exist yet."""
    return tmp_path / "table"


@pytest.fixture
def fixture_table(tmp_path):
    """Factory: ``fixture_table(name) -> Path`` of a private copy of fixture ``name``."""

    def make(name: str) -> Path:
        return copy_fixture(name, tmp_path / "fixtures" / name)

    return make


@pytest.fixture
def fresh_caches():
    """The kernel's per-process caches (:data:`sqlext.log.cache.LOG_CACHE`) cleared before and
    after the test, as a new process would have them. Modules use it with
    ``pytestmark = pytest.mark.usefixtures("fresh_caches")``."""
    from sqlext.log.cache import LOG_CACHE
    LOG_CACHE.clear()
    yield
    LOG_CACHE.clear()
