"""A clause's expressions are evaluated only for the rows the clause takes (issue 31, item 1): each
case of :mod:`tests.support.lazy_clause_cases` (MERGE clauses of every kind, UPDATE's SET under
its WHERE, with values and conditions that fail when evaluated for other rows) run by delta-spark
4.4 and by sqlext (ANSI mode, both) on copies of one table: both succeed with the same rows and
version, or both fail with the same error condition and commit nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import sqlext
from sqlext.errors import SqlextError
from tests.support import assert_same_rows
from tests.support.deltaspark import DeltaSparkError, delta_path
from tests.support.lazy_clause_cases import CASES, DV_PROPERTIES, base_statements, base_key


def _latest(path: Path) -> int:
    return max(int(p.stem) for p in (path / "_delta_log").glob("*.json"))


@pytest.fixture(scope="module")
def bases(spark, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("lazy-clause-bases")
    made = {}
    for props in ("", DV_PROPERTIES):
        for split in (False, True):
            path = root / f"dv_{bool(props)}_split_{split}"
            for statement in base_statements(delta_path(path), props, split):
                sqlext.sql(spark, statement).collect()
            made[props, split] = path
    return made


@pytest.fixture(scope="module")
def delta_spark_outcomes(delta_spark, bases, tmp_path_factory) -> dict:
    """{case: (result or DeltaSparkError, rows after, latest version)}, in two requests."""
    work = tmp_path_factory.mktemp("lazy-clause-delta-spark")
    paths = {}
    for case in CASES:
        paths[case.name] = work / case.name
        shutil.copytree(bases[base_key(case)], paths[case.name])
    answers = delta_spark.batch(
        [("sql", {"sql": "SET spark.sql.ansi.enabled = true"})]
        + [("sql", {"sql": c.sql.format(t=delta_path(paths[c.name]))}) for c in CASES])[1:]
    reads = delta_spark.batch([("sql", {"sql": f"SELECT * FROM {delta_path(paths[c.name])}"})
                               for c in CASES], check=True)
    return {c.name: (answer, rows, _latest(paths[c.name]))
            for c, answer, rows in zip(CASES, answers, reads)}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_same_outcome_as_delta_spark(spark, bases, delta_spark_outcomes, tmp_path, case):
    theirs, their_rows, their_version = delta_spark_outcomes[case.name]
    assert isinstance(theirs, DeltaSparkError) != case.succeeds, theirs   # the table is right
    path = tmp_path / case.name
    shutil.copytree(bases[base_key(case)], path)
    before = _latest(path)
    try:
        sqlext.sql(spark, case.sql.format(t=delta_path(path))).collect()
        mine = None
    except SqlextError as exc:
        mine = exc
    if not case.succeeds:
        assert mine is not None and _latest(path) == before == their_version
        if case.error:      # the same error condition
            assert case.error in f"{theirs.condition} {theirs.message}", theirs
            assert case.error in str(mine), mine
        return
    assert mine is None, mine
    assert _latest(path) == their_version
    assert_same_rows(sqlext.read(spark, str(path)).toArrow(), their_rows, sort_by=["id"])
