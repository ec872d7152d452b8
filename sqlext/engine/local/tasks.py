"""How Spark's file scan would group files into tasks, so that the driver path writes as many
files as the Spark path: Spark packs small files into read tasks (``FilePartition``), and a
rewrite task writes one file per partition value of its rows.

Spark's rule (``FilePartition.maxSplitBytes`` and ``getFilePartitions``): the split size is
``min(maxPartitionBytes, max(openCostInBytes, total / minPartitionNum))`` where ``total`` counts
each file's size plus ``openCostInBytes``; files sorted by size, largest first, fill a task
until the next one would take it past the split size. A file larger than the split size is
split into byte ranges by Spark; its row groups then still land in one task when the file has
one row group, as small files written by Spark do, so it is kept whole here.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from sqlext.engine.session import conf_bytes

_MAX_PARTITION_BYTES = 128 * 1024 * 1024
_OPEN_COST = 4 * 1024 * 1024


def _min_partitions(spark: SparkSession) -> int:
    value = spark.conf.get("spark.sql.files.minPartitionNum", None)
    return int(value) if value else spark.sparkContext.defaultParallelism


def scan_tasks(spark: SparkSession, sizes: list[int]) -> list[list[int]]:
    """The indexes of files of ``sizes`` bytes, grouped as Spark's scan would read them."""
    max_bytes = conf_bytes(spark, "spark.sql.files.maxPartitionBytes", _MAX_PARTITION_BYTES)
    open_cost = conf_bytes(spark, "spark.sql.files.openCostInBytes", _OPEN_COST)
    total = sum(s + open_cost for s in sizes)
    split = min(max_bytes, max(open_cost, total // max(1, _min_partitions(spark))))
    tasks: list[list[int]] = []
    current: list[int] = []
    filled = 0
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        if current and filled + sizes[i] > split:
            tasks.append(current)
            current, filled = [], 0
        filled += sizes[i] + open_cost
        current.append(i)
    if current:
        tasks.append(current)
    return tasks
