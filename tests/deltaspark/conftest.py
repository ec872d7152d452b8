"""Fixtures for the delta-spark oracle tests: one delta-spark worker process per test run.

``delta_spark`` is a :class:`tests.support.deltaspark.DeltaSpark` (pyspark 4.2 + delta-spark 4.4
in ``.venv-delta``, a subprocess); its Spark log is ``delta-spark.log`` in the run's temp dir.
Its JVM takes 10-30 s to start, so tests batch their requests.
"""

from __future__ import annotations

import pytest

from tests.support.deltaspark import DeltaSpark


@pytest.fixture(scope="session")
def delta_spark(tmp_path_factory):
    """The test run's delta-spark worker (started on first use, stopped at the end)."""
    work = tmp_path_factory.mktemp("delta-spark")
    worker = DeltaSpark.start(
        conf={"spark.sql.warehouse.dir": str(work / "warehouse"),
              # VACUUM RETAIN 0 HOURS on test tables, as the sqlext side does
              "spark.databricks.delta.retentionDurationCheck.enabled": "false"},
        log_path=work / "delta-spark.log",
    )
    yield worker
    worker.close()
