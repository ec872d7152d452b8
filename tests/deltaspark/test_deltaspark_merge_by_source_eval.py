"""Which target rows a WHEN NOT MATCHED BY SOURCE condition is evaluated on (issue 31, item 1):
each case runs on delta-spark 4.4 and on sqlext (both execution paths, ANSI mode) over copies of
one table: both succeed with the same rows and version, or both fail with the same error
condition and commit nothing.

Measured on delta-spark 4.4: it evaluates such a condition on every row of the table, so one
failing on a row of a file no key of the source reaches fails the MERGE (sqlext skipped those
files by the conditions before; it now does only for conditions that cannot fail,
:mod:`sqlext.engine.merge.infallible`). On a table with deletion vectors, a MERGE of one such
clause only does not see the rows of files its condition's conjuncts rule out. A condition
given as a pyspark Column naming without a qualifier a column both sides have is the target's,
and evaluated on unmatched source rows too (NULL there).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import parse_one

import sqlext
from sqlext.engine.local.policy import MODE_CONF
from sqlext.engine.merge.infallible import cannot_fail
from sqlext.errors import SqlextError
from sqlext.tables import DeltaTable
from tests.support.clause_oracle import (assert_same_outcome, copy_base, delta_spark_outcomes,
                                         make_bases)
from tests.support.deltaspark import delta_path
from tests.support.lazy_clause_cases import DIV0, INSERT, Case, merge, src
from tests.support.spark import spark_conf

FAILS = "WHEN NOT MATCHED BY SOURCE AND 10 / t.b > 1 AND t.id = 3 THEN DELETE"
UPDATE = "WHEN MATCHED THEN UPDATE SET b = s.b"
ONE = src((1, 5))


# a table of one file per row (row 2's b is 0): the condition fails on row 2 only, in a file no
# source key reaches
SQL_CASES = [
    Case("condition_fails_in_unreached_file", merge(ONE, FAILS), succeeds=False, error=DIV0,
         split=True),
    Case("condition_fails_in_unreached_file_with_insert", merge(ONE, f"{INSERT} {FAILS}"),
         succeeds=False, error=DIV0, split=True),
    Case("condition_fails_in_unreached_file_with_update", merge(ONE, f"{UPDATE} {FAILS}"),
         succeeds=False, error=DIV0, split=True),
    Case("second_clause_fails_in_unreached_file", merge(
        ONE, f"{FAILS} WHEN NOT MATCHED BY SOURCE AND t.id = 1 THEN DELETE"),
         succeeds=False, error=DIV0, split=True),
    Case("condition_fails_in_unreached_file_one_file", merge(ONE, FAILS), succeeds=False,
         error=DIV0),
    Case("infallible_conditions", merge(
        ONE, "WHEN NOT MATCHED BY SOURCE AND t.id = 3 THEN DELETE "
             "WHEN NOT MATCHED BY SOURCE AND (t.b IS NULL OR t.d BETWEEN 1.5 AND 2.5) "
             "THEN UPDATE SET b = 7"), split=True),
    # deletion vectors, one such clause only: the files its conjuncts rule out are not read
    Case("condition_fails_in_unreached_file_dv", merge(ONE, FAILS), deletion_vectors=True,
         split=True),
    Case("condition_fails_in_unreached_file_or_dv", merge(
        ONE, "WHEN NOT MATCHED BY SOURCE AND 10 / t.b > 1 AND (t.id = 3 OR t.id = 1) "
             "THEN DELETE"), deletion_vectors=True, split=True),
    Case("condition_fails_in_kept_file_dv", merge(
        ONE, "WHEN NOT MATCHED BY SOURCE AND 10 / t.b > 1 AND t.id >= 2 THEN DELETE"),
         succeeds=False, error=DIV0, deletion_vectors=True, split=True),
    Case("second_clause_fails_in_unreached_file_dv", merge(
        ONE, f"{FAILS} WHEN NOT MATCHED BY SOURCE AND t.id = 1 THEN DELETE"),
         succeeds=False, error=DIV0, deletion_vectors=True, split=True),
    Case("condition_fails_in_unreached_file_with_update_dv", merge(ONE, f"{UPDATE} {FAILS}"),
         succeeds=False, error=DIV0, deletion_vectors=True, split=True),
]

_API = """
source = spark.sql("SELECT * FROM VALUES (1L, 5), (9L, 5) AS s(id, b)")
builder = DeltaTable.forPath(spark, {path!r}).alias("t").merge(source.alias("s"), "t.id = s.id")
{more}builder.whenNotMatchedBySourceDelete(condition={condition}).execute()
"""
_INSERT_API = 'builder = builder.whenNotMatchedInsert(values={"id": "s.id", "b": "s.b"})\n'
_COLUMN = 'F.expr("10 / coalesce(id, 0) > 1")'
# the Python API, a Column condition naming a column both sides have: the target's
API_CASES = [
    Case("column_condition_for_unmatched_source_row", _API.replace("{more}", _INSERT_API)
         .replace("{condition}", _COLUMN), succeeds=False, error=DIV0),
    Case("column_condition_without_insert", _API.replace("{more}", "")
         .replace("{condition}", _COLUMN), succeeds=False, error=DIV0),
    Case("string_condition_for_unmatched_source_row", _API.replace("{more}", _INSERT_API)
         .replace("{condition}", '"10 / coalesce(id, 0) > 1"'), succeeds=False, error=DIV0),
    # deletion vectors, a MERGE of such clauses only: no unmatched source row is joined
    Case("column_condition_dv", _API.replace("{more}", "").replace("{condition}", _COLUMN),
         deletion_vectors=True),
    Case("column_condition_no_unmatched_source_row", _API.replace("(9L, 5)", "(2L, 5)")
         .replace("{more}", _INSERT_API).replace("{condition}", _COLUMN)),
]
CASES = SQL_CASES + API_CASES


def _statement(case: Case, path: Path) -> str:
    if case in API_CASES:
        return case.sql.replace("{path!r}", repr(str(path)))
    return case.sql.format(t=delta_path(path))


@pytest.fixture(scope="module")
def bases(spark, tmp_path_factory) -> dict:
    return make_bases(spark, tmp_path_factory.mktemp("by-source-bases"), CASES)


def _request(case: Case, path: Path) -> tuple:
    if case in API_CASES:
        return "exec", {"code": _statement(case, path)}
    return "sql", {"sql": _statement(case, path)}


@pytest.fixture(scope="module")
def outcomes(delta_spark, bases, tmp_path_factory) -> dict:
    return delta_spark_outcomes(delta_spark, CASES, bases,
                                tmp_path_factory.mktemp("by-source-delta-spark"), _request)


def _run_on_sqlext(spark, case: Case, path: Path) -> SqlextError | None:
    try:
        if case in API_CASES:
            scope = {"spark": spark, "DeltaTable": DeltaTable, "F": F}
            exec(_statement(case, path), scope)  # noqa: S102 - the same code as on delta-spark
        else:
            sqlext.sql(spark, _statement(case, path)).collect()
    except SqlextError as exc:
        return exc
    return None


@pytest.mark.parametrize("mode", ["off", "force"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_same_outcome_as_delta_spark(spark, bases, outcomes, tmp_path, case, mode):
    path = tmp_path / case.name
    before = copy_base(bases, case, path)
    with spark_conf(spark, {"spark.sql.ansi.enabled": "true", MODE_CONF: mode}):
        mine = _run_on_sqlext(spark, case, path)
    assert_same_outcome(spark, case, outcomes[case.name], path, before, mine)


TYPES = {"id": T.LongType(), "s": T.StringType(), "f": T.BooleanType(), "d": T.DateType(),
         "x": T.DecimalType(10, 2)}


@pytest.mark.parametrize("condition, infallible", [
    ("t.id = 3", True), ("id > -2 AND NOT t.s = 'a'", True), ("t.id IN (1, 2) OR f = TRUE", True),
    ("t.x BETWEEN 1.5 AND 2", True), ("t.s IS NULL", True), ("NOT (t.id IS NULL)", True),
    ("t.id <=> NULL", True), ("3 < t.id", True),
    ("10 / t.id > 1", False), ("t.s = 1", False), ("t.id = '1'", False),
    ("t.d = '2024-01-01'", False),
    ("t.s = -'a'", False), ("o.id = 3", False), ("t.id IN (SELECT 1)", False),
    ("CAST(t.s AS INT) = 1", False), ("t.id + 0 = 3", False), ("t.id = t.id", False),
])
def test_cannot_fail(condition, infallible):
    """Only comparisons of a target column with a literal of its own kind count as safe."""
    assert cannot_fail(parse_one(condition, read="spark"), TYPES, "t") is infallible
