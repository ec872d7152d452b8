"""Which statements leave a commit (issue 31, item 2): each case of
:mod:`tests.support.empty_commit_cases` (INSERT / append / overwrite / replaceWhere of no rows,
DELETE / UPDATE matching nothing, MERGEs that reach rows without changing them, ...) is run by
delta-spark 4.4 and by sqlext on copies of one table; both must commit or not alike, with the
same operation and the same values of the metrics both write (file layout aside: a MERGE that
reaches rows without changing them rewrites their files in delta-spark, while sqlext commits
without rewriting them).

Run twice: with ``spark.databricks.delta.skipRecordingEmptyCommits`` at its default (true) and
set to false (then every case commits, in both engines).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import sqlext
from tests.support.deltaspark import DeltaSparkError, delta_path
from tests.support.empty_commit_cases import (BASES, CASES, base_statements,
                                               delta_spark_write_code, empty_frame_schema,
                                               write_arguments)
from tests.support.spark import spark_conf

SKIP_CONF = "spark.databricks.delta.skipRecordingEmptyCommits"
#: metrics that depend on timing, file sizes or file layout, not on what the statement means
VOLATILE = ("TimeMs", "Bytes", "numFiles", "numAddedFiles", "numRemovedFiles", "numCopiedRows",
            "numTargetFilesAdded", "numTargetFilesRemoved", "numTargetRowsCopied",
            "numOutputRows", "numTargetChangeFilesAdded", "numAddedChangeFiles")


def _versions(path: Path) -> list[int]:
    return sorted(int(p.stem) for p in (path / "_delta_log").glob("*.json")) \
        if (path / "_delta_log").exists() else []


def _commit_info(path: Path, version: int) -> dict:
    for line in (path / "_delta_log" / f"{version:020d}.json").read_text().splitlines():
        action = json.loads(line)
        if "commitInfo" in action:
            return action["commitInfo"]
    return {}


def _outcome(path: Path, before: int) -> dict:
    versions = _versions(path)
    last = versions[-1] if versions else -1
    info = _commit_info(path, last) if last > before else {}
    return {"versions_added": last - before, "operation": info.get("operation"),
            "parameters": info.get("operationParameters", {}),
            "metrics": {k: str(v) for k, v in info.get("operationMetrics", {}).items()}}


@pytest.fixture(scope="module")
def bases(spark, tmp_path_factory) -> dict:
    """Each base table, made once by sqlext; every case works on copies of it."""
    root = tmp_path_factory.mktemp("empty-commit-bases")
    made = {}
    for name in BASES:
        if name is None:
            continue
        for statement in base_statements(name, delta_path(root / name)):
            sqlext.sql(spark, statement).collect()
        made[name] = root / name
    return made


def _copy(bases: dict, base: str | None, to: Path) -> tuple[Path, int]:
    """A copy of ``base`` at ``to`` (nothing for None) and its latest version (-1: no table)."""
    if base is None:
        return to, -1
    shutil.copytree(bases[base], to)
    return to, _versions(to)[-1]


def _delta_spark_request(case, path: Path) -> tuple[str, dict]:
    if case.sql is not None:
        return "sql", {"sql": case.sql.format(t=delta_path(path))}
    return "exec", {"code": delta_spark_write_code(case, str(path))}


@pytest.fixture(scope="module", params=["true", "false"], ids=["skip_default", "skip_false"])
def skip_setting(request):
    return request.param


@pytest.fixture(scope="module")
def delta_spark_outcomes(delta_spark, bases, tmp_path_factory, skip_setting) -> dict:
    """{case name: outcome} of every case run by delta-spark, in one request (the setting
    restored after it: the worker is shared)."""
    work = tmp_path_factory.mktemp(f"empty-commits-delta-spark-{skip_setting}")
    copies = {c.name: _copy(bases, c.base, work / c.name) for c in CASES}
    requests = [("sql", {"sql": f"SET {SKIP_CONF} = {skip_setting}"})]
    requests += [_delta_spark_request(c, copies[c.name][0]) for c in CASES]
    requests += [("sql", {"sql": f"RESET {SKIP_CONF}"})]
    answers = delta_spark.batch(requests)[1:-1]
    outcomes = {}
    for case, answer in zip(CASES, answers):
        if isinstance(answer, DeltaSparkError):
            raise answer
        path, before = copies[case.name]
        outcomes[case.name] = _outcome(path, before)
    return outcomes


def _run_sqlext(spark, case, path: Path) -> None:
    if case.sql is not None:
        sqlext.sql(spark, case.sql.format(t=delta_path(path))).collect()
    else:
        sqlext.write(spark.createDataFrame([], empty_frame_schema(case)), str(path),
                     mode=case.mode, **write_arguments(case))


def _stable(metrics: dict) -> dict:
    return {k: v for k, v in metrics.items() if not any(part in k for part in VOLATILE)}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_commits_as_delta_spark_does(spark, bases, delta_spark_outcomes, skip_setting, tmp_path,
                                     case):
    theirs = delta_spark_outcomes[case.name]
    # the case table says what delta-spark does; with the setting false everything commits
    expected = case.commits or skip_setting == "false"
    assert theirs["versions_added"] == (1 if expected else 0), theirs
    if expected:
        assert theirs["operation"] == (case.operation or theirs["operation"])
    path, before = _copy(bases, case.base, tmp_path / case.name)
    with spark_conf(spark, {SKIP_CONF: skip_setting}):
        _run_sqlext(spark, case, path)
    mine = _outcome(path, before)
    assert mine["versions_added"] == theirs["versions_added"], (mine, theirs)
    assert mine["operation"] == theirs["operation"]
    shared = _stable(theirs["metrics"]).keys() & _stable(mine["metrics"]).keys()
    assert {k: mine["metrics"][k] for k in shared} == {k: theirs["metrics"][k] for k in shared}
    assert sorted(mine["parameters"]) == sorted(theirs["parameters"])
