"""Where a new session keeps its tables (issue 27): one rule for ``sqlext.session()``,
``sqlext-sql``, ``sqlext-thriftserver`` and ``sqlext-connect-server``
(:func:`sqlext.engine.session.choose_warehouse`): a ``--warehouse`` flag or a
``spark.sql.warehouse.dir`` given to the call, then ``$SQLEXT_WAREHOUSE``, then Spark's
configuration files, then ``~/.sqlext/warehouse`` — never ``./spark-warehouse`` of the current
folder. The shell is run twice from two folders to see the same table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlext.engine.session import (DEFAULT_WAREHOUSE, WAREHOUSE_CONF, WAREHOUSE_ENV,
                                   choose_warehouse, configured_warehouse)

SCRIPT = Path(sys.executable).with_name("sqlext-sql")


def _none() -> None:
    return None


def test_the_rule_in_order(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    env = {WAREHOUSE_ENV: "/from/env"}
    assert choose_warehouse("/given", env, lambda: "/spark") == ("/given", "given")
    assert choose_warehouse(None, env, lambda: "/spark") == ("/from/env", WAREHOUSE_ENV)
    assert choose_warehouse(None, {}, lambda: "/spark") == ("/spark", "Spark's configuration")
    assert choose_warehouse(None, {}, _none) == (str(tmp_path / ".sqlext" / "warehouse"),
                                                 "default")
    assert DEFAULT_WAREHOUSE.endswith(os.path.join(".sqlext", "warehouse"))
    # local paths are made absolute (as of now, ~ expanded); URIs are kept
    monkeypatch.chdir(tmp_path)
    assert choose_warehouse("wh", {}, _none)[0] == str(tmp_path / "wh")
    assert choose_warehouse(None, {WAREHOUSE_ENV: "~/w"}, _none)[0] == str(tmp_path / "w")
    assert choose_warehouse("s3a://bucket/wh", {}, _none)[0] == "s3a://bucket/wh"
    assert choose_warehouse(None, {WAREHOUSE_ENV: "file:/x/wh"}, _none)[0] == "file:/x/wh"


def test_spark_configuration_files(tmp_path):
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    assert configured_warehouse({"SPARK_CONF_DIR": str(conf_dir)}) is None
    (conf_dir / "spark-defaults.conf").write_text(
        "# comment\nspark.master local[2]\nspark.sql.warehouse.dir   /data/warehouse  \n")
    assert configured_warehouse({"SPARK_CONF_DIR": str(conf_dir)}) == "/data/warehouse"
    home = tmp_path / "home"
    (home / "conf").mkdir(parents=True)
    (home / "conf" / "spark-defaults.conf").write_text("spark.sql.warehouse.dir=/home/wh\n")
    assert configured_warehouse({"SPARK_HOME": str(home)}) == "/home/wh"
    other = tmp_path / "other.conf"
    other.write_text("spark.sql.warehouse.dir: /other/wh\n")
    submit = f"--properties-file {other} pyspark-shell"
    assert configured_warehouse({"SPARK_CONF_DIR": str(conf_dir),
                                 "PYSPARK_SUBMIT_ARGS": submit}) == "/other/wh"
    submit = f"--conf {WAREHOUSE_CONF}=/submit/wh pyspark-shell"
    assert configured_warehouse({"SPARK_CONF_DIR": str(conf_dir),
                                 "PYSPARK_SUBMIT_ARGS": submit}) == "/submit/wh"
    # and in the rule: below the environment variable
    env = {"SPARK_CONF_DIR": str(conf_dir)}
    assert choose_warehouse(None, env) == ("/data/warehouse", "Spark's configuration")
    assert choose_warehouse(None, {**env, WAREHOUSE_ENV: "/e"})[0] == "/e"


def test_the_shell_and_the_thrift_server_take_the_same_rule(tmp_path, monkeypatch):
    from sqlext.sql import shell
    from sqlext.thrift import server

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv(WAREHOUSE_ENV, raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "no-conf"))
    default = str(tmp_path / "home" / ".sqlext" / "warehouse")

    def thrift(*argv, environ=None):
        return server.server_settings(server.parse_args(list(argv)), environ or {})

    # the shell hands its flag to sqlext.session() as the setting, made absolute
    assert shell._settings(shell.parse_args(["--warehouse", "wh"]))[WAREHOUSE_CONF] == \
        str(tmp_path / "wh")
    assert WAREHOUSE_CONF not in shell._settings(shell.parse_args([]))   # session() decides
    assert thrift()[WAREHOUSE_CONF] == default
    assert thrift("--warehouse", "wh")[WAREHOUSE_CONF] == str(tmp_path / "wh")
    assert thrift("--conf", f"{WAREHOUSE_CONF}=/c")[WAREHOUSE_CONF] == "/c"
    assert thrift(environ={WAREHOUSE_ENV: "/e"})[WAREHOUSE_CONF] == "/e"
    assert thrift("--warehouse", "/f", environ={WAREHOUSE_ENV: "/e"})[WAREHOUSE_CONF] == "/f"


def _shell(cwd: Path, home: Path, sql: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != WAREHOUSE_ENV}
    env.update(HOME=str(home), SQLEXT_SQL_HISTORY=str(home / "history"),
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    return subprocess.run([str(SCRIPT), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
                           "--conf", "spark.sql.shuffle.partitions=1", *args, "-S", "-e", sql],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_shell_sees_the_same_tables_from_any_folder(tmp_path):
    home, first, second = tmp_path / "home", tmp_path / "a", tmp_path / "b"
    for folder in (home, first, second):
        folder.mkdir()
    made = _shell(first, home, "CREATE TABLE events (id INT) USING delta; "
                               "INSERT INTO events VALUES (7)")
    assert made.returncode == 0, made.stderr[-3000:]
    found = _shell(second, home, "SELECT id FROM events")
    assert found.returncode == 0, found.stderr[-3000:]
    assert "| 7  |" in found.stdout or "|  7 |" in found.stdout, found.stdout
    assert (home / ".sqlext" / "warehouse" / "events" / "_delta_log").is_dir()
    assert not (first / "spark-warehouse").exists() and not (second / "spark-warehouse").exists()
    assert not (first / "metastore_db").exists() and not (second / "metastore_db").exists()


def test_a_folder_with_tables_from_before_is_pointed_out(tmp_path, caplog):
    from sqlext.engine.session import warn_about_old_warehouse

    (tmp_path / "spark-warehouse" / "_sqlext_catalog").mkdir(parents=True)
    with caplog.at_level("WARNING", logger="sqlext"):
        warn_about_old_warehouse(str(tmp_path / "home-warehouse"), str(tmp_path))
        warn_about_old_warehouse(str(tmp_path / "spark-warehouse"), str(tmp_path))  # it is used
        warn_about_old_warehouse(str(tmp_path / "w"), str(tmp_path / "elsewhere"))
    assert len(caplog.records) == 1
    assert f"--warehouse {tmp_path / 'spark-warehouse'}" in caplog.records[0].getMessage()
