"""Table names: managed tables under ``spark.sql.warehouse.dir``, tables with an explicit location,
resolution from a new SparkSession (another process), and names that are refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import sqlext
from sqlext.catalog import Catalog, TableRef
from sqlext.errors import AnalysisException, SqlextError, TableNotFoundError
from tests.support.table_checks import arrow, assert_readers_agree
from tests.support.spark import SPARK_CONF

REPO = Path(__file__).resolve().parents[2]


def _warehouse(spark) -> Path:
    return Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))


def _df(spark, rows=((1, "a"), (2, "b"))):
    return spark.createDataFrame(list(rows), "id int, s string")


def test_default_schema_table_is_managed_under_the_warehouse(spark):
    assert sqlext.write(_df(spark), "cat_plain") == 0
    location = _warehouse(spark) / "cat_plain"
    assert (location / "_delta_log" / f"{0:020d}.json").is_file()
    table = sqlext.DeltaTable.forName(spark, "cat_plain")
    assert Path(table.location.removeprefix("file:")) == location
    assert sqlext.write(_df(spark, [(3, "c")]), "default.cat_plain") == 1
    assert sqlext.write(_df(spark, [(4, "d")]), "spark_catalog.default.CAT_PLAIN") == 2
    assert_readers_agree(spark, location, arrow(["id", "s"], [(1, "a"), (2, "b"), (3, "c"),
                                                              (4, "d")]))
    assert_same_ids(sqlext.read(spark, "cat_plain"), [1, 2, 3, 4])


def assert_same_ids(df, ids):
    assert sorted(r.id for r in df.collect()) == ids


def test_named_schema_table_lives_in_schema_db_dir(spark):
    Catalog(spark).create_schema("cat_db")
    sqlext.write(_df(spark), "cat_db.t1")
    location = _warehouse(spark) / "cat_db.db" / "t1"
    assert (location / "_delta_log").is_dir()
    table = sqlext.DeltaTable.forName(spark, "cat_db.t1")
    assert Path(table.location.removeprefix("file:")) == location
    assert_same_ids(table.toDF(), [1, 2])


def test_missing_schema_is_a_clear_error_and_writes_nothing(spark):
    with pytest.raises(AnalysisException, match=r"schema `no_such_db` not found"):
        sqlext.write(_df(spark), "no_such_db.t")
    assert not (_warehouse(spark) / "no_such_db.db").exists()
    with pytest.raises(TableNotFoundError):
        sqlext.DeltaTable.forName(spark, "no_such_db.t")


@pytest.mark.parametrize("name", ["`..`", "`a/b`", "cat_db.`..`", "`..`.t", "`x\\y`", "a..b",
                                  "cat_db.`../../escape`", "` t`"])
def test_names_that_could_escape_the_warehouse_are_refused(spark, name):
    before = sorted(os.listdir(_warehouse(spark)))
    with pytest.raises(AnalysisException, match="invalid table name"):
        sqlext.write(_df(spark), name)
    with pytest.raises(SqlextError):
        sqlext.DeltaTable.forName(spark, name)
    assert sorted(os.listdir(_warehouse(spark))) == before


def test_explicit_location_resolves_from_a_new_session(spark, tmp_path):
    location = tmp_path / "elsewhere" / "ext"
    ref = TableRef(str(location), "default", "cat_external")
    sqlext.write(_df(spark), "cat_external", table_ref=ref)
    assert (location / "_delta_log").is_dir()
    assert not (_warehouse(spark) / "cat_external").exists()
    assert sqlext.write(_df(spark, [(3, "c")]), "cat_external") == 1     # the name finds it
    assert Path(sqlext.DeltaTable.forName(spark, "cat_external").location) == location
    Catalog(spark).create_schema("cat_sub")
    sqlext.write(_df(spark), "cat_sub.managed")

    # a separate Python process, its own SparkSession on the same warehouse
    script = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(REPO)!r})
        import sqlext
        spark = sqlext.session(master="local[1]", **{{"spark.driver.memory": "512m",
            "spark.sql.warehouse.dir": {str(_warehouse(spark))!r}, **{SPARK_CONF!r}}})
        table = sqlext.DeltaTable.forName(spark, "cat_external")
        ids = sorted(r.id for r in sqlext.read(spark, "cat_external").collect())
        managed = sqlext.DeltaTable.forName(spark, "cat_sub.managed").location
        print(json.dumps({{"location": table.location, "ids": ids, "managed": managed}}))
        spark.stop()
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(result["location"]) == location
    assert result["ids"] == [1, 2, 3]
    assert Path(result["managed"].removeprefix("file:")) == _warehouse(spark) / "cat_sub.db" / "managed"
