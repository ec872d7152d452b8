"""The one place that builds the SparkSession used by the test suite.

``tests/conftest.py`` calls :func:`build_session` once per test run (session-scoped fixture).
When ``sqlext.session(...)`` exists, replace the body of :func:`build_session` with a call to it,
passing :data:`SPARK_CONF`; nothing else in the test suite needs to change.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
from pathlib import Path

MASTER = "local[2]"

#: Spark settings every test run uses; ``tests/test_support.py`` asserts them on the live session.
SPARK_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    # one JVM runs the whole suite (1,500 tests): with 2g its old generation filled up near the
    # end (constant full GCs, the SQL differential test crawling); keep less history, more heap
    "spark.driver.memory": "4g",
    "spark.sql.ui.retainedExecutions": "50",
    "spark.ui.retainedJobs": "100",
    "spark.ui.retainedStages": "100",
    # broadcast relations (long[] pages) are freed only once a GC finds their driver objects
    # unreachable: collect every few minutes instead of Spark's default 30
    "spark.cleaner.periodicGC.interval": "3min",
}


#: ``SQLEXT_TEST_EXECUTION=spark|local`` runs the whole suite with small DML statements on one
#: path: Spark's jobs (``off``) or the driver path wherever it applies (``force``); unset, the
#: product default (``auto``)
EXECUTION_ENV = "SQLEXT_TEST_EXECUTION"
_EXECUTION_MODES = {"spark": "off", "local": "force"}


def execution_conf(environ=None) -> dict[str, str]:
    """The ``spark.sqlext.execution.local`` setting :data:`EXECUTION_ENV` asks for ({} when
    unset); any other value is refused, naming the ones it takes."""
    value = (os.environ if environ is None else environ).get(EXECUTION_ENV, "").strip().lower()
    if not value:
        return {}
    if value not in _EXECUTION_MODES:
        raise ValueError(f"{EXECUTION_ENV}={value!r}: use spark or local (or leave it unset)")
    from sqlext.engine.local.policy import MODE_CONF
    return {MODE_CONF: _EXECUTION_MODES[value]}


def _set_python_env() -> None:
    """Make Spark's Python workers and py4j use this interpreter (the venv's)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def build_session(warehouse_dir: Path, app_name: str = "sqlext-tests"):
    """Start the local SparkSession for tests, with its warehouse under ``warehouse_dir``.

    pyspark is imported here, not at module import, so test runs that never ask for the
    ``spark`` fixture never start a JVM.
    """
    _set_python_env()

    import sqlext

    conf = {**SPARK_CONF, **execution_conf(), "spark.sql.warehouse.dir": str(warehouse_dir)}
    from tests.support.s3 import s3a_jars
    if s3a_jars():                 # Spark's s3a:// connector, for tests/storage/test_s3.py
        # on the driver's classpath, which in local mode is the executors' too; spark.jars would
        # copy the 650 MB AWS SDK bundle into every session's temporary directory
        conf["spark.driver.extraClassPath"] = s3a_jars().replace(",", os.pathsep)
    return sqlext.session(master=MASTER, app_name=app_name, **conf)


#: turns off VACUUM's retention check (tests vacuum with RETAIN 0 HOURS)
NO_RETENTION_CHECK = {"spark.databricks.delta.retentionDurationCheck.enabled": "false"}


@contextlib.contextmanager
def spark_conf(spark, settings: dict[str, str]):
    """Set Spark SQL settings for a block and restore the previous values (shared session)."""
    previous = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in previous.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


_probe_ids = itertools.count()


def jobs_run(spark, fn):
    """(what ``fn()`` returns, how many Spark jobs it ran)."""
    sc = spark.sparkContext
    # a group of its own per call: the tracker keeps only spark.ui.retainedJobs jobs, so counting
    # the growth of one shared group goes wrong (even negative) once older jobs are dropped
    group = f"sqlext-probe-{next(_probe_ids)}"
    sc.setJobGroup(group, "count the jobs of one call")
    try:
        result = fn()
        sc._jsc.sc().listenerBus().waitUntilEmpty()   # the tracker learns of jobs from events
        return result, len(sc.statusTracker().getJobIdsForGroup(group))
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
