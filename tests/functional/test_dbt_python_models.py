"""Python models (issue 18): dbt-spark sends them to a Databricks cluster; sqlext runs them in
the dbt process on the dbt connection's SparkSession and commits what they return through the
same SQL (and transaction layer) as SQL models. dbt-tests-adapter's own Python model suites,
plus checks of the commits and of the incremental strategies."""

from __future__ import annotations

import json

import deltalake
import pytest
from dbt.tests.adapter.python_model.test_python_model import (BasePythonEmptyTests,
                                                              BasePythonIncrementalTests,
                                                              BasePythonModelTests)
from dbt.tests.adapter.python_model.test_spark import (PANDAS_MODEL, PANDAS_ON_SPARK_MODEL,
                                                       PYSPARK_MODEL, BasePySparkTests)
from dbt.tests.util import run_dbt

from sqlext.catalog import Catalog


class TestPythonModels(BasePythonModelTests):
    pass


class TestPythonIncremental(BasePythonIncrementalTests):
    pass


class TestPythonEmpty(BasePythonEmptyTests):
    pass


class TestPySparkDataFrames(BasePySparkTests):
    @pytest.fixture(scope="class")
    def models(self):
        # koalas is Databricks' pre-Spark-3.2 package, not installable here
        return {"pandas_df.py": PANDAS_MODEL, "pyspark_df.py": PYSPARK_MODEL,
                "pandas_on_spark_df.py": PANDAS_ON_SPARK_MODEL}

    def test_different_dataframes(self, project, spark):
        results = run_dbt(["run"])
        assert len(results) == 3
        for name in ("pandas_df", "pyspark_df", "pandas_on_spark_df"):
            rows = project.run_sql(f"select City, Latitude from {project.test_schema}.{name} "
                                   "order by City", fetch="all")
            assert [tuple(r) for r in rows][:2] == [("Bogota", 4.60), ("Brasilia", -15.78)]


SOURCE = """
{{ config(materialized='table') }}
select * from values (1, 'a'), (2, 'b'), (3, 'c') as t(id, v)
"""

DOUBLED = """
import pyspark.sql.functions as F


def model(dbt, session):
    dbt.config(materialized="table", partition_by=["bucket"])
    return dbt.ref("source_rows").select("id", F.upper("v").alias("v"), (F.col("id") % 2).alias("bucket"))
"""

UPSERTS = """
def model(dbt, session):
    dbt.config(materialized="incremental", unique_key="id", incremental_strategy="{strategy}")
    rows = dbt.ref("source_rows")
    if dbt.is_incremental:
        rows = rows.filter("id >= 2")
    return rows.selectExpr("id", "concat(v, '{marker}') as v")
"""


def _location(spark, schema, name):
    return Catalog(spark).lookup(schema, name).location


class TestPythonModelCommits:
    @pytest.fixture(scope="class")
    def models(self):
        return {"source_rows.sql": SOURCE, "doubled.py": DOUBLED,
                "upserted.py": UPSERTS.format(strategy="merge", marker="1"),
                "replaced.py": UPSERTS.format(strategy="delete+insert", marker="1"),
                "appended.py": UPSERTS.format(strategy="append", marker="1")}

    def test_tables_and_incremental_strategies_commit_once_per_run(self, project, spark):
        run_dbt(["run"])
        schema = project.test_schema
        doubled = _location(spark, schema, "doubled")
        table = deltalake.DeltaTable(doubled)
        assert table.metadata().partition_columns == ["bucket"]
        assert sorted(table.to_pyarrow_table().to_pylist(), key=lambda r: r["id"]) == [
            {"id": 1, "v": "A", "bucket": 1}, {"id": 2, "v": "B", "bucket": 0},
            {"id": 3, "v": "C", "bucket": 1}]
        info = table.history(1)[0]
        assert json.loads(info["userMetadata"])["dbt_unique_id"] == "model.test.doubled"

        project.run_sql(f"update {schema}.source_rows set v = 'x' where id = 3")
        versions = {n: deltalake.DeltaTable(_location(spark, schema, n)).version()
                    for n in ("upserted", "replaced", "appended")}
        run_dbt(["run", "-s", "upserted", "replaced", "appended"])
        for name in versions:   # one commit per incremental run
            assert deltalake.DeltaTable(_location(spark, schema, name)).version() == \
                versions[name] + 1

        def rows(name):
            return sorted(tuple(r) for r in project.run_sql(
                f"select id, v from {schema}.{name}", fetch="all"))

        expected = [(1, "a1"), (2, "b1"), (3, "x1")]
        assert rows("upserted") == expected
        assert rows("replaced") == expected
        assert rows("appended") == [(1, "a1"), (2, "b1"), (2, "b1"), (3, "c1"), (3, "x1")]
        assert deltalake.DeltaTable(_location(spark, schema, "upserted")).history(1)[0][
            "operation"] == "MERGE"


FAILING = """
def model(dbt, session):
    dbt.config(materialized="table")
    if dbt.this is not None:
        raise ValueError("the model refuses")
    return session.range(1)
"""


class TestAFailingPythonModelCommitsNothing:
    @pytest.fixture(scope="class")
    def models(self):
        return {"failing.py": FAILING}

    def test_error_is_reported(self, project, spark):
        results = run_dbt(["run"], expect_pass=False)
        assert results[0].status == "error"
        assert "the model refuses" in results[0].message
        assert Catalog(spark).lookup(project.test_schema, "failing") is None
