"""The engine's table-definition commands called from Python (sqlext.engine.ddl), without SQL:
each is one commit that delta-rs reads back, and a refused change leaves the table as it was."""

from __future__ import annotations

import json
from pathlib import Path

import deltalake
import pytest
from pyspark.sql import types as T

import sqlext
from sqlext.catalog import TEMPORARY_VIEWS, Catalog, TableRef, ViewDef, ViewStore
from sqlext import names
from sqlext.engine import ddl
from sqlext.errors import (AnalysisException, TableAlreadyExistsError, TableNotFoundError,
                           UnsupportedOperationError)
from tests.support.table_checks import actions_of, commit_info, latest_version, table_state

SCHEMA = T.StructType([T.StructField("id", T.LongType()), T.StructField("s", T.StringType())])


def _protocol(path, version: int) -> dict:
    return actions_of(path, version, "protocol")[0]


def _create(spark, path, **kwargs) -> int:
    definition = ddl.TableDefinition(SCHEMA, **kwargs)
    return ddl.create_table(spark, TableRef(str(path)), definition)


def test_create_commits_version_0_with_schema_partitioning_and_properties(spark, tmp_path):
    path = tmp_path / "t"
    version = _create(spark, path, partition_by=["s"], properties={"delta.appendOnly": "false"},
                      comment="made from Python")
    assert version == 0
    table = deltalake.DeltaTable(str(path))
    assert [f.name for f in table.schema().fields] == ["id", "s"]
    assert table.metadata().partition_columns == ["s"]
    assert table.metadata().description == "made from Python"
    # sqlext's default (change feed on) with the caller's property, and the protocol it needs
    assert table.metadata().configuration == {"delta.enableChangeDataFeed": "true",
                                              "delta.appendOnly": "false"}
    assert _protocol(path, 0)["minWriterVersion"] == 4
    assert commit_info(path, 0)["operation"] == "CREATE TABLE"


def test_create_existing_is_refused_unless_if_not_exists(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path)
    with pytest.raises(TableAlreadyExistsError, match="already exists"):
        _create(spark, path)
    assert ddl.create_table(spark, TableRef(str(path)), ddl.TableDefinition(SCHEMA),
                            if_not_exists=True) is None
    assert latest_version(path) == 0


def test_replace_with_a_query_keeps_history_and_properties(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path, properties={"owner": "a"})
    sqlext.write(spark.createDataFrame([(1, "x")], "id long, s string"), str(path))
    df = spark.createDataFrame([(7,)], "n int")
    version = ddl.create_table(spark, TableRef(str(path)), ddl.TableDefinition(query=df),
                               replace=True)
    assert version == 2
    table = deltalake.DeltaTable(str(path))
    assert table.to_pyarrow_table().to_pylist() == [{"n": 7}]
    assert table.metadata().configuration["owner"] == "a"
    assert commit_info(path, 2)["operation"] == "CREATE OR REPLACE TABLE AS SELECT"


def test_add_columns_appends_nullable_columns(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path)
    ddl.add_columns(spark, TableRef(str(path)), T.StructType([T.StructField("n", T.IntegerType())]))
    assert [f.name for f in deltalake.DeltaTable(str(path)).schema().fields] == ["id", "s", "n"]
    assert commit_info(path, 1)["operation"] == "ADD COLUMNS"
    before = table_state(path)
    with pytest.raises(AnalysisException, match="already exist"):
        ddl.add_columns(spark, TableRef(str(path)), T.StructType([T.StructField("ID", T.LongType())]))
    with pytest.raises(AnalysisException, match="cannot be NOT NULL"):
        ddl.add_columns(spark, TableRef(str(path)),
                        T.StructType([T.StructField("m", T.LongType(), nullable=False)]))
    assert table_state(path) == before


def test_setting_the_change_feed_upgrades_a_writer_2_table(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path, properties={"delta.enableChangeDataFeed": "false"})
    assert _protocol(path, 0)["minWriterVersion"] == 2
    ddl.set_properties(spark, TableRef(str(path)), {"delta.enableChangeDataFeed": "true"})
    assert _protocol(path, 1)["minWriterVersion"] == 4
    assert deltalake.DeltaTable(str(path)).metadata().configuration[
        "delta.enableChangeDataFeed"] == "true"
    assert commit_info(path, 1)["operation"] == "SET TBLPROPERTIES"


def test_unset_properties(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path, properties={"owner": "a", "team": "b"})
    ddl.unset_properties(spark, TableRef(str(path)), ["owner"])
    configuration = deltalake.DeltaTable(str(path)).metadata().configuration
    assert "owner" not in configuration and configuration["team"] == "b"
    info = commit_info(path, 1)
    assert info["operation"] == "UNSET TBLPROPERTIES"
    assert json.loads(info["operationParameters"]["properties"]) == ["owner"]
    with pytest.raises(AnalysisException, match="does not have"):
        ddl.unset_properties(spark, TableRef(str(path)), ["owner"])
    assert latest_version(path) == 1
    ddl.unset_properties(spark, TableRef(str(path)), ["owner"], if_exists=True)
    assert latest_version(path) == 2


def test_column_comment_and_a_restated_type(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path)
    ref = TableRef(str(path))
    ddl.set_column_comment(spark, ref, "ID", "the key", expected_type=T.LongType())
    field = deltalake.DeltaTable(str(path)).schema().fields[0]
    assert field.metadata == {"comment": "the key"}
    with pytest.raises(UnsupportedOperationError, match="changing the type"):
        ddl.set_column_comment(spark, ref, "id", "x", expected_type=T.IntegerType())
    with pytest.raises(AnalysisException, match="no column nope"):
        ddl.set_column_comment(spark, ref, "nope", "x")
    assert latest_version(path) == 1


def test_rename_and_drop_a_managed_table(spark):
    catalog = Catalog(spark)
    old = catalog.ref_for_name("default", "ddl_py_old")
    names.create_table(spark, old, ddl.TableDefinition(SCHEMA))
    assert catalog.lookup("default", "ddl_py_old") == old
    renamed = names.rename_table(spark, old, "ddl_py_new")
    assert catalog.lookup("default", "ddl_py_old") is None
    assert catalog.lookup("default", "ddl_py_new") == renamed
    location = Path(renamed.location.removeprefix("file:"))
    assert (location / "_delta_log").is_dir()
    assert not Path(old.location.removeprefix("file:")).exists()
    other = catalog.ref_for_name("default", "ddl_py_other")
    names.create_table(spark, other, ddl.TableDefinition(SCHEMA))
    with pytest.raises(TableAlreadyExistsError, match="already exists"):
        names.rename_table(spark, other, "ddl_py_new")
    names.drop_table(spark, renamed)
    names.drop_table(spark, other)
    assert catalog.lookup("default", "ddl_py_new") is None and not location.exists()


def test_temporary_views_are_per_session_and_cleared(spark):
    store = ViewStore(spark, Catalog(spark))
    store.put(ViewDef("ddl_py_temp", "SELECT 1 AS one"))
    assert ViewStore(spark, Catalog(spark)).temporary("DDL_PY_TEMP").query == "SELECT 1 AS one"
    TEMPORARY_VIEWS.clear()
    assert ViewStore(spark, Catalog(spark)).temporary("ddl_py_temp") is None


def test_delta_table_builder_creates_replaces_and_refuses(spark, tmp_path):
    path = tmp_path / "built"
    table = (sqlext.DeltaTable.create(spark).location(str(path))
             .addColumn("id", "bigint", nullable=False, comment="key")
             .addColumns(T.StructType([T.StructField("day", T.StringType())]))
             .partitionedBy("day").property("owner", "me").comment("built").execute())
    assert table.toDF().count() == 0
    dl = deltalake.DeltaTable(str(path))
    assert [(f.name, f.nullable, f.metadata) for f in dl.schema().fields] == [
        ("id", False, {"comment": "key"}), ("day", True, {})]
    assert dl.metadata().partition_columns == ["day"]
    assert dl.metadata().configuration["owner"] == "me"
    assert dl.metadata().description == "built"
    with pytest.raises(TableAlreadyExistsError):
        sqlext.DeltaTable.create(spark).location(str(path)).addColumn("x", "int").execute()
    sqlext.DeltaTable.createIfNotExists(spark).location(str(path)).addColumn("x", "int").execute()
    assert latest_version(path) == 0
    sqlext.DeltaTable.replace(spark).location(str(path)).addColumn("x", "int").execute()
    assert [f.name for f in deltalake.DeltaTable(str(path)).schema().fields] == ["x"]
    assert commit_info(path, 1)["operation"] == "CREATE OR REPLACE TABLE"
    with pytest.raises(TableNotFoundError, match="does not exist"):
        sqlext.DeltaTable.replace(spark).location(str(tmp_path / "none")).addColumn(
            "x", "int").execute()
    assert not (tmp_path / "none").exists()


def test_delta_table_builder_by_name(spark):
    table = (sqlext.DeltaTable.createOrReplace(spark).tableName("ddl_py_built")
             .addColumn("id", T.LongType()).execute())
    sqlext.write(spark.createDataFrame([(5,)], "id long"), "ddl_py_built")
    assert [r.id for r in sqlext.DeltaTable.forName(spark, "ddl_py_built").toDF().collect()] == [5]
    assert table.location == Catalog(spark).lookup("default", "ddl_py_built").location


def test_delta_table_builder_refuses_bad_generated_columns(spark, tmp_path):
    # generated columns are made (tests/engine/test_identity_columns.py); a bad one is refused
    builder = (sqlext.DeltaTable.create(spark).location(str(tmp_path / "gen"))
               .addColumn("id", "bigint", True, "1 + 1"))
    with pytest.raises(AnalysisException, match="EXPR_TYPE_MISMATCH"):
        builder.execute()
    assert not (tmp_path / "gen" / "_delta_log").exists()
