"""Run a test directory's tests on more than one of a statement's execution paths (issue 30,
"same meaning, proven"): a directory's ``conftest.py`` calls :func:`parametrize` from its
``pytest_generate_tests``, or a module is marked ``pytest.mark.execution_paths("auto", "off")``
(``tests/conftest.py``, which also makes :func:`execution_mode` the suite's autouse fixture), and
each test that uses the Spark session then runs once per ``spark.sqlext.execution.local`` setting
given, with ids ``[auto]``, ``[force]``, ``[off]``. ``SQLEXT_TEST_EXECUTION`` (:mod:`tests.support.spark`), when set, pins
the whole run to one path instead.
"""

from __future__ import annotations

import pytest

from tests.support.spark import execution_conf


def parametrize(metafunc, modes: tuple[str, ...]) -> None:
    """Give each test of ``metafunc`` that uses the Spark session one run per mode of
    ``modes`` (``auto``, ``force``, ``off``)."""
    if "spark" in metafunc.fixturenames and not execution_conf():
        metafunc.parametrize("execution_mode", modes, indirect=True)


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
