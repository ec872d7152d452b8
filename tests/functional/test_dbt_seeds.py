"""dbt-tests-adapter's seed suites on ``type: sqlext``.

The suites' setup SQL and expected column types are PostgreSQL's (``TEXT``, ``TIMESTAMP WITHOUT
TIME ZONE``, double-quoted names); here they are Spark's, as dbt adapters for Spark write them.
"""

from pathlib import Path

import pytest
from dbt.tests.adapter.simple_seed import seeds
from dbt.tests.adapter.simple_seed.test_seed import (
    BaseBasicSeedTests,
    BaseSeedConfigFullRefreshOff,
    BaseSeedConfigFullRefreshOn,
    BaseSeedCustomSchema,
    BaseSeedParsing,
    BaseSeedSpecificFormats,
    BaseSeedWithEmptyDelimiter,
    BaseSeedWithUniqueDelimiter,
    BaseSeedWithWrongDelimiter,
    BaseSimpleSeedEnabledViaConfig,
    BaseSimpleSeedWithBOM,
    BaseTestEmptySeed,
)
from dbt.tests.adapter.simple_seed.test_seed_type_override import BaseSimpleSeedColumnOverride
from dbt.tests.util import check_relations_equal, copy_file, run_dbt


def expected_seed_sql() -> str:
    """dbt-tests-adapter's ``seed_expected`` table, in Spark SQL (Spark does not store a string
    in a timestamp column without a cast)."""
    values = seeds.seeds__expected_sql.split("VALUES", 1)[1].strip().rstrip(";")
    return (
        "create table {schema}.seed_expected using delta as "
        "select cast(seed_id as bigint) as seed_id, first_name, email, ip_address, "
        "cast(birthday as timestamp) as birthday "
        f"from values {values} as v(seed_id, first_name, email, ip_address, birthday)"
    )


class SparkExpectedSeed:
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        project.run_sql(expected_seed_sql())


class FullRefreshKeepsViews:
    """A full-refresh seed replaces its Delta table in ONE commit (a new version of the same
    table), so a view reading it stays valid and sees the new rows. dbt-tests-adapter expects
    PostgreSQL's ``drop ... cascade`` to have dropped the downstream view; on sqlext (as on
    dbt-spark with Delta) the view must still exist and match."""

    def check_full_refresh(self, project, *args):
        self._build_relations_for_test(project)
        self._check_relation_end_state(run_result=run_dbt(["seed", *args]), project=project,
                                       exists=True)
        check_relations_equal(project.adapter,
                              ["models__downstream_from_seed_actual", "seed_expected"])


class TestBasicSeedTests(SparkExpectedSeed, FullRefreshKeepsViews, BaseBasicSeedTests):
    def test_simple_seed_full_refresh_flag(self, project):
        self.check_full_refresh(project, "--full-refresh")


class TestSeedConfigFullRefreshOn(SparkExpectedSeed, FullRefreshKeepsViews,
                                  BaseSeedConfigFullRefreshOn):
    def test_simple_seed_full_refresh_config(self, project):
        self.check_full_refresh(project)


class TestSeedConfigFullRefreshOff(SparkExpectedSeed, BaseSeedConfigFullRefreshOff):
    pass


class TestSeedCustomSchema(SparkExpectedSeed, BaseSeedCustomSchema):
    pass


class TestSeedWithUniqueDelimiter(SparkExpectedSeed, BaseSeedWithUniqueDelimiter):
    pass


class TestSeedWithWrongDelimiter(SparkExpectedSeed, BaseSeedWithWrongDelimiter):
    pass


class TestSeedWithEmptyDelimiter(SparkExpectedSeed, BaseSeedWithEmptyDelimiter):
    pass


class TestSimpleSeedEnabledViaConfig(BaseSimpleSeedEnabledViaConfig):
    pass


class TestSeedParsing(SparkExpectedSeed, BaseSeedParsing):
    pass


class TestSimpleSeedWithBOM(BaseSimpleSeedWithBOM):
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        project.run_sql(expected_seed_sql())
        # the suite's CSV with a byte order mark ships next to dbt-tests-adapter's seed fixtures
        copy_file(str(Path(seeds.__file__).parent), "seed_bom.csv",
                  project.project_root / Path("seeds") / "seed_bom.csv", "")


class TestSeedSpecificFormats(BaseSeedSpecificFormats):
    pass


class TestEmptySeed(BaseTestEmptySeed):
    pass


SPARK_TYPES_SCHEMA_YML = """
version: 2
seeds:
- name: seed_enabled
  columns:
  - name: birthday
    data_tests:
    - column_type:
        type: date
  - name: seed_id
    data_tests:
    - column_type:
        type: string
- name: seed_tricky
  columns:
  - name: seed_id
    data_tests:
    - column_type:
        type: bigint
  - name: seed_id_str
    data_tests:
    - column_type:
        type: string
  - name: a_bool
    data_tests:
    - column_type:
        type: boolean
  - name: looks_like_a_bool
    data_tests:
    - column_type:
        type: string
  - name: a_date
    data_tests:
    - column_type:
        type: timestamp
  - name: looks_like_a_date
    data_tests:
    - column_type:
        type: string
  - name: relative
    data_tests:
    - column_type:
        type: string
  - name: weekday
    data_tests:
    - column_type:
        type: string
"""


class TestSimpleSeedColumnOverride(BaseSimpleSeedColumnOverride):
    @pytest.fixture(scope="class")
    def models(self):
        return {"schema.yml": SPARK_TYPES_SCHEMA_YML}

    @staticmethod
    def seed_enabled_types():
        return {"seed_id": "string", "birthday": "date"}

    @staticmethod
    def seed_tricky_types():
        return {"seed_id_str": "string", "looks_like_a_bool": "string",
                "looks_like_a_date": "string"}
