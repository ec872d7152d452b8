"""Every DML and MERGE test here runs on both of a small statement's paths (issue 30, "same
meaning, proven"): ``auto``, the product's default, under which these small tables take the
driver path (:mod:`sqlext.engine.local`), and ``off``, Spark's jobs, the path of every statement
larger than ``spark.sqlext.execution.localMaxBytes``. Each test that uses the Spark session gets
the two ids ``[auto]`` and ``[off]``; ``SQLEXT_TEST_EXECUTION`` (tests/support/spark.py), when
set, pins the whole run to one path instead.
"""

from __future__ import annotations

import pytest

from tests.support.spark import execution_conf

#: the ``spark.sqlext.execution.local`` settings each test runs under
EXECUTION_MODES = ("auto", "off")


def pytest_generate_tests(metafunc):
    if "spark" in metafunc.fixturenames and not execution_conf():
        metafunc.parametrize("execution_mode", EXECUTION_MODES, indirect=True)


@pytest.fixture(autouse=True)
def execution_mode(request):
    """The test's ``spark.sqlext.execution.local`` (None for a test without a Spark session or
    when ``SQLEXT_TEST_EXECUTION`` pins it), restored afterwards."""
    mode = getattr(request, "param", None)
    if mode is None:
        yield None
        return
    from sqlext.engine.local.policy import MODE_CONF

    spark = request.getfixturevalue("spark")
    before = spark.conf.get(MODE_CONF, None)
    spark.conf.set(MODE_CONF, mode)
    try:
        yield mode
    finally:
        if before is None:
            spark.conf.unset(MODE_CONF)
        else:
            spark.conf.set(MODE_CONF, before)
