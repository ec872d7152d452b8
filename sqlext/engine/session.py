"""The SparkSession sqlext runs on: sensible local defaults, or the active session."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

from sqlext.engine import storage_bridge

# Settings sqlext relies on for files other engines can read; applied unless the caller sets them.
FORMAT_DEFAULTS = {
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
    "spark.hadoop.parquet.enable.summary-metadata": "false",
}

LOCAL_DEFAULTS = {
    "spark.master": "local[2]",
    "spark.app.name": "sqlext",
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.adaptive.enabled": "true",
    "spark.driver.memory": "2g",
    # PySpark's call-site capture for DataFrame errors costs several py4j round trips per Column
    # function; sqlext builds its plans from hundreds of them (a third of a small MERGE's driver
    # time). Sessions the caller builds keep their own setting.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    **FORMAT_DEFAULTS,
}


def session(**conf) -> SparkSession:
    """A SparkSession for sqlext: the active one, or a new local one with sensible defaults.

    Keyword arguments are Spark settings (``session(**{"spark.sql.shuffle.partitions": "8"})``);
    ``master`` and ``app_name`` are accepted as short forms. Settings given for an already active
    session are applied to it where Spark allows (SQL settings).
    """
    if "master" in conf:
        conf["spark.master"] = conf.pop("master")
    if "app_name" in conf:
        conf["spark.app.name"] = conf.pop("app_name")
    conf = {k: str(v) for k, v in conf.items()}
    spark = SparkSession.getActiveSession()
    if spark is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        builder = SparkSession.builder
        for key, value in {**LOCAL_DEFAULTS, **conf}.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
    else:
        for key, value in conf.items():
            if not key.startswith("spark.hadoop.") and key not in ("spark.master", "spark.app.name"):
                try:
                    spark.conf.set(key, value)
                except Exception:  # noqa: BLE001 - static settings cannot change on a live session
                    pass
    prepare(spark)
    return spark


def prepare(spark: SparkSession) -> None:
    """Make a session (sqlext's or the caller's) ready for sqlext: remote log stores, writer
    settings that do not change results."""
    storage_bridge.install(spark)
    hconf = spark.sparkContext._jsc.hadoopConfiguration()
    hconf.set("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false")
    hconf.set("parquet.enable.summary-metadata", "false")
