"""Running :mod:`tests.support.lazy_clause_cases`-style cases on delta-spark 4.4 and on sqlext
over copies of the same base tables, and comparing the outcomes: both succeed with the same rows
and version, or both fail with the same error condition and commit nothing.

Used by ``tests/deltaspark/test_deltaspark_lazy_clause_values.py`` and
``tests/deltaspark/test_deltaspark_merge_by_source_eval.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import sqlext
from sqlext.errors import SqlextError
from tests.support import assert_same_rows
from tests.support.deltaspark import DeltaSparkError, delta_path
from tests.support.lazy_clause_cases import base_key, base_statements, properties


def latest_version(path: Path) -> int:
    """The table's latest version (its highest commit file)."""
    return max(int(p.stem) for p in (path / "_delta_log").glob("*.json"))


def make_bases(spark, root: Path, cases) -> dict:
    """One base table per :func:`base_key` of ``cases``, made by sqlext under ``root``."""
    made = {}
    for case in cases:
        if base_key(case) not in made:
            path = root / f"base{len(made)}"
            for statement in base_statements(delta_path(path), properties(case), case.split):
                sqlext.sql(spark, statement).collect()
            made[base_key(case)] = path
    return made


def copy_base(bases: dict, case, path: Path) -> int:
    """A copy of ``case``'s base table at ``path``; its version."""
    shutil.copytree(bases[base_key(case)], path)
    return latest_version(path)


def delta_spark_outcomes(delta_spark, cases, bases: dict, work: Path, request) -> dict:
    """{case name: (DeltaSparkError or None, rows after, latest version)}: each case run by
    delta-spark (ANSI mode) on its own copy under ``work``, in two round trips. ``request(case,
    path)``: the worker request running the case on the table at ``path``."""
    paths = {c.name: work / c.name for c in cases}
    for case in cases:
        copy_base(bases, case, paths[case.name])
    answers = delta_spark.batch([("sql", {"sql": "SET spark.sql.ansi.enabled = true"})]
                                + [request(c, paths[c.name]) for c in cases])[1:]
    reads = delta_spark.batch([("sql", {"sql": f"SELECT * FROM {delta_path(paths[c.name])}"})
                               for c in cases], check=True)
    return {c.name: (answer if isinstance(answer, DeltaSparkError) else None, rows,
                     latest_version(paths[c.name]))
            for c, answer, rows in zip(cases, answers, reads)}


def assert_same_outcome(spark, case, outcome: tuple, path: Path, before: int,
                        mine: SqlextError | None) -> None:
    """sqlext's run of ``case`` on ``path`` (at version ``before``; ``mine``: its error or None)
    ended as delta-spark's ``outcome`` did."""
    theirs, their_rows, their_version = outcome
    assert (theirs is None) == case.succeeds, theirs      # the case's table is right
    if not case.succeeds:
        assert mine is not None and latest_version(path) == before == their_version
        if case.error:      # the same error condition
            assert case.error in f"{theirs.condition} {theirs.message}", theirs
            assert case.error in str(mine), mine
        return
    assert mine is None, mine
    assert latest_version(path) == their_version
    assert_same_rows(sqlext.read(spark, str(path)).toArrow(), their_rows, sort_by=["id"])
