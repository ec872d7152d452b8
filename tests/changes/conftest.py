"""Every change-feed test here runs on the three settings of ``spark.sqlext.execution.local``
(issue 30, "same meaning, proven", :mod:`tests.support.execution_paths`): ``auto`` (the
product's default: the small DML statements that write the changes take the driver path, the
change feed is read by Spark's scan), ``force`` (the change feed too is read on the driver into
a local relation) and ``off`` (everything by Spark's jobs).
"""

from __future__ import annotations

from tests.support import execution_paths


def pytest_generate_tests(metafunc):
    execution_paths.parametrize(metafunc, ("auto", "force", "off"))
