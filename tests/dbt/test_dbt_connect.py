"""``method: connect`` (issue 30): the ``dbt`` command on a running ``sqlext-connect-server``
starts no Spark of its own; ``method: session`` says that it starts one.

Both runs are the ``dbt`` command line in its own process, as users run it. The profile's keys
are dbt-spark's for a server (``host``, ``port``, ``use_ssl``, ``token``, ``user``).
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sqlext.credentials import SqlextCredentials
from tests.support import read_deltalake

DBT = Path(sys.executable).with_name("dbt")
STARTING = "sqlext: starting Spark in the dbt process"
MODELS = {
    "settings.sql": "select current_timezone() as tz, 1 as id",
    "inc.sql": "{{ config(materialized='incremental', incremental_strategy='insert_overwrite', "
               "partition_by=['p']) }} select 1 as id, 'a' as p",
}


def credentials(**profile) -> SqlextCredentials:
    return SqlextCredentials.from_dict({"schema": "s", **profile})


def test_connect_profile_keys_make_the_connect_url():
    assert credentials(method="connect").connect_url == "sc://localhost:15002/"
    given = credentials(method="connect", host="spark.internal", port=443, use_ssl=True,
                        token="a/b=", user="dbt")
    assert given.connect_url == "sc://spark.internal:443/;use_ssl=true;token=a%2Fb%3D;user_id=dbt"
    assert given.unique_field == "spark.internal:443"
    assert not credentials().is_connect and credentials().method == "session"


def test_a_url_as_host_or_an_unknown_method_is_refused():
    with pytest.raises(DbtRuntimeError, match="give `host: HOST` and `port: PORT`"):
        credentials(method="connect", host="sc://localhost:15002")
    with pytest.raises(Exception, match="thrift"):
        credentials(method="thrift")


def _project(path: Path, output: dict) -> Path:
    (path / "models").mkdir(parents=True)
    for name, sql in MODELS.items():
        (path / "models" / name).write_text(sql)
    (path / "dbt_project.yml").write_text(yaml.safe_dump({
        "name": "conn", "version": "1.0", "config-version": 2, "profile": "conn",
        "models": {"conn": {"+materialized": "table"}}}))
    (path / "profiles.yml").write_text(yaml.safe_dump({"conn": {"target": "dev", "outputs": {
        "dev": {"type": "sqlext", "schema": f"conn_{uuid.uuid4().hex[:8]}", "threads": 2,
                **output}}}}))
    return path


def _dbt_run(project: Path) -> str:
    done = subprocess.run([str(DBT), "run", "--project-dir", str(project), "--profiles-dir",
                           str(project)], cwd=project, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return done.stdout


def _table(warehouse: Path, name: str) -> Path:
    found = [p.parent for p in warehouse.glob(f"*/{name}/_delta_log")]
    assert len(found) == 1, found
    return found[0]


def test_dbt_on_a_connect_server_starts_no_spark(tmp_path):
    from tests.support.connect_server import SqlextConnectServer

    warehouse = tmp_path / "server-warehouse"
    server = SqlextConnectServer(warehouse, tmp_path / "server.log")
    try:
        project = _project(tmp_path / "project", {
            "method": "connect", "host": "127.0.0.1", "port": server.port,
            "warehouse": str(tmp_path / "ignored"),
            "server_side_parameters": {"spark.sql.session.timeZone": "Asia/Tokyo"}})
        out = _dbt_run(project)
        out += _dbt_run(project)    # incremental again: SET, a dynamic partition overwrite
    finally:
        server.stop()
    assert STARTING not in out
    # each connection's server session is released after its results: no late ReleaseExecute
    assert "SESSION_CLOSED" not in (tmp_path / "server.log").read_text()
    assert "the server at 127.0.0.1" in out and "spark.sql.warehouse.dir" in out
    assert not (tmp_path / "ignored").exists()
    # the connection's session got the profile's setting; the tables are the server's
    assert read_deltalake(_table(warehouse, "settings")).to_pylist() == [{"tz": "Asia/Tokyo",
                                                                          "id": 1}]
    assert read_deltalake(_table(warehouse, "inc")).to_pylist() == [{"id": 1, "p": "a"}]


def test_dbt_says_when_it_starts_spark_in_process(tmp_path):
    project = _project(tmp_path / "project", {"warehouse": str(tmp_path / "warehouse")})
    out = _dbt_run(project)
    assert out.count(STARTING) == 1
    assert read_deltalake(_table(tmp_path / "warehouse", "settings")).num_rows == 1


@pytest.mark.parametrize("answers,expected", [
    ("1\n/data/wh\nanalytics\n2\n", {"method": "session", "warehouse": "/data/wh"}),
    ("2\nspark.internal\n15003\nanalytics\n2\n",
     {"method": "connect", "host": "spark.internal", "port": 15003}),
])
def test_dbt_init_offers_both_methods(answers, expected):
    """``dbt init``'s questions from the adapter's profile_template.yml, answered on stdin."""
    from click.testing import CliRunner
    from dbt.include.sqlext import PACKAGE_PATH
    from dbt.task.init import InitTask

    template = yaml.safe_load((Path(PACKAGE_PATH) / "profile_template.yml").read_text())
    with CliRunner().isolation(input=answers):
        # an explicit {}: the method's default dict is shared between calls
        target = InitTask.generate_target_from_input(object.__new__(InitTask),
                                                     template["prompts"], {})
    assert target == {**expected, "schema": "analytics", "threads": 2}
    made = credentials(**{**template["fixed"], **target})
    assert made.is_connect == (expected["method"] == "connect")
