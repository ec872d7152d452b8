"""Which statements leave a commit (issue 31, item 2), on sqlext alone: every case of
:mod:`tests.support.empty_commit_cases` commits exactly when delta-spark 4.4 does (what the case
table records; ``tests/deltaspark/test_deltaspark_empty_commits.py`` checks it against
delta-spark itself), and with ``spark.databricks.delta.skipRecordingEmptyCommits=false`` every
statement commits, as delta-spark's does then.
"""

from __future__ import annotations

import json

import pytest

import sqlext
from tests.support.deltaspark import delta_path
from tests.support.empty_commit_cases import (CASES, CASES_BY_NAME, base_statements,
                                               empty_frame_schema, write_arguments)
from tests.support.spark import spark_conf

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's

SKIP_CONF = "spark.databricks.delta.skipRecordingEmptyCommits"


def _latest(path) -> int:
    log = path / "_delta_log"
    return max((int(p.stem) for p in log.glob("*.json")), default=-1) if log.exists() else -1


def _actions(path, version: int) -> list[dict]:
    text = (path / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines()]


def _run(spark, case, path) -> int:
    """Make the case's base table at ``path``, run its step; the version before the step."""
    if case.base is not None:
        for statement in base_statements(case.base, delta_path(path)):
            sqlext.sql(spark, statement).collect()
    before = _latest(path)
    if case.sql is not None:
        sqlext.sql(spark, case.sql.format(t=delta_path(path))).collect()
    else:
        sqlext.write(spark.createDataFrame([], empty_frame_schema(case)), str(path),
                     mode=case.mode, **write_arguments(case))
    return before


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_commits_exactly_when_delta_spark_does(spark, tmp_path, case):
    path = tmp_path / "t"
    before = _run(spark, case, path)
    after = _latest(path)
    assert after - before == (1 if case.commits else 0)
    if case.commits:
        info = next(a["commitInfo"] for a in _actions(path, after) if "commitInfo" in a)
        assert info["operation"] == case.operation


SETTING_FALSE_CASES = ["insert_select_empty", "append_empty_dataframe_partitioned",
                       "overwrite_empty_dataframe_on_empty_table",
                       "replace_where_data_matching_nothing", "update_matching_nothing",
                       "delete_all_on_empty_table", "delete_matching_nothing_dv",
                       "merge_matching_nothing", "merge_insert_only_all_matching",
                       "merge_clauses_false_for_matched_row_dv"]


@pytest.mark.parametrize("name", SETTING_FALSE_CASES)
def test_setting_false_commits_every_statement(spark, tmp_path, name):
    case = CASES_BY_NAME[name]
    path = tmp_path / "t"
    with spark_conf(spark, {SKIP_CONF: "false"}):
        before = _run(spark, case, path)
    after = _latest(path)
    assert after == before + 1
    actions = _actions(path, after)
    assert [list(a) for a in actions] == [["commitInfo"]]   # nothing but the commitInfo
    info = actions[0]["commitInfo"]
    first = (case.sql or "INSERT").split()[0].upper()
    assert info["operation"] == {"INSERT": "WRITE"}.get(first, first)


def test_merge_reaching_rows_commits_without_rewriting(spark, tmp_path):
    """The commit of a MERGE that reaches rows but changes none holds no file action: the rows
    stay in their files, time travel and the change feed see the same rows."""
    case = CASES_BY_NAME["merge_clauses_false_for_matched_row_cdf"]
    path = tmp_path / "t"
    before = _run(spark, case, path)
    assert _latest(path) == before + 1
    assert [list(a) for a in _actions(path, before + 1)] == [["commitInfo"]]
    now = sorted(sqlext.read(spark, str(path)).collect())
    assert now == sorted(sqlext.read(spark, str(path), versionAsOf=before).collect())
    assert sqlext.changes(spark, str(path), startingVersion=before + 1).count() == 0
    metrics = next(a["commitInfo"] for a in _actions(path, before + 1)
                   if "commitInfo" in a)["operationMetrics"]
    assert metrics["numTargetRowsUpdated"] == "0" and metrics["numTargetFilesRemoved"] == "0"


def test_empty_write_leaves_no_empty_file_in_the_table(spark, tmp_path):
    """Spark writes a file of no rows for an empty unpartitioned output: delta-spark leaves it
    out of the commit (numFiles still counts it), and so does sqlext, which also deletes it."""
    case = CASES_BY_NAME["append_empty_dataframe_creates_table"]
    path = tmp_path / "t"
    _run(spark, case, path)
    actions = _actions(path, 0)
    assert not [a for a in actions if "add" in a]
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    assert info["operationMetrics"]["numFiles"] == "1"
    assert info["operationMetrics"]["numOutputRows"] == "0"
    assert not list(path.glob("*.parquet"))
    assert sqlext.read(spark, str(path)).count() == 0
