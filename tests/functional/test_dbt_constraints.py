"""Model contracts with constraints on ``type: sqlext``: dbt-tests-adapter's constraint suites, as
dbt-spark (and dbt-databricks) subclass them.

The table is created by ``create or replace table ... using delta tblproperties
('delta.constraints.<name>' = '<expression>', ...) as select``: the contract's ``check``
constraints, column-level and model-level, are Delta CHECK constraints committed with the rows,
which are checked against them (a model whose rows break one fails and leaves the previous table
as it was, unlike dbt-spark, which adds model-level checks after the replace and drops
column-level ones). Column-level ``not_null`` then becomes ``alter table ... change column c set
not null``, as on dbt-spark; other constraint types are not enforced by Delta (column-level ones
warn, model-level ones are skipped). Every later write is checked against the constraints: an
incremental run whose rows break them fails and leaves the table as it was.

Differences from dbt-tests-adapter's defaults: Spark has no ``text`` type (``string``), and
quotes identifiers with backticks (double quotes are string literals).
"""

import pytest
from dbt.tests.adapter.constraints import fixtures
from dbt.tests.adapter.constraints.test_constraints import (
    BaseConstraintQuotedColumn, BaseConstraintsRollback, BaseConstraintsRuntimeDdlEnforcement,
    BaseIncrementalConstraintsColumnsEqual, BaseIncrementalConstraintsRollback,
    BaseIncrementalConstraintsRuntimeDdlEnforcement, BaseModelConstraintsRuntimeEnforcement,
    BaseTableConstraintsColumnsEqual, BaseViewConstraintsColumnsEqual)
from dbt.tests.util import run_dbt

import sqlext
from sqlext.catalog import Catalog
from sqlext.log.table import DeltaLog


def _spark_yml(yml: str) -> str:
    return yml.replace("data_type: text", "data_type: string")


MODEL_SCHEMA_YML = _spark_yml(fixtures.model_schema_yml)
FK_SCHEMA_YML = _spark_yml(fixtures.model_fk_constraint_schema_yml)
CONSTRAINED_SCHEMA_YML = _spark_yml(fixtures.constrained_model_schema_yml)
QUOTED_SCHEMA_YML = _spark_yml(fixtures.model_quoted_column_schema_yml).replace(
    """expression: ("from" = 'blue')""", "expression: (`from` = 'blue')").replace(
    """columns: [ '"from"' ]""", "columns: [ '`from`' ]")

EXPECTED_SQL = """
create or replace table <model_identifier>
    using delta
    tblproperties ('delta.constraints.id_check_1' = '(id > 0)',
                   'delta.constraints.id_check_2' = 'id >= 1')
    as
select
  id,
  color,
  date_day
from
( -- depends_on: <foreign_key_model_identifier>
    select
    'blue' as color,
    1 as id,
    '2019-01-01' as date_day ) as model_subq
"""


def _table(spark, project, name: str):
    """The snapshot of the model's Delta table: (CHECK constraints, {column: nullable})."""
    ref = Catalog(spark).lookup(project.test_schema, name)
    snapshot = DeltaLog(ref.location).snapshot()
    checks = {k: v for k, v in snapshot.configuration.items()
              if k.startswith("delta.constraints.")}
    return checks, {f.name: f.nullable for f in snapshot.schema}


class ContractTypes:
    """The data types of the column-equality suites as Spark names them."""

    @pytest.fixture
    def string_type(self):
        return "string"

    @pytest.fixture
    def int_type(self):
        return "int"

    @pytest.fixture
    def schema_string_type(self):
        return "string"

    @pytest.fixture
    def schema_int_type(self):
        return "int"

    @pytest.fixture
    def data_types(self, int_type, schema_int_type, string_type):
        # sql_column_value, schema_data_type, error_data_type (Spark's type names, as the
        # contract error shows them)
        return [
            ["1", schema_int_type, int_type],
            ['"1"', "string", string_type],
            ["true", "boolean", "boolean"],
            ["6.45", "decimal(3,2)", "decimal(3,2)"],
            ["cast('2019-01-01' as date)", "date", "date"],
            ["cast('2019-01-01' as timestamp)", "timestamp", "timestamp"],
            ["array(1, 2, 3)", "array<int>", "array<int>"],
        ]


class TestSqlextTableConstraintsColumnsEqual(ContractTypes, BaseTableConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model_wrong_order.sql": fixtures.my_model_wrong_order_sql,
                "my_model_wrong_name.sql": fixtures.my_model_wrong_name_sql,
                "constraints_schema.yml": MODEL_SCHEMA_YML}


class TestSqlextViewConstraintsColumnsEqual(ContractTypes, BaseViewConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model_wrong_order.sql": fixtures.my_model_view_wrong_order_sql,
                "my_model_wrong_name.sql": fixtures.my_model_view_wrong_name_sql,
                "constraints_schema.yml": MODEL_SCHEMA_YML}


class TestSqlextIncrementalConstraintsColumnsEqual(ContractTypes,
                                                   BaseIncrementalConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model_wrong_order.sql": fixtures.my_model_incremental_wrong_order_sql,
                "my_model_wrong_name.sql": fixtures.my_model_incremental_wrong_name_sql,
                "constraints_schema.yml": MODEL_SCHEMA_YML}


class TestSqlextConstraintsRuntimeDdlEnforcement(BaseConstraintsRuntimeDdlEnforcement):
    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
                "foreign_key_model.sql": fixtures.foreign_key_model_sql,
                "constraints_schema.yml": FK_SCHEMA_YML}

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return EXPECTED_SQL

    def test__not_null_is_in_the_delta_schema(self, project, spark):
        """Column-level ``not_null`` becomes the Delta field's nullability, column-level checks
        Delta CHECK constraints named after their column (dbt-spark warns about them)."""
        unformatted = open(f"{project.project_root}/models/constraints_schema.yml").read()
        with open(f"{project.project_root}/models/constraints_schema.yml", "w") as fh:
            fh.write(unformatted.replace("{schema}", project.test_schema))
        run_dbt(["run", "-s", "+my_model"])
        checks, nullable = _table(spark, project, "my_model")
        assert nullable == {"id": False, "color": True, "date_day": True}
        assert checks == {"delta.constraints.id_check_1": "(id > 0)",
                          "delta.constraints.id_check_2": "id >= 1"}


class TestSqlextIncrementalConstraintsRuntimeDdlEnforcement(
        BaseIncrementalConstraintsRuntimeDdlEnforcement):
    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model.sql": fixtures.my_model_incremental_wrong_order_depends_on_fk_sql,
                "foreign_key_model.sql": fixtures.foreign_key_model_sql,
                "constraints_schema.yml": FK_SCHEMA_YML}

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return EXPECTED_SQL


class TestSqlextModelConstraintsRuntimeEnforcement(BaseModelConstraintsRuntimeEnforcement):
    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
                "foreign_key_model.sql": fixtures.foreign_key_model_sql,
                "constraints_schema.yml": CONSTRAINED_SCHEMA_YML}

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return EXPECTED_SQL.replace("id_check_", "check_")

    def test__model_checks_are_delta_constraints(self, project, spark):
        """Model-level checks become ``delta.constraints.*``; a second run replaces the table and
        adds them again; a write breaking them is refused."""
        unformatted = open(f"{project.project_root}/models/constraints_schema.yml").read()
        with open(f"{project.project_root}/models/constraints_schema.yml", "w") as fh:
            fh.write(unformatted.replace("{schema}", project.test_schema))
        for _ in range(2):
            run_dbt(["run", "-s", "+my_model"])
            checks, nullable = _table(spark, project, "my_model")
            assert sorted(checks.values()) == ["(id > 0)", "id >= 1"]
            assert nullable["id"] is False
        with pytest.raises(sqlext.ConstraintViolationError, match="violated by row with values"):
            sqlext.sql(spark, f"insert into {project.test_schema}.my_model "
                              "values (-1, 'red', '2019-01-01')")


class TestSqlextConstraintQuotedColumn(BaseConstraintQuotedColumn):
    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model.sql": fixtures.my_model_with_quoted_column_name_sql,
                "constraints_schema.yml": QUOTED_SCHEMA_YML}

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return """
create or replace table <model_identifier>
    using delta
    tblproperties ('delta.constraints.check_1' = '(`from` = \\'blue\\')')
    as
select
  id,
  `from`,
  date_day
from
( select
    'blue' as `from`,
    1 as id,
    '2019-01-01' as date_day ) as model_subq
"""

    def test__quoted_column_constraints(self, project, spark):
        run_dbt(["run", "-s", "my_model"])
        checks, nullable = _table(spark, project, "my_model")
        assert list(checks.values()) == ["(`from` = 'blue')"]
        assert nullable == {"id": False, "from": False, "date_day": True}


class TestSqlextConstraintsRollback(BaseConstraintsRollback):
    """Better than dbt-spark: the NULL id breaks the column's CHECK constraint ``(id > 0)`` (NULL
    breaks a CHECK), which the replacing statement checks, so nothing is committed and the
    table keeps its rows ('blue'; on dbt-spark the table is replaced, 'red')."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model.sql": fixtures.my_model_sql,
                "constraints_schema.yml": MODEL_SCHEMA_YML}

    @pytest.fixture(scope="class")
    def expected_color(self):
        return "blue"

    @pytest.fixture(scope="class")
    def expected_error_messages(self):
        return ["CHECK constraint id_check_1 ((id > 0)) violated", "Nothing was committed"]


class TestSqlextIncrementalConstraintsRollback(BaseIncrementalConstraintsRollback):
    """Better than dbt-spark: the incremental run writes into the constrained table, the write
    is refused and nothing is committed, so the table keeps its rows ('blue')."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model.sql": fixtures.my_incremental_model_sql,
                "constraints_schema.yml": MODEL_SCHEMA_YML}

    @pytest.fixture(scope="class")
    def expected_color(self):
        return "blue"

    @pytest.fixture(scope="class")
    def expected_error_messages(self):
        return ["NOT NULL constraint violated for column: id", "Nothing was committed"]
