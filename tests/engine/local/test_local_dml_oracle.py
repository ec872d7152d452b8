"""The driver path against delta-spark 4.4 (the oracle, in its own process): a DELETE and an
UPDATE on copies of one CDF table leave the same rows, the same change feed and the same row
counts in ``operationMetrics``, and run no Spark job on the sqlext side."""

from __future__ import annotations

import shutil

import pytest

import sqlext
from sqlext.engine.local import policy
from tests.support import assert_same_rows, read_deltalake
from tests.support.deltaspark import DeltaSpark
from tests.support.spark import jobs_run, spark_conf
from tests.support.table_checks import commit_info

pytestmark = pytest.mark.slow

STATEMENTS = ["UPDATE delta.`{path}` SET s = upper(s), v = v * 2 + CAST(p AS BIGINT) "
              "WHERE id BETWEEN 3 AND 9",
              "DELETE FROM delta.`{path}` WHERE v % 30 = 0 AND id > 10"]
TIMESTAMP = ["_commit_timestamp"]    # the commits' own times differ
COUNTED = ("numUpdatedRows", "numDeletedRows", "numCopiedRows")


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    work = tmp_path_factory.mktemp("delta-spark-local-dml")
    worker = DeltaSpark.start(log_path=work / "delta-spark.log")
    yield worker
    worker.close()


def test_driver_path_matches_delta_spark(spark, tmp_path, oracle):
    ours, theirs = tmp_path / "sqlext", tmp_path / "delta-spark"
    rows = ", ".join(f"({i}, {i % 3}, '{'abc'[i % 3]}', {i * 10})" for i in range(20))
    sqlext.sql(spark, f"CREATE TABLE delta.`{ours}` (id BIGINT, p INT, s STRING, v BIGINT) "
                      "USING delta TBLPROPERTIES (delta.enableChangeDataFeed = true)")
    sqlext.sql(spark, f"INSERT INTO delta.`{ours}` SELECT * FROM VALUES {rows} AS r(id, p, s, v)")
    shutil.copytree(ours, theirs)
    for version, statement in enumerate(STATEMENTS, start=2):
        with spark_conf(spark, {policy.MODE_CONF: "force"}):
            _, jobs = jobs_run(spark, lambda: sqlext.sql(spark, statement.format(path=ours)))
        assert jobs == 0
        oracle.sql(statement.format(path=theirs))
        mine, its = commit_info(ours, version), commit_info(theirs, version)
        assert mine["operation"] == its["operation"]
        # (operationParameters.predicate: delta-spark writes its plan's text, with expression
        # ids; sqlext writes the condition as given, on either path)
        assert {k: v for k, v in mine["operationMetrics"].items() if k in COUNTED} == \
            {k: v for k, v in its["operationMetrics"].items() if k in COUNTED}
        assert_same_rows(read_deltalake(ours), read_deltalake(theirs), sort_by=["id"])
        assert_same_rows(oracle.changes(ours, version, version).drop_columns(TIMESTAMP),
                         oracle.changes(theirs, version, version).drop_columns(TIMESTAMP),
                         sort_by=["id", "_change_type"])
