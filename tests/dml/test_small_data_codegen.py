"""A MERGE, DELETE, UPDATE or write over little data runs its Spark work without code generation
(compiling costs more than it saves there), with the same result, and leaves the session's
settings as they were; what counts is what a statement reads, subqueries included, not what it
returns."""

from __future__ import annotations

import pytest

import sqlext
from sqlext.engine.codegen import FACTORY_MODE, MAX_BYTES_CONF, WHOLE_STAGE, input_bytes
from sqlext.errors import MultipleSourceRowMatchError
from tests.support import assert_same_rows, read_deltalake
from sqlext.engine.local.policy import MODE_CONF
from tests.support.dml_cases import changes_of, spark_table
from tests.support.spark import spark_conf

ROWS = [(i, i % 3, "abc"[i % 3], i * 10) for i in range(30)]
MERGE = ("MERGE INTO delta.`{path}` t USING (SELECT id, p, s, v FROM VALUES (1, 1, 'x', -1), "
         "(2, 2, 'y', -2), (100, 1, 'z', -100) AS src(id, p, s, v)) s ON t.id = s.id "
         "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
STATEMENTS = {
    "merge": MERGE,
    "delete": "DELETE FROM delta.`{path}` WHERE v % 20 = 0 AND s <> 'b'",
    "update": "UPDATE delta.`{path}` SET s = concat(s, '!'), v = v * p WHERE id BETWEEN 3 AND 12",
    "insert": "INSERT INTO delta.`{path}` SELECT id + 100, p, upper(s), v * 2 FROM delta.`{path}` "
              "WHERE id < 10",
    "replace where": "INSERT INTO delta.`{path}` REPLACE WHERE id >= 5 AND id < 8 SELECT id, p, "
                     "'new', -v FROM delta.`{path}` WHERE id >= 5 AND id < 8",
}


def _plans_of(spark, action) -> list[str]:
    """The physical plans of the SQL executions ``action`` ran."""
    store = spark._jsparkSession.sharedState().statusStore()

    def ids():
        executions = store.executionsList()
        return {executions.apply(i).executionId(): executions.apply(i)
                for i in range(executions.size())}

    before = set(ids())
    action()
    return [e.physicalPlanDescription() for i, e in sorted(ids().items()) if i not in before]


def _settings_untouched(spark) -> bool:
    conf = spark._jsparkSession.conf()
    return not conf.contains(WHOLE_STAGE) and not conf.contains(FACTORY_MODE)


@pytest.fixture(autouse=True)
def spark_path(spark):
    """These statements on Spark's path (a small DELETE or UPDATE otherwise runs no Spark job at
    all, on the driver: tests/engine/local)."""
    with spark_conf(spark, {MODE_CONF: "off"}):
        yield


@pytest.fixture
def cdf_table(spark, tmp_path):
    def make(name):
        path = tmp_path / name
        spark_table(spark, path, ROWS, files=1)
        sqlext.sql(spark, f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES "
                          "(delta.enableChangeDataFeed = true)")
        return path
    return make


@pytest.mark.parametrize("kind", list(STATEMENTS))
def test_a_small_statement_compiles_no_code_and_gives_the_compiled_result(spark, cdf_table,
                                                                         kind):
    statement = STATEMENTS[kind]
    interpreted, compiled = cdf_table("interpreted"), cdf_table("compiled")
    plans = _plans_of(spark, lambda: sqlext.sql(spark, statement.format(path=interpreted)))
    assert plans and not any("codegen id" in p for p in plans)
    assert _settings_untouched(spark)

    spark.conf.set(MAX_BYTES_CONF, "0")     # never: every stage is compiled
    try:
        plans = _plans_of(spark, lambda: sqlext.sql(spark, statement.format(path=compiled)))
    finally:
        spark.conf.unset(MAX_BYTES_CONF)
    assert any("codegen id" in p for p in plans)
    assert_same_rows(read_deltalake(interpreted), read_deltalake(compiled), sort_by=["id"])
    assert_same_rows(changes_of(interpreted, 2), changes_of(compiled, 2),
                     sort_by=["id", "_change_type"])


def test_a_merge_over_more_data_than_the_limit_is_compiled(spark, cdf_table):
    path = cdf_table("large")
    spark.conf.set(MAX_BYTES_CONF, "1k")    # the table's file alone is larger
    try:
        plans = _plans_of(spark, lambda: sqlext.sql(spark, MERGE.format(path=path)))
    finally:
        spark.conf.unset(MAX_BYTES_CONF)
    assert any("codegen id" in p for p in plans)


def test_the_sessions_own_code_generation_setting_is_kept(spark, cdf_table):
    path = cdf_table("own")
    spark.conf.set(WHOLE_STAGE, "true")
    try:
        plans = _plans_of(spark, lambda: sqlext.sql(spark, MERGE.format(path=path)))
        assert spark.conf.get(WHOLE_STAGE) == "true"
        assert not spark._jsparkSession.conf().contains(FACTORY_MODE)
    finally:
        spark.conf.unset(WHOLE_STAGE)
    assert any("codegen id" in p for p in plans)


def test_a_failing_small_merge_leaves_the_settings_as_they_were(spark, cdf_table):
    path = cdf_table("failing")
    twice = ("MERGE INTO delta.`{path}` t USING (SELECT * FROM VALUES (1, 'x'), (1, 'y') "
             "AS src(id, s)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET s = s.s")
    with pytest.raises(MultipleSourceRowMatchError):
        sqlext.sql(spark, twice.format(path=path))
    assert _settings_untouched(spark)


def test_what_a_query_reads_counts_not_what_it_returns(spark):
    # one row out, 8,000 bytes of range read: by the scalar subquery, or by a global aggregate
    subquery = spark.sql("SELECT * FROM VALUES (1) AS v(x) WHERE x < (SELECT max(id) FROM "
                         "range(1000))")
    assert input_bytes(subquery) >= 8000
    aggregate = spark.sql("SELECT count(*) FROM range(1000)")
    assert input_bytes(aggregate) >= 8000
    assert int(aggregate._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()) < 100


def test_a_write_reading_more_than_the_limit_is_compiled(spark, cdf_table):
    path = cdf_table("aggregate")
    spark.conf.set(MAX_BYTES_CONF, "4k")    # the range read is 8 kB; the row written is tiny
    try:
        plans = _plans_of(spark, lambda: sqlext.sql(
            spark, f"INSERT INTO delta.`{path}` SELECT count(*), 0, 'n', 0 FROM range(1000)"))
    finally:
        spark.conf.unset(MAX_BYTES_CONF)
    assert any("codegen id" in p for p in plans)
    assert read_deltalake(path).num_rows == len(ROWS) + 1
