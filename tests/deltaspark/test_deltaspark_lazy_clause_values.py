"""A clause's expressions are evaluated only for the rows the clause takes (issue 31, item 1): each
case of :mod:`tests.support.lazy_clause_cases` (MERGE clauses of every kind, UPDATE's SET under
its WHERE, with values and conditions that fail when evaluated for other rows) run by delta-spark
4.4 and by sqlext (ANSI mode, both) on copies of one table: both succeed with the same rows and
version, or both fail with the same error condition and commit nothing.
"""

from __future__ import annotations

import pytest

import sqlext
from sqlext.errors import SqlextError
from tests.support.clause_oracle import (assert_same_outcome, copy_base, delta_spark_outcomes,
                                         make_bases)
from tests.support.deltaspark import delta_path
from tests.support.lazy_clause_cases import CASES


@pytest.fixture(scope="module")
def bases(spark, tmp_path_factory) -> dict:
    return make_bases(spark, tmp_path_factory.mktemp("lazy-clause-bases"), CASES)


@pytest.fixture(scope="module")
def outcomes(delta_spark, bases, tmp_path_factory) -> dict:
    return delta_spark_outcomes(
        delta_spark, CASES, bases, tmp_path_factory.mktemp("lazy-clause-delta-spark"),
        lambda case, path: ("sql", {"sql": case.sql.format(t=delta_path(path))}))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_same_outcome_as_delta_spark(spark, bases, outcomes, tmp_path, case):
    path = tmp_path / case.name
    before = copy_base(bases, case, path)
    try:
        sqlext.sql(spark, case.sql.format(t=delta_path(path))).collect()
        mine = None
    except SqlextError as exc:
        mine = exc
    assert_same_outcome(spark, case, outcomes[case.name], path, before, mine)
