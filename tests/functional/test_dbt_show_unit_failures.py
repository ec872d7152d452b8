"""dbt show, unit tests and stored test failures on ``type: sqlext``: dbt-tests-adapter's suites
as dbt-spark subclasses them (its store-failures suite is skipped on the session method; here it
runs, storing failures in Delta tables)."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.dbt_show.test_dbt_show import (BaseShowDoesNotHandleDoubleLimit,
                                                      BaseShowLimit, BaseShowSqlHeader)
from dbt.tests.adapter.store_test_failures_tests.test_store_test_failures import (
    TEST_AUDIT_SCHEMA_SUFFIX, StoreTestFailuresBase)
from dbt.tests.adapter.unit_testing.test_case_insensitivity import BaseUnitTestCaseInsensivity
from dbt.tests.adapter.unit_testing.test_invalid_input import BaseUnitTestInvalidInput
from dbt.tests.adapter.unit_testing.test_types import BaseUnitTestingTypes
from dbt.tests.util import run_dbt
from dbt_common.exceptions import DbtRuntimeError


class TestShowLimit(BaseShowLimit):
    pass


class TestShowSqlHeader(BaseShowSqlHeader):
    pass


class TestShowDoesNotHandleDoubleLimit(BaseShowDoesNotHandleDoubleLimit):
    # refused while sqlext parses it, in Spark's words (PostgreSQL's wording is the base's)
    DATABASE_ERROR_MESSAGE = "[PARSE_SYNTAX_ERROR] Syntax error at or near 'limit'"

    def test_double_limit_throws_syntax_error(self, project):
        # the base searches str() of pytest's ExceptionInfo, whose repr of the error is cut in
        # the middle: Spark's message (its statement quoted) is longer than that
        with pytest.raises(DbtRuntimeError) as e:
            run_dbt(["show", "--limit", "1", "--inline", "select 1 limit 1"])
        assert self.DATABASE_ERROR_MESSAGE in str(e.value)


class TestUnitTestingTypes(BaseUnitTestingTypes):
    @pytest.fixture
    def data_types(self):
        # sql_value, yaml_value (dbt-spark's list)
        return [["1", "1"], ["2.0", "2.0"], ["'12345'", "12345"], ["'string'", "string"],
                ["true", "true"], ["date '2011-11-11'", "2011-11-11"],
                ["timestamp '2013-11-03 00:00:00-0'", "2013-11-03 00:00:00-0"]]


class TestUnitTestCaseInsensitivity(BaseUnitTestCaseInsensivity):
    pass


class TestUnitTestInvalidInput(BaseUnitTestInvalidInput):
    pass


class TestStoreTestFailures(StoreTestFailuresBase):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"quote_columns": False, "test": self.column_type_overrides()},
                "tests": {"+schema": TEST_AUDIT_SCHEMA_SUFFIX, "+store_failures": True}}

    def test_store_and_assert(self, project):
        self.run_tests_store_one_failure(project)
        self.run_tests_store_failures_and_assert(project)
