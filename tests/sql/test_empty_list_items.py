"""An empty item in a comma-separated list (``a,, b``, ``(a, b,)``, ``(, a)``, a trailing ``,``)
is a syntax error, as Spark's grammar makes it (PARSE_SYNTAX_ERROR), in every list sqlext parses
itself: sqlglot's parser skipped such items, so ``UPDATE t SET a = 1,, b = 2`` used to run."""

from __future__ import annotations

import pytest

import sqlext
from sqlext.catalog import Catalog
from sqlext.errors import ParseError
from sqlext.sql.parse import parse_statements
from tests.support.compare import rows

# statements with ``^`` where the error is; the text Spark would name there
EMPTY_ITEMS = [
    ("SELECT id,^, name FROM t", ","),
    ("UPDATE t SET id = 1,^, name = 'b'", ","),
    ("UPDATE t SET id = 1, ^WHERE id = 1", "WHERE"),
    ("UPDATE t SET id = 1,^", "end of input"),
    ("INSERT INTO t (id,^, name) VALUES (1, 'a')", ","),
    ("INSERT INTO t (id, name,^) VALUES (1, 'a')", ")"),
    ("INSERT INTO t VALUES (1,^, 'a')", ","),
    ("INSERT INTO t VALUES (1, 'a'),^, (2, 'b')", ","),
    ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET id = s.id,^, "
     "name = s.name", ","),
    ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET id = s.id, "
     "^WHEN NOT MATCHED THEN INSERT *", "WHEN"),
    ("MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id,^, name) "
     "VALUES (s.id, s.name)", ","),
    ("MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, name) "
     "VALUES (s.id,^, s.name)", ","),
    ("DELETE FROM t WHERE id IN (1,^, 2)", ","),
    ("DELETE FROM t WHERE id IN (^, 2)", ","),
    ("CREATE TABLE u (a INT,^, b INT) USING delta", ","),
    ("CREATE TABLE u (a INT, b INT) USING delta PARTITIONED BY (a,^)", ")"),
    ("ALTER TABLE t ADD COLUMNS (a INT,^, b INT)", ","),
    ("ALTER TABLE t SET TBLPROPERTIES ('a' = '1',^, 'b' = '2')", ","),
    ("OPTIMIZE t ZORDER BY (id,^, name)", ","),
    ("SELECT concat(name,^, 'x') FROM t", ","),
]


@pytest.mark.parametrize("marked, near", EMPTY_ITEMS)
def test_an_empty_list_item_is_a_syntax_error_at_its_place(marked, near):
    sql, column = marked.replace("^", ""), marked.index("^") + 1
    script = f"SELECT 1;\n\n{sql}"
    with pytest.raises(ParseError) as err:
        parse_statements(script)
    assert (err.value.line, err.value.column, err.value.token) == (3, column, near)
    message = str(err.value)
    assert message.startswith("[PARSE_SYNTAX_ERROR] Syntax error at or near ")
    assert f"at line 3, column {column}" in message and sql in message
    assert err.value.statement == sql


def test_lists_without_empty_items_still_parse():
    for sql in ["SELECT 'a,,b', `x,,`, concat('(', ',', ')') FROM t",
                "UPDATE t SET id = 1, name = 'b' WHERE id = 1",
                "INSERT INTO t (id, name) VALUES (1, ',,'), (2, ',)')",
                "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET id = s.id, "
                "name = s.name WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, s.name)"]:
        assert len(parse_statements(sql)) == 1


@pytest.fixture
def schema(spark):
    Catalog(spark).create_schema("empty_items")
    spark.catalog.setCurrentDatabase("empty_items")
    sqlext.sql(spark, "CREATE OR REPLACE TABLE t (id INT, name STRING) USING delta")
    sqlext.sql(spark, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    yield "empty_items"
    spark.catalog.setCurrentDatabase("default")


def test_spark_refuses_what_sqlext_refuses_and_nothing_is_written(spark, schema):
    version = rows(sqlext.sql(spark, "DESCRIBE HISTORY t"))[0][0]
    for sql in ["SELECT id,, name FROM t", "UPDATE t SET id = 1,, name = 'b'",
                "INSERT INTO t (id,, name) VALUES (3, 'c')",
                "MERGE INTO t USING t AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET "
                "id = s.id,, name = 'x'"]:
        with pytest.raises(ParseError, match="PARSE_SYNTAX_ERROR"):
            sqlext.sql(spark, sql)
    with pytest.raises(Exception, match="PARSE_SYNTAX_ERROR"):
        spark.sql("SELECT id,, id FROM range(1)")
    with pytest.raises(Exception, match="PARSE_SYNTAX_ERROR"):
        spark.sql("SELECT concat('a',, 'b')")
    assert rows(sqlext.sql(spark, "DESCRIBE HISTORY t"))[0][0] == version
    assert sorted(rows(sqlext.sql(spark, "SELECT * FROM t"))) == [(1, "a"), (2, "b")]
