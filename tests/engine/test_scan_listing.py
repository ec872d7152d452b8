"""Reading a table of many local files runs no Spark job for listing them (issue 19).

Spark lists more than 32 root paths with a Spark job when a DataFrame is created; sqlext knows
its files from the log, and a local file system answers their ``stat`` calls on the driver.
"""

from __future__ import annotations

import sqlext
from sqlext.engine.io.scan import parquet_files
from tests.support.spark import jobs_run

KEY = "spark.sql.sources.parallelPartitionDiscovery.threshold"


def test_a_table_of_many_local_files_is_read_without_a_listing_job(spark, tmp_path):
    path = str(tmp_path / "t")
    sqlext.write(spark.range(0, 400, 1, numPartitions=40).selectExpr("id", "id * 2 AS v"), path)
    files = sorted(str(p) for p in (tmp_path / "t").glob("*.parquet"))
    assert len(files) == 40
    df, jobs = jobs_run(spark, lambda: sqlext.read(spark, path))
    # plain Spark over the same 40 paths (schema given) lists them with a job
    _, plain_jobs = jobs_run(spark, lambda: spark.read.schema(df.schema).parquet(*files))
    assert plain_jobs == 1
    assert jobs == 0
    assert sorted(r.id for r in df.collect()) == list(range(400))
    # the session's setting is left as it was, unset or set
    assert spark.conf.get(KEY, None) is None
    spark.conf.set(KEY, "35")
    try:
        assert parquet_files(spark, df.schema, files).count() == 400
        assert spark.conf.get(KEY) == "35"
    finally:
        spark.conf.unset(KEY)
