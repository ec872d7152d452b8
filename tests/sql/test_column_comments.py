"""Column comments (``ALTER TABLE ... CHANGE COLUMN c COMMENT``, ``ALTER COLUMN c COMMENT``, view
column lists) and the errors of statements sqlext does not support, as dbt sends them (with its
leading query comment)."""

from __future__ import annotations

import json

import pytest

import sqlext
from sqlext.catalog import Catalog
from sqlext.errors import AnalysisException, ParseError, UnsupportedOperationError
from sqlext.log.table import DeltaLog
from tests.support.compare import rows
from tests.support.readers import read_duckdb

DBT_COMMENT = '/* {"app": "dbt", "dbt_version": "1.11.0", "node_id": "model.p.m"} */\n'


def _log(spark, name: str) -> DeltaLog:
    return DeltaLog(Catalog(spark).resolve(name).location)


def _commit_actions(log: DeltaLog, version: int) -> list[dict]:
    path = f"{log.location}/_delta_log/{version:020d}.json"
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _describe(spark, name: str) -> dict[str, tuple]:
    return {r[0]: (r[1], r[2]) for r in rows(sqlext.sql(spark, f"DESCRIBE EXTENDED {name}"))}


def test_change_column_comment_is_a_metadata_only_commit(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t USING delta COMMENT 'the table' AS "
                      "SELECT 1 AS id, 'Joe' AS name")
    log = _log(spark, "t")
    files_before = {f.path for f in log.snapshot().files}
    comment = "id Column \"with double quotes\"\nand 'single quotes' -- /* x */ $$"
    escaped = comment.replace("'", "\\'")
    sqlext.sql(spark, f"{DBT_COMMENT}alter table {schema}.t change column\n  id\n  comment "
                      f"'{escaped}';")
    sqlext.sql(spark, "ALTER TABLE t ALTER COLUMN name COMMENT 'the name'")

    snapshot = log.snapshot()
    assert snapshot.version == 2
    assert {f.path for f in snapshot.files} == files_before
    for version in (1, 2):
        actions = _commit_actions(log, version)
        assert not any("add" in a or "remove" in a for a in actions)
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        assert info["operation"] == "CHANGE COLUMN"
    fields = {f["name"]: f for f in json.loads(snapshot.metadata.schema_string)["fields"]}
    assert fields["id"]["metadata"] == {"comment": comment}
    assert fields["name"]["metadata"] == {"comment": "the name"}
    assert fields["id"]["type"] == "integer" and fields["name"]["type"] == "string"

    described = _describe(spark, "t")
    assert described["id"] == ("int", comment)
    assert described["name"] == ("string", "the name")
    assert described["Comment"][0] == "the table"

    from deltalake import DeltaTable
    dl_fields = {f.name: f for f in DeltaTable(log.location).schema().fields}
    assert dl_fields["id"].metadata == {"comment": comment}
    assert rows(sqlext.sql(spark, "SELECT id, name FROM t")) == [(1, "Joe")]
    assert read_duckdb(log.location).to_pylist() == [{"id": 1, "name": "Joe"}]


def test_a_comment_change_that_cannot_apply_leaves_the_table_as_it_was(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT, name STRING) USING delta")
    log = _log(spark, "t")
    with pytest.raises(AnalysisException, match="has no column nope.*columns: id, name"):
        sqlext.sql(spark, "ALTER TABLE t CHANGE COLUMN nope COMMENT 'x'")
    # a type change with a comment is refused as the same ALTER COLUMN TYPE is
    with pytest.raises(AnalysisException, match="only widening changes") as info:
        sqlext.sql(spark, "ALTER TABLE t CHANGE COLUMN name name BIGINT COMMENT 'x'")
    assert info.value.error_class == "NOT_SUPPORTED_CHANGE_COLUMN"
    # Spark's parser refuses a rename in the Hive form (delta-spark 4.4: the same condition)
    with pytest.raises(ParseError, match="please run RENAME COLUMN instead") as info:
        sqlext.sql(spark, "ALTER TABLE t CHANGE COLUMN name other STRING COMMENT 'x'")
    assert info.value.error_class == "_LEGACY_ERROR_TEMP_0034"
    assert log.snapshot().version == 0
    # the Hive form with the column's own type only sets the comment
    sqlext.sql(spark, "ALTER TABLE t CHANGE COLUMN name name STRING COMMENT 'ok'")
    assert _describe(spark, "t")["name"] == ("string", "ok")


def test_view_column_comments_persist(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t USING delta AS SELECT 1 AS id, 'Joe' AS name")
    sqlext.sql(spark, f"{DBT_COMMENT}create or replace view v (`id` comment 'the id', `name`) "
                      "comment 'the view' as select * from t")
    described = _describe(spark, "v")
    assert described["id"] == ("int", "the id")
    assert described["name"] == ("string", None)
    assert described["Comment"][0] == "the view"
    # from a new session, read back from sqlext's catalog
    other = spark.newSession()
    other.catalog.setCurrentDatabase(schema)
    assert _describe(other, f"{schema}.v")["id"] == ("int", "the id")
    assert rows(sqlext.sql(other, f"SELECT * FROM {schema}.v")) == [(1, "Joe")]


@pytest.mark.parametrize("statement, named", [
    ("msck repair table {schema}.t", "msck repair table"),
    ("analyze table {schema}.t compute statistics", "ANALYZE on"),
])
def test_unsupported_statements_name_the_statement_not_dbts_comment(spark, schema, statement,
                                                                   named):
    sqlext.sql(spark, "CREATE TABLE t (id INT) USING delta")
    with pytest.raises(UnsupportedOperationError) as info:
        sqlext.sql(spark, DBT_COMMENT + statement.format(schema=schema))
    message = str(info.value)
    assert message.startswith(statement.format(schema=schema).split(" compute")[0])
    assert named in message and f"{schema}.t" in message
    assert "/*" not in message and "TABLE_OR_VIEW_NOT_FOUND" not in message
    assert "supported statements: SELECT" in message
    assert info.value.__cause__ is None          # refused before Spark looked for the table
    assert _log(spark, "t").snapshot().version == 0
