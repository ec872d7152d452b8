"""Every command's commit is assembled in one place (sqlext.engine.commit): engineInfo always,
userMetadata whenever the session, a scope or the caller sets one — OPTIMIZE, RESTORE and VACUUM
included. Read back from the log files and with delta-rs' ``DeltaTable.history()``."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from deltalake import DeltaTable as RsTable

import sqlext
from sqlext.engine.commit import commit_metadata_scope
from tests.support.table_checks import commit_info, latest_version
from tests.support.spark import spark_conf

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's

USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"
REPO_ROOT = Path(__file__).resolve().parents[2]


def _rows(spark, rows):
    return spark.createDataFrame(rows, "id INT, v STRING")


def _sql(spark, text: str, path) -> None:
    sqlext.sql(spark, text.format(t=f"delta.`{path}`"))


def _two_versions(spark, path) -> None:
    sqlext.write(_rows(spark, [(1, "a"), (2, "b")]), str(path))
    sqlext.write(_rows(spark, [(3, "c")]), str(path), mode="append")


# operation -> (setup, the operation); the operation's commits are those after the setup's
OPERATIONS = {
    "write": (lambda spark, p: None,
              lambda spark, p: sqlext.write(_rows(spark, [(1, "a")]), str(p))),
    "CREATE TABLE": (lambda spark, p: None,
                     lambda spark, p: _sql(spark, "CREATE TABLE {t} (id INT, v STRING) USING DELTA",
                                           p)),
    "DELETE": (_two_versions, lambda spark, p: _sql(spark, "DELETE FROM {t} WHERE id = 1", p)),
    "UPDATE": (_two_versions, lambda spark, p: _sql(spark, "UPDATE {t} SET v = 'z' WHERE id = 2", p)),
    "MERGE": (_two_versions, lambda spark, p: _sql(
        spark, "MERGE INTO {t} AS t USING (SELECT 2 AS id, 'm' AS v) AS s ON t.id = s.id "
               "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *", p)),
    "OPTIMIZE": (_two_versions, lambda spark, p: _sql(spark, "OPTIMIZE {t}", p)),
    "RESTORE": (_two_versions, lambda spark, p: _sql(spark, "RESTORE TABLE {t} TO VERSION AS OF 0",
                                                     p)),
    "VACUUM": (_two_versions, lambda spark, p: _sql(spark, "VACUUM {t}", p)),
}
# the operation names the commits record (VACUUM makes two commits)
RECORDED = {"write": ["WRITE"], "CREATE TABLE": ["CREATE TABLE"], "DELETE": ["DELETE"],
            "UPDATE": ["UPDATE"], "MERGE": ["MERGE"], "OPTIMIZE": ["OPTIMIZE"],
            "RESTORE": ["RESTORE"], "VACUUM": ["VACUUM START", "VACUUM END"]}


def _run(spark, path, name: str, user_metadata: str) -> tuple[list[int], list[int]]:
    """Set up the table (no userMetadata set), then run operation ``name`` with the session's
    userMetadata set; the setup's versions and the operation's."""
    setup, operation = OPERATIONS[name]
    setup(spark, path)
    before = latest_version(path) if (Path(path) / "_delta_log").exists() else -1
    with spark_conf(spark, {USER_METADATA_CONF: user_metadata}):
        operation(spark, path)
    return list(range(before + 1)), list(range(before + 1, latest_version(path) + 1))


def _expected_engine_info(spark) -> str:
    return f"sqlext/{importlib.metadata.version('sqlext')} Apache-Spark/{spark.version}"


def _history(path) -> dict[int, dict]:
    return {h["version"]: h for h in RsTable(str(path)).history()}


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_every_commit_carries_engine_info_and_the_session_user_metadata(spark, table_path, name):
    text = f"lineage of {name} #42"
    setup_versions, versions = _run(spark, table_path, name, text)
    assert [commit_info(table_path, v)["operation"] for v in versions] == RECORDED[name]
    history = _history(table_path)
    for v in setup_versions + versions:
        for info in (commit_info(table_path, v), history[v]):
            assert info["engineInfo"] == _expected_engine_info(spark), (name, v, info)
            # the setup ran without a userMetadata setting: none recorded
            assert info.get("userMetadata") == (text if v in versions else None), (name, v, info)


def test_a_scope_tags_an_optimize_like_a_dbt_post_hook(spark, table_path):
    _two_versions(spark, table_path)
    with spark_conf(spark, {USER_METADATA_CONF: "session text"}), \
            commit_metadata_scope('{"invocation_id": "abc", "node": "model.p.m"}'):
        _sql(spark, "OPTIMIZE {t}", table_path)
    info = commit_info(table_path, 2)
    assert info["operation"] == "OPTIMIZE"
    assert info["userMetadata"] == '{"invocation_id": "abc", "node": "model.p.m"}'
    assert _history(table_path)[2]["userMetadata"] == info["userMetadata"]


def test_the_write_option_wins_over_the_session_setting(spark, table_path):
    with spark_conf(spark, {USER_METADATA_CONF: "session text"}):
        sqlext.write(_rows(spark, [(1, "a")]), str(table_path), userMetadata="explicit text")
        sqlext.write(_rows(spark, [(2, "b")]), str(table_path), mode="append")
    assert commit_info(table_path, 0)["userMetadata"] == "explicit text"
    assert commit_info(table_path, 1)["userMetadata"] == "session text"


def test_the_version_is_pyprojects_everywhere(spark):
    from dbt.adapters.sqlext.__version__ import version as adapter_version

    from sqlext.log.transaction import ENGINE_INFO
    from sqlext.sql.shell import VERSION as shell_version

    written = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert sqlext.__version__ == written == importlib.metadata.version("sqlext")
    assert ENGINE_INFO == f"sqlext/{written}"
    assert adapter_version == written and shell_version == written
