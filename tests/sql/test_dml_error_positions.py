"""Errors on the conditions and values of DELETE, UPDATE, MERGE and INSERT ... REPLACE WHERE in a
script show the user's names (never the temporary views sqlext binds) and a position in the
user's script: Spark analyses each condition or value on its own and reports positions in that
expression's text (``line 1 pos 7``), which sqlext maps back to where the user wrote it."""

from __future__ import annotations

import pytest

import sqlext
from sqlext.catalog import Catalog
from sqlext.errors import AnalysisException
from sqlext.sql.plan_read import VIEW_PREFIX
from tests.support.compare import rows

PREFIX = "SELECT 1;\nSELECT 2;\n\n"   # the failing statement starts on line 4


@pytest.fixture(scope="module")
def tables(spark):
    Catalog(spark).create_schema("dml_error_positions")
    spark.catalog.setCurrentDatabase("dml_error_positions")
    sqlext.sql(spark, "CREATE OR REPLACE TABLE t (id INT, name STRING) USING delta")
    sqlext.sql(spark, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    sqlext.sql(spark, "CREATE OR REPLACE TABLE s (id INT, name STRING) USING delta")
    sqlext.sql(spark, "INSERT INTO s VALUES (1, 'x'), (3, 'y')")
    yield
    spark.catalog.setCurrentDatabase("default")


# statements with ``^`` where the error is (the failing name, or the start of the value)
CASES = [
    "DELETE FROM t\n  WHERE ^nope = 1",
    "DELETE FROM t WHERE ^id = array(1)",
    "UPDATE t\n  SET name = ^nope || 'x'\n  WHERE id = 1",
    "UPDATE t AS u SET name = 'x'\n WHERE ^u.nope > 1",
    "MERGE INTO t\nUSING s\n  ON t.id = ^s.nope\nWHEN MATCHED THEN DELETE",
    "MERGE INTO t USING s ON t.id = s.id\nWHEN MATCHED AND ^s.bad > 1 THEN UPDATE SET name = s.name",
    "MERGE INTO t USING s ON t.id = s.id\nWHEN MATCHED THEN UPDATE SET name = ^s.zzz",
    "MERGE INTO t tt USING (SELECT * FROM s) ss ON tt.id = ss.id\n"
    "WHEN NOT MATCHED THEN INSERT (id, name) VALUES (ss.id, ^ss.qq)",
    "MERGE INTO t USING s ON t.id = s.id\n  WHEN MATCHED THEN UPDATE SET id = ^array(1)",
    "MERGE INTO t USING s ON t.id = s.id\nWHEN NOT MATCHED BY SOURCE AND ^t.q = 1 THEN DELETE",
    "INSERT INTO t\nREPLACE WHERE ^nope = 1 SELECT * FROM s",
]


@pytest.mark.parametrize("marked", CASES)
def test_the_error_names_the_users_text_and_where_it_is(spark, tables, marked):
    script = PREFIX + marked.replace("^", "")
    at = len(PREFIX) + marked.index("^")
    line = script.count("\n", 0, at) + 1
    pos = at - (script.rfind("\n", 0, at) + 1)
    before = rows(sqlext.sql(spark, "SELECT * FROM t"))
    with pytest.raises(AnalysisException) as err:
        sqlext.sql(spark, script)
    message = str(err.value)
    assert f"line {line} pos {pos}" in message, message
    assert "line 1 pos" not in message and VIEW_PREFIX not in message
    assert sorted(rows(sqlext.sql(spark, "SELECT * FROM t"))) == sorted(before)


def test_the_users_table_and_alias_names_are_shown(spark, tables):
    script = PREFIX + "MERGE INTO t AS tt\nUSING s AS src\n  ON tt.id = src.nope\n" \
                      "WHEN MATCHED THEN DELETE"
    with pytest.raises(AnalysisException) as err:
        sqlext.sql(spark, script)
    message = str(err.value)
    assert "`src`.`nope`" in message and "'tt.id = src.nope'" in message
    assert "line 6 pos 13" in message and VIEW_PREFIX not in message
