"""The session every example script starts with, set up as delta-spark's examples/python/
using_with_pip.py does (pip route): the Delta extension and catalog on the builder, then
``configure_spark_with_delta_pip(builder).getOrCreate()``. Tables and the warehouse go under the
scratch folder the harness passes (``sys.argv[1]``) instead of /tmp; small shuffles (and
delta-spark's log replay in 2 partitions instead of 50) and no progress bars keep both engines
quick and quiet on a small machine."""

import os
import sys

from pyspark.sql import SparkSession

from delta import *  # noqa: F401,F403  (configure_spark_with_delta_pip, as the examples import it)


def scratch() -> str:
    return sys.argv[1]


def session(app_name: str, **conf):
    builder = SparkSession.builder \
        .appName(app_name) \
        .master("local[2]") \
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension") \
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog") \
        .config("spark.sql.warehouse.dir", os.path.join(scratch(), "warehouse")) \
        .config("spark.sql.session.timeZone", "UTC") \
        .config("spark.ui.enabled", "false") \
        .config("spark.ui.showConsoleProgress", "false") \
        .config("spark.sql.shuffle.partitions", "2") \
        .config("spark.databricks.delta.snapshotPartitions", "2")
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = configure_spark_with_delta_pip(builder).getOrCreate()  # noqa: F405
    spark.sparkContext.setLogLevel("ERROR")
    return spark
