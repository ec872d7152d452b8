"""INSERT, DELETE, UPDATE and MERGE plan into data: the engine call's arguments, readable before
anything runs, and run by ``plan.run(spark)``."""

from __future__ import annotations

import sqlglot

import sqlext
from sqlext.engine.conditions import sql_text
from sqlext.engine.merge.clauses import MATCHED, NOT_MATCHED, NOT_MATCHED_BY_SOURCE
from sqlext.sql.parse import parse_statements
from sqlext.sql.plan_dml import DeletePlan, MergeIntoPlan, UpdatePlan
from sqlext.sql.resolve import Resolver
from sqlext.sql.runner import plan_statement


def _plan(spark, sql: str):
    (stmt,) = parse_statements(sql)
    return plan_statement(Resolver(spark), stmt)


def _rows(spark, table: str) -> list[tuple]:
    return sorted(tuple(r) for r in sqlext.sql(spark, f"SELECT * FROM {table}").collect())


def test_dml_plans_hold_the_engine_arguments(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT, v STRING) USING delta;"
                      "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    delete = _plan(spark, "DELETE FROM t AS x WHERE x.id = 1")
    assert isinstance(delete, DeletePlan)
    assert (sql_text(delete.condition), delete.alias, delete.ref.name) == ("x.id = 1", "x", "t")
    update = _plan(spark, "UPDATE t SET v = upper(v) WHERE id > 1")
    assert isinstance(update, UpdatePlan)
    assert (sql_text(update.condition), update.assignments, update.alias) == (
        "id > 1", {"v": "upper(v)"}, "t")
    merge = _plan(spark, "MERGE INTO t USING (SELECT 3 AS id, 'c' AS v) s ON t.id = s.id "
                         "WHEN MATCHED AND s.v = 'z' THEN DELETE "
                         "WHEN MATCHED THEN UPDATE SET v = s.v "
                         "WHEN NOT MATCHED THEN INSERT * "
                         "WHEN NOT MATCHED BY SOURCE AND t.id = 2 THEN UPDATE SET t.v = 'gone'")
    assert isinstance(merge, MergeIntoPlan)
    assert (sql_text(merge.on), merge.alias, merge.source_alias) == ("t.id = s.id", "t", "s")
    conditions = [sql_text(c.condition) if c.condition is not None else None
                  for c in merge.clauses]
    assert conditions == ["s.v = 'z'", None, None, "t.id = 2"]
    assert [(c.kind, c.action, c.assignments) for c in merge.clauses] == [
        (MATCHED, "delete", None), (MATCHED, "update", (("v", "s.v"),)),
        (NOT_MATCHED, "insert", None), (NOT_MATCHED_BY_SOURCE, "update", (("v", "'gone'"),))]
    assert _rows(spark, "t") == [(1, "a"), (2, "b")]   # planning changed nothing


def test_a_plan_built_as_data_runs(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT, v STRING) USING delta;"
                      "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    ref = _plan(spark, "DELETE FROM t").ref
    result = DeletePlan(ref, sqlglot.condition("id >= 2"), None).run(spark)
    assert result.collect()[0]["num_affected_rows"] == 2
    assert _rows(spark, "t") == [(1, "a")]
    result = UpdatePlan(ref, None, {"v": "concat(v, '!')"}, None).run(spark)
    assert result.collect()[0]["num_affected_rows"] == 1
    assert _rows(spark, "t") == [(1, "a!")]


def test_a_condition_given_as_a_tree_is_not_parsed_again_by_sqlglot(spark, schema, monkeypatch):
    """The SQL front hands DELETE its sqlglot tree (carrying the user's text for Spark): the
    engine prunes with that tree instead of parsing the text once more; a string is parsed once."""
    from sqlext.engine import conditions
    sqlext.sql(spark, "CREATE TABLE t (id INT, p STRING) USING delta PARTITIONED BY (p);"
                      "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'y')")
    parsed = []
    real = conditions.parse_predicate
    monkeypatch.setattr(conditions, "parse_predicate", lambda text: parsed.append(text) or real(text))
    sqlext.sql(spark, "DELETE FROM t WHERE p = 'x' AND id = 1")
    assert parsed == []
    assert _rows(spark, "t") == [(2, "y"), (3, "y")]
    location = _plan(spark, "DELETE FROM t").ref.location
    sqlext.DeltaTable.forPath(spark, location).delete("id = 3")
    assert parsed == ["id = 3"]
    sqlext.DeltaTable.forPath(spark, location).delete(sqlglot.condition("id = 2 AND p = 'y'"))
    assert parsed == ["id = 3"] and _rows(spark, "t") == []
    history = sqlext.DeltaTable.forPath(spark, location).history().collect()
    predicates = [h.operationParameters["predicate"] for h in history[:3]]   # Spark's analysed SQL
    assert "id = 2" in predicates[0] and "(id = 3)" in predicates[1] and "id = 1" in predicates[2]
