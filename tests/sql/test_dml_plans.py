"""INSERT, DELETE, UPDATE and MERGE plan into data: the engine call's arguments, readable before
anything runs, and run by ``plan.run(spark)``."""

from __future__ import annotations

import sqlext
from sqlext.engine.merge_clauses import MATCHED, NOT_MATCHED, NOT_MATCHED_BY_SOURCE, Clause
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
    assert (delete.condition, delete.alias, delete.ref.name) == ("x.id = 1", "x", "t")
    update = _plan(spark, "UPDATE t SET v = upper(v) WHERE id > 1")
    assert isinstance(update, UpdatePlan)
    assert (update.condition, update.assignments, update.alias) == ("id > 1", {"v": "upper(v)"}, "t")
    merge = _plan(spark, "MERGE INTO t USING (SELECT 3 AS id, 'c' AS v) s ON t.id = s.id "
                         "WHEN MATCHED AND s.v = 'z' THEN DELETE "
                         "WHEN MATCHED THEN UPDATE SET v = s.v "
                         "WHEN NOT MATCHED THEN INSERT * "
                         "WHEN NOT MATCHED BY SOURCE AND t.id = 2 THEN UPDATE SET t.v = 'gone'")
    assert isinstance(merge, MergeIntoPlan)
    assert (merge.on, merge.alias, merge.source_alias) == ("t.id = s.id", "t", "s")
    assert merge.clauses == (Clause(MATCHED, "delete", "s.v = 'z'"),
                             Clause(MATCHED, "update", None, (("v", "s.v"),)),
                             Clause(NOT_MATCHED, "insert", None),
                             Clause(NOT_MATCHED_BY_SOURCE, "update", "t.id = 2",
                                    (("v", "'gone'"),)))
    assert _rows(spark, "t") == [(1, "a"), (2, "b")]   # planning changed nothing


def test_a_plan_built_as_data_runs(spark, schema):
    sqlext.sql(spark, "CREATE TABLE t (id INT, v STRING) USING delta;"
                      "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    ref = _plan(spark, "DELETE FROM t").ref
    result = DeletePlan(ref, "id >= 2", None).run(spark)
    assert result.collect()[0]["num_affected_rows"] == 2
    assert _rows(spark, "t") == [(1, "a")]
    result = UpdatePlan(ref, None, {"v": "concat(v, '!')"}, None).run(spark)
    assert result.collect()[0]["num_affected_rows"] == 1
    assert _rows(spark, "t") == [(1, "a!")]
