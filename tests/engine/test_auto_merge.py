"""delta-spark's session setting ``spark.databricks.delta.schema.autoMerge.enabled``: with it
on, a write without ``mergeSchema`` and a MERGE without WITH SCHEMA EVOLUTION evolve the
table's schema (delta-spark's DeltaWriteOptions and MERGE); a write's explicit
``mergeSchema=false`` still wins; with it off, both refuse the new column, the table unchanged."""

from __future__ import annotations

import pytest

import sqlext
from sqlext.errors import SqlextError
from sqlext.tables import DeltaTable

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's

AUTO_MERGE = "spark.databricks.delta.schema.autoMerge.enabled"


@pytest.fixture
def auto_merge_on(spark):
    spark.conf.set(AUTO_MERGE, "true")
    yield
    spark.conf.unset(AUTO_MERGE)


def _table(spark, path):
    sqlext.write(spark.createDataFrame([(1, "a")], "id BIGINT, v STRING"), str(path))
    return str(path)


def test_a_write_without_merge_schema_follows_the_setting(spark, tmp_path, auto_merge_on):
    path = _table(spark, tmp_path / "t")
    extra = spark.createDataFrame([(2, "b", 2.5)], "id BIGINT, v STRING, x DOUBLE")
    assert sqlext.write(extra, path) == 1
    assert sqlext.read(spark, path).columns == ["id", "v", "x"]
    with pytest.raises(SqlextError):
        sqlext.write(spark.createDataFrame([(3, "c", 1)], "id BIGINT, v STRING, y INT"), path,
                     mergeSchema=False)
    assert DeltaTable.forPath(spark, path).history().count() == 2


def test_merge_evolves_the_schema_under_the_setting(spark, tmp_path, auto_merge_on):
    path = _table(spark, tmp_path / "t")
    source = spark.createDataFrame([(1, "A", 10), (2, "b", 20)], "id BIGINT, v STRING, n INT")
    (DeltaTable.forPath(spark, path).alias("t").merge(source.alias("s"), "t.id = s.id")
     .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
    rows = sorted(tuple(r) for r in sqlext.read(spark, path).collect())
    assert rows == [(1, "A", 10), (2, "b", 20)]


def test_without_the_setting_both_refuse_the_new_column(spark, tmp_path):
    path = _table(spark, tmp_path / "t")
    with pytest.raises(SqlextError):
        sqlext.write(spark.createDataFrame([(2, "b", 2.5)], "id BIGINT, v STRING, x DOUBLE"),
                     path)
    source = spark.createDataFrame([(1, "A", 10)], "id BIGINT, v STRING, n INT")
    (DeltaTable.forPath(spark, path).alias("t").merge(source.alias("s"), "t.id = s.id")
     .whenMatchedUpdateAll().execute())
    assert sqlext.read(spark, path).columns == ["id", "v"]       # n is not added
    assert DeltaTable.forPath(spark, path).history().count() == 2
