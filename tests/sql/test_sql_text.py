"""What Spark receives for statements on sqlext tables is the user's own text, with only the
table references sqlext replaces spliced in: literals mean what Spark makes of them, syntax
errors are Spark's, and Spark's errors point into the user's script with the user's names."""

from __future__ import annotations

import pytest

import sqlext
from sqlext.catalog import Catalog
from sqlext.errors import AnalysisException, ParseError, TableNotFoundError
from sqlext.sql.parse import parse_statements
from sqlext.sql.plan_read import VIEW_PREFIX
from sqlext.sql.resolve import Resolver
from sqlext.sql.runner import plan_statement
from tests.support.compare import rows
from tests.support.readers import read_deltalake


@pytest.fixture
def schema(spark, request):
    name = "st_" + request.node.name.replace("[", "_").replace("]", "").lower()
    Catalog(spark).create_schema(name)
    spark.catalog.setCurrentDatabase(name)
    sqlext.sql(spark, "CREATE TABLE t (id INT, name STRING) USING delta")
    yield name
    spark.catalog.setCurrentDatabase("default")


def test_quoted_quotes_and_escapes_are_stored_and_selected_as_spark_reads_them(spark, schema):
    sqlext.sql(spark, "INSERT INTO t VALUES (1, 'o''neil'), (2, 'it\\'s'), (3, \"dq\"), "
                      "(4, 'a' 'b'), (5, r'raw\\n')")
    expected = [(1, "o'neil"), (2, "it's"), (3, "dq"), (4, "ab"), (5, "raw\\n")]
    assert sorted(rows(sqlext.sql(spark, "SELECT id, name FROM t"))) == expected
    location = Catalog(spark).resolve(f"{schema}.t").location
    assert sorted(rows(read_deltalake(location), ["id", "name"])) == expected
    result = sqlext.sql(spark, "SELECT 'o''neil' AS a, \"x\"\"y\" AS b FROM t WHERE id = 1")
    assert rows(result) == rows(spark.sql("SELECT 'o''neil' AS a, \"x\"\"y\" AS b"))
    assert rows(result) == [("o'neil", 'x"y')]


def test_dml_expressions_keep_the_users_literals(spark, schema):
    sqlext.sql(spark, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    sqlext.sql(spark, "UPDATE t SET name = 'o''neil' WHERE name = 'a'")
    sqlext.sql(spark, "DELETE FROM t WHERE name = 'it''s' OR id = 2")
    sqlext.sql(spark, "MERGE INTO t USING (SELECT 3 AS id, 'x''y' AS name) s ON t.id = s.id "
                      "WHEN NOT MATCHED AND s.name = 'x''y' THEN INSERT (id, name) "
                      "VALUES (s.id, s.name || '''')")
    sqlext.sql(spark, "INSERT INTO t REPLACE WHERE name LIKE 'o''%' SELECT 1, 'o''neil!'")
    assert sorted(rows(sqlext.sql(spark, "SELECT * FROM t"))) == [(1, "o'neil!"), (3, "x'y'")]


def test_the_statement_spark_gets_is_the_users_text_with_views_spliced_in(spark, schema):
    sql = "SELECT  'o''neil' AS q, /* kept */ 0x1F, t.id FROM t VERSION AS OF 0 WHERE t.id = 1"
    (stmt,) = parse_statements(sql)
    plan = plan_statement(Resolver(spark), stmt)
    assert plan.sql.startswith("SELECT  'o''neil' AS q, /* kept */ 0x1F, t.id FROM "
                               f"{VIEW_PREFIX}")
    assert plan.sql.endswith(" AS t WHERE t.id = 1")
    qualified = f"SELECT {schema}.t.id FROM {schema}.t"
    (stmt,) = parse_statements(qualified)
    assert plan_statement(Resolver(spark), stmt).sql.startswith("SELECT t.id FROM ")


def test_a_syntax_error_is_sparks_not_silently_dropped(spark, schema):
    sqlext.sql(spark, "INSERT INTO t VALUES (1, 'a')")
    with pytest.raises(ParseError) as err:
        sqlext.sql(spark, "SELECT id,, name FROM t")
    assert err.value.line == 1 and err.value.column == 11
    with pytest.raises(Exception) as spark_err:
        spark.sql("SELECT id,, name FROM range(1)")
    assert "PARSE_SYNTAX_ERROR" in str(spark_err.value) and "PARSE_SYNTAX_ERROR" in str(err.value)


def test_errors_point_into_the_users_script_with_the_users_names(spark, schema):
    script = "SELECT 1;\nSELECT 2;\n\n  SELECT nope FROM t"
    with pytest.raises(AnalysisException) as err:
        sqlext.sql(spark, script)
    message = str(err.value)
    assert "line 4 pos 9" in message and VIEW_PREFIX not in message
    merge = ("SELECT 1;\nSELECT 2;\n\nMERGE INTO t USING (SELECT id,, name FROM t) s\n"
             "ON t.id = s.id WHEN MATCHED THEN DELETE")
    with pytest.raises(ParseError) as err:
        sqlext.sql(spark, merge)
    assert (err.value.line, err.value.column) == (4, 31)
    assert "MERGE INTO t USING (SELECT id,, name FROM t) s" in str(err.value)
    assert VIEW_PREFIX not in str(err.value)


def test_a_passed_through_statement_on_line_3_is_reported_on_line_3(spark, schema):
    with pytest.raises(ParseError) as err:
        sqlext.sql(spark, "SELECT 1;\n\nSELECT id,, 1 FROM range(2)")
    assert (err.value.line, err.value.column) == (3, 11)


def test_table_changes_by_path_reads_the_change_feed_of_a_path(spark, schema, tmp_path):
    path = str(tmp_path / "cdf")
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (id INT, name STRING) USING delta "
                      "TBLPROPERTIES (delta.enableChangeDataFeed = true)")
    sqlext.sql(spark, f"INSERT INTO delta.`{path}` VALUES (1, 'a'), (2, 'b')")
    sqlext.sql(spark, f"UPDATE delta.`{path}` SET name = 'o''neil' WHERE id = 1")
    sqlext.sql(spark, f"DELETE FROM delta.`{path}` WHERE id = 2")
    by_path = sqlext.sql(spark, f"SELECT id, name, _change_type, _commit_version FROM "
                                f"table_changes_by_path('{path}', 1, 3)")
    assert sorted(rows(by_path)) == [
        (1, "a", "insert", 1), (1, "a", "update_preimage", 2),
        (1, "o'neil", "update_postimage", 2), (2, "b", "delete", 3), (2, "b", "insert", 1)]
    ranged = sqlext.sql(spark, f"SELECT count(*) FROM table_changes_by_path('{path}', 2)")
    assert rows(ranged) == [(3,)]
    with pytest.raises(TableNotFoundError, match="table_changes_by_path"):
        sqlext.sql(spark, f"SELECT * FROM table_changes_by_path('{tmp_path}/none', 0)")
