"""dbt-tests-adapter's incremental suites on ``type: sqlext`` (delta tables, one commit per run)."""

import re

import pytest

from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
)
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChange,
)
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import (
    BaseIncrementalUniqueKey,
    seeds__add_new_rows_sql,
    seeds__duplicate_insert_sql,
    seeds__seed_csv,
)


def date_literals(sql: str) -> str:
    """The suite's inserts with dates as DATE literals: Spark 4 refuses to store a string in a
    date column (``Cast.canANSIStoreAssign``), as Spark itself does for these statements."""
    return re.sub(r"'(\d{4}-\d{2}-\d{2})'\)", r"date'\1')", sql)


class TestIncrementalUniqueKey(BaseIncrementalUniqueKey):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {
            "duplicate_insert.sql": date_literals(seeds__duplicate_insert_sql),
            "seed.csv": seeds__seed_csv,
            "add_new_rows.sql": date_literals(seeds__add_new_rows_sql),
        }


class TestMergeExcludeColumns(BaseMergeExcludeColumns):
    pass


class TestIncrementalPredicatesDeleteInsert(BaseIncrementalPredicates):
    pass


class TestIncrementalOnSchemaChange(BaseIncrementalOnSchemaChange):
    pass


class TestMicrobatch(BaseMicrobatch):
    pass
