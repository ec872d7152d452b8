"""dbt-tests-adapter wiring for ``type: sqlext`` (as dbt adapters wire it in their own repos).

dbt-tests-adapter's project fixtures (``project``, ``adapter``, ``models``, ...) are imported here
rather than declared as a pytest plugin, so they exist only under ``tests/functional``. The
profile (:func:`dbt_profile_target`) asks for the suite's ``spark`` fixture first: every dbt
invocation of the run (``run_dbt`` is in-process) then works on that one Spark application and
its warehouse; each dbt connection opens its own SQL session on it.
"""

from __future__ import annotations

import pytest
from dbt.tests.fixtures.project import *  # noqa: F401,F403


@pytest.fixture(scope="class")
def dbt_profile_target(spark):
    """The profile of every functional test: ``type: sqlext`` on the test run's SparkSession."""
    return {"type": "sqlext", "threads": 2}
