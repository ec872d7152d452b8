"""An enforced contract's ``check`` constraints (column-level and model-level) are Delta CHECK
constraints of the model's table (``delta.constraints.<name>``), committed by the statement that
builds the table, for table and incremental models: a build whose rows break one fails and leaves
the table as it was; re-runs restate them (no duplicate-constraint error); a constraint removed
from the contract is dropped by the next full build; any later write is checked against them.
"""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

import sqlext
from sqlext.catalog import Catalog
from sqlext.log.table import DeltaLog

TABLE_MODEL = "{{ config(materialized='table') }} select {{ var('id', 1) }} as id, 'blue' as color"
INCREMENTAL_MODEL = ("{{ config(materialized='incremental', unique_key='id', "
                     "on_schema_change='append_new_columns') }} "
                     "select {{ var('id', 1) }} as id, 'blue' as color")


def schema_yml(id_checks: str, model_checks: str = "") -> str:
    """Both models' contract, with ``id_checks`` under column ``id`` and ``model_checks`` at
    model level (YAML list items)."""
    model = f"\n    constraints:{model_checks}" if model_checks else ""
    return "version: 2\nmodels:\n" + "".join(f"""
  - name: {name}
    config:
      contract:
        enforced: true{model}
    columns:
      - name: id
        data_type: int
        constraints:
          - type: not_null{id_checks}
      - name: color
        data_type: string
""" for name in ("checked", "checked_inc"))


POSITIVE = """
          - type: check
            name: Positive_ID
            expression: id > 0"""
BELOW_100 = """
          - type: check
            expression: id < 100"""
NOT_RED = """
      - type: check
        expression: color <> 'red'"""


def snapshot(spark, project, name: str):
    ref = Catalog(spark).lookup(project.test_schema, name)
    return DeltaLog(ref.location).snapshot()


def checks(spark, project, name: str) -> dict[str, str]:
    return {k: v for k, v in snapshot(spark, project, name).configuration.items()
            if k.startswith("delta.constraints.")}


def rows(spark, project, name: str) -> list[tuple]:
    return sorted(tuple(r) for r in sqlext.sql(
        spark, f"select id, color from {project.test_schema}.{name}").collect())


class TestContractChecks:
    @pytest.fixture(scope="class")
    def models(self):
        return {"checked.sql": TABLE_MODEL, "checked_inc.sql": INCREMENTAL_MODEL,
                "schema.yml": schema_yml(POSITIVE + BELOW_100, NOT_RED)}

    def test_table_model(self, project, spark):
        expected = {"delta.constraints.positive_id": "id > 0",
                    "delta.constraints.id_check_1": "id < 100",
                    "delta.constraints.check_1": "color <> 'red'"}
        for _ in range(2):      # a re-run restates them: no duplicate-constraint error
            run_dbt(["run", "-s", "checked"])
            assert checks(spark, project, "checked") == expected
        built = snapshot(spark, project, "checked")
        assert {f.name: f.nullable for f in built.schema} == {"id": False, "color": True}
        # a build whose rows break a check fails and commits nothing
        failed = run_dbt(["run", "-s", "checked", "--vars", "id: -1"], expect_pass=False)
        assert "CHECK constraint positive_id (id > 0) violated" in failed[0].message
        assert snapshot(spark, project, "checked").version == built.version
        assert rows(spark, project, "checked") == [(1, "blue")]
        # any later write is checked
        with pytest.raises(sqlext.ConstraintViolationError, match="id_check_1"):
            sqlext.sql(spark, f"insert into {project.test_schema}.checked values (100, 'x')")
        # a constraint removed from the contract is gone after the next build
        write_file(schema_yml(POSITIVE, NOT_RED), "models", "schema.yml")
        run_dbt(["run", "-s", "checked"])
        assert checks(spark, project, "checked") == {
            "delta.constraints.positive_id": "id > 0",
            "delta.constraints.check_1": "color <> 'red'"}
        sqlext.sql(spark, f"insert into {project.test_schema}.checked values (100, 'x')")

    def test_incremental_model(self, project, spark):
        write_file(schema_yml(POSITIVE), "models", "schema.yml")
        run_dbt(["run", "-s", "checked_inc"])
        run_dbt(["run", "-s", "checked_inc", "--vars", "id: 2"])
        assert checks(spark, project, "checked_inc") == {
            "delta.constraints.positive_id": "id > 0"}
        assert rows(spark, project, "checked_inc") == [(1, "blue"), (2, "blue")]
        version = snapshot(spark, project, "checked_inc").version
        failed = run_dbt(["run", "-s", "checked_inc", "--vars", "id: -3"], expect_pass=False)
        assert "CHECK constraint positive_id (id > 0) violated" in failed[0].message
        assert snapshot(spark, project, "checked_inc").version == version
        # an incremental run keeps the table's constraints and says how the contract differs
        write_file(schema_yml(POSITIVE + BELOW_100), "models", "schema.yml")
        _, logs = run_dbt_and_capture(["run", "-s", "checked_inc", "--vars", "id: 3"])
        assert "id_check_1 CHECK (id < 100) is not on the table" in logs
        assert "--full-refresh" in logs
        assert checks(spark, project, "checked_inc") == {
            "delta.constraints.positive_id": "id > 0"}
        run_dbt(["run", "-s", "checked_inc", "--full-refresh", "--vars", "id: 4"])
        assert checks(spark, project, "checked_inc") == {
            "delta.constraints.positive_id": "id > 0",
            "delta.constraints.id_check_1": "id < 100"}
        assert rows(spark, project, "checked_inc") == [(4, "blue")]
