"""dbt-tests-adapter's data type suites on ``type: sqlext``: seeds and models agree on types.

``type_int()`` is ``int`` and ``type_float()`` is ``float``, as on dbt-spark; seeds infer
``bigint`` and ``double``, so the int and float suites' expected seeds say their column type, as
dbt-spark's own data type tests do.
"""

import pytest
from dbt.tests.adapter.utils.data_types.test_type_bigint import BaseTypeBigInt
from dbt.tests.adapter.utils.data_types.test_type_boolean import BaseTypeBoolean
from dbt.tests.adapter.utils.data_types.test_type_float import BaseTypeFloat
from dbt.tests.adapter.utils.data_types.test_type_float import (
    seeds__expected_csv as float_expected_csv,
)
from dbt.tests.adapter.utils.data_types.test_type_int import BaseTypeInt
from dbt.tests.adapter.utils.data_types.test_type_int import (
    seeds__expected_csv as int_expected_csv,
)
from dbt.tests.adapter.utils.data_types.test_type_numeric import BaseTypeNumeric
from dbt.tests.adapter.utils.data_types.test_type_string import BaseTypeString
from dbt.tests.adapter.utils.data_types.test_type_timestamp import BaseTypeTimestamp
from dbt.tests.util import get_connection


def expected_seed(column: str, spark_type: str) -> str:
    return ("version: 2\nseeds:\n  - name: expected\n    config:\n      column_types:\n"
            f"        {column}: {spark_type}\n")


class TestTypeBigInt(BaseTypeBigInt):
    pass


class TestTypeBoolean(BaseTypeBoolean):
    pass


class TestTypeFloat(BaseTypeFloat):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"expected.csv": float_expected_csv,
                "expected.yml": expected_seed("float_col", "float")}

    def test_type_float_is_sparks_float(self, project):
        with get_connection(project.adapter):
            assert project.adapter.execute_macro("type_float") == "float"


class TestTypeInt(BaseTypeInt):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"expected.csv": int_expected_csv, "expected.yml": expected_seed("int_col", "int")}

    def test_type_int_is_sparks_int(self, project):
        with get_connection(project.adapter):
            assert project.adapter.execute_macro("type_int") == "int"


class TestTypeNumeric(BaseTypeNumeric):
    pass


class TestTypeString(BaseTypeString):
    pass


class TestTypeTimestamp(BaseTypeTimestamp):
    pass
