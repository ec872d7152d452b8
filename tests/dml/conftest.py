"""Every DML and MERGE test here runs on both of a small statement's paths (issue 30, "same
meaning, proven"): ``auto``, the product's default, under which these small tables take the
driver path (:mod:`sqlext.engine.local`), and ``off``, Spark's jobs, the path of every statement
larger than ``spark.sqlext.execution.localMaxBytes`` (:mod:`tests.support.execution_paths`).
"""

from __future__ import annotations

from tests.support import execution_paths


def pytest_generate_tests(metafunc):
    execution_paths.parametrize(metafunc, ("auto", "off"))
