"""What the ``sqlext`` adapter reads from sqlext's catalog: the relations of a schema (Delta
tables, sqlext views, Spark's own tables), a Delta table's columns, and which errors mean "no such
relation" (only table/view-not-found ones; any other error is raised, even one that says "not
found"). Also the incremental strategy check, now driven by ``valid_incremental_strategies()``.
"""

import pytest
from dbt.tests.util import get_connection, run_dbt, run_dbt_and_capture
from dbt_common.exceptions import DbtRuntimeError

import sqlext

MODELS = {
    "tbl.sql": "{{ config(materialized='table') }} select 1 as id, cast('a' as string) as name, "
               "cast(2.5 as decimal(10, 2)) as amount",
    "v.sql": "{{ config(materialized='view') }} select id, name from {{ ref('tbl') }}",
}

#: describe of every relation fails with a real sqlext error that says "not found" but is not
#: about the relation ("SHOW TABLES: schema `...` not found")
FAILING_DESCRIBE = """
{% macro sqlext__get_columns_in_relation_raw(relation) %}
  {% call statement('get_columns_in_relation_raw', fetch_result=True) %}
    show tables in dbt_sqlext_no_such_schema
  {% endcall %}
  {% do return(load_result('get_columns_in_relation_raw').table) %}
{% endmacro %}
"""


def relation(project, name, kind="table", schema=None):
    return project.adapter.Relation.create(schema=schema or project.test_schema, identifier=name,
                                           type=kind)


class TestRelationsFromTheCatalog:
    @pytest.fixture(scope="class")
    def models(self):
        return MODELS

    def test_list_relations_types_and_delta(self, project, spark):
        run_dbt(["run"])
        spark.sql(f"create table {project.test_schema}.plain_parquet (x int) using parquet")
        with get_connection(project.adapter):
            listed = project.adapter.list_relations_without_caching(
                relation(project, None).without_identifier())
        got = {r.identifier: (r.type, r.is_delta) for r in listed}
        assert got == {"tbl": ("table", True), "v": ("view", False),
                       "plain_parquet": ("table", False)}

    def test_an_unknown_schema_has_no_relations(self, project):
        with get_connection(project.adapter):
            listed = project.adapter.list_relations_without_caching(
                relation(project, None, schema="no_such_schema_here").without_identifier())
        assert listed == []

    def test_delta_table_columns_come_from_its_log(self, project):
        run_dbt(["run"])
        with get_connection(project.adapter):
            columns = project.adapter.get_columns_in_relation(relation(project, "tbl"))
            view_columns = project.adapter.get_columns_in_relation(relation(project, "v", "view"))
        assert [(c.name, c.dtype) for c in columns] == [
            ("id", "int"), ("name", "string"), ("amount", "decimal(10,2)")]
        assert [(c.name, c.dtype) for c in view_columns] == [("id", "int"), ("name", "string")]

    def test_a_missing_relation_has_no_columns(self, project):
        with get_connection(project.adapter):
            assert project.adapter.get_columns_in_relation(relation(project, "nope")) == []
            assert project.adapter.get_columns_in_relation(relation(project, "nope", "view")) == []


class TestOtherNotFoundErrorsAreRaised:
    @pytest.fixture(scope="class")
    def models(self):
        return MODELS

    @pytest.fixture(scope="class")
    def macros(self):
        return {"failing_describe.sql": FAILING_DESCRIBE}

    def test_an_error_saying_not_found_is_not_no_columns(self, project):
        run_dbt(["run"])
        with get_connection(project.adapter):
            with pytest.raises(DbtRuntimeError, match="schema `dbt_sqlext_no_such_schema` not found"):
                project.adapter.get_columns_in_relation(relation(project, "v", "view"))
            # a Delta table's columns are read from its log, not by describe
            assert [c.name for c in project.adapter.get_columns_in_relation(
                relation(project, "tbl"))] == ["id", "name", "amount"]


class TestUnknownIncrementalStrategy:
    @pytest.fixture(scope="class")
    def models(self):
        return {"inc.sql": "{{ config(materialized='incremental', incremental_strategy='bogus') }}"
                           " select 1 as id"}

    def test_the_error_names_the_valid_strategies(self, project):
        _, out = run_dbt_and_capture(["run"], expect_pass=False)
        assert "Invalid incremental strategy provided: bogus" in out
        assert ("Expected one of: append, merge, delete+insert, insert_overwrite, replace_where, "
                "microbatch") in out


class TestCustomIncrementalStrategy:
    """A project's own ``get_incremental_<name>_sql`` is a strategy, as dbt-core documents."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"inc.sql": "{{ config(materialized='incremental', incremental_strategy='twice') }}"
                           " select 1 as id"}

    @pytest.fixture(scope="class")
    def macros(self):
        return {"twice.sql": """
{% macro get_incremental_twice_sql(arg_dict) %}
  insert into {{ arg_dict['target_relation'] }}
  select id from {{ arg_dict['temp_relation'] }} union all select id from {{ arg_dict['temp_relation'] }}
{% endmacro %}"""}

    def test_custom_strategy_runs(self, project, spark):
        run_dbt(["run"])
        run_dbt(["run"])
        got = sqlext.sql(spark, f"select id from {project.test_schema}.inc").collect()
        assert sorted(r[0] for r in got) == [1, 1, 1]
