"""Issue 27 against the oracle: the same failing delta-spark code, run on delta-spark 4.4 and on
sqlext after ``sqlext.install(spark)``, raises errors with the same condition and SQLSTATE, and
sqlext's is an instance of every ``pyspark.errors`` class delta-spark's is (so the ``except``
clauses written for delta-spark catch it).

The cases are :data:`tests.support.error_cases.CASES`; their recorded values are checked here
against delta-spark too, so that the fast local test
(``tests/engine/test_pyspark_error_classes.py``) stays delta-spark's.
"""

from __future__ import annotations

import json
import uuid

import pytest

from tests.support import error_cases
from tests.support.deltaspark import VENV


@pytest.fixture(scope="module")
def oracle(delta_spark, tmp_path_factory):
    """delta-spark's error for each case (one round trip), and for the commit conflict."""
    root = tmp_path_factory.mktemp("error-classes-delta")
    requests = [("exec", {"code": error_cases.program(case, str(root / f"c{i}"),
                                                      f"e_{uuid.uuid4().hex[:8]}")})
                for i, case in enumerate(error_cases.CASES)]
    requests.append(("exec", {"code": error_cases.concurrent_program(
        error_cases.DELTA_CONCURRENT_APPEND, str(root / "conflict"))}))
    answers = delta_spark.batch(requests, check=True)
    return dict(zip([c.name for c in error_cases.CASES] + ["conflict"], answers))



@pytest.mark.parametrize("case", error_cases.CASES, ids=lambda c: c.name)
def test_same_condition_sqlstate_and_pyspark_class(oracle, drop_in, tmp_path, case):
    theirs = oracle[case.name]
    assert theirs is not None, "delta-spark raised nothing"
    # the values recorded in the case are delta-spark's
    assert (theirs["condition"], theirs["sqlstate"], tuple(theirs["classes"])) == (
        case.condition, case.sqlstate, case.classes), theirs
    ours = error_cases.run_here(drop_in, error_cases.program(
        case, str(tmp_path / "t"), f"e_{uuid.uuid4().hex[:8]}"))
    assert ours is not None, "sqlext raised nothing"
    assert (ours["condition"], ours["sqlstate"]) == (theirs["condition"], theirs["sqlstate"])
    assert set(theirs["classes"]) <= set(ours["classes"]), (theirs, ours)


def _sqlstate(condition: str) -> str:
    """The SQLSTATE delta-spark's error classes give ``condition`` (from its jar)."""
    import zipfile

    (jar,) = (VENV / "jars").glob("delta-spark_*.jar")
    with zipfile.ZipFile(jar) as archive:
        classes = json.loads(archive.read("error/delta-error-classes.json"))
    return classes[condition.split(".")[0]]["sqlState"]


def test_a_commit_conflict(oracle, drop_in, tmp_path):
    theirs = oracle["conflict"]
    ours = error_cases.run_here(drop_in, error_cases.concurrent_program(
        error_cases.SQLEXT_CONCURRENT_APPEND, str(tmp_path / "t")))
    assert theirs["type"] == ours["type"] == "ConcurrentAppendException"
    assert theirs["condition"] == ours["condition"] == "DELTA_CONCURRENT_APPEND.WITHOUT_HINT"
    # delta-spark's Python exception has no SQLSTATE of its own; its condition's is 2D521
    assert ours["sqlstate"] == _sqlstate(theirs["condition"]) == "2D521"
    assert set(theirs["classes"]) <= set(ours["classes"]) and "PySparkException" in ours["classes"]
