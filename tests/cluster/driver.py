"""The driver of the cluster test, run in its own process (the test process already has a local
SparkSession): ``python driver.py <master-url> <table-path> <result.json>``.

Connects to the standalone master, then runs sqlext's writes, DELETE, UPDATE, MERGE, OPTIMIZE,
time travel and change feed reads on the table; executors (separate JVMs, with their own Python
workers) write the data files, this process commits. Writes what it saw to ``result.json``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import sqlext  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql import types as T  # noqa: E402
from sqlext import DeltaTable  # noqa: E402


def rows(df) -> list[list]:
    return [list(r) for r in df.collect()]


def main(master: str, path: str, out: str) -> None:
    spark = sqlext.session(**{
        "spark.master": master, "spark.app.name": "sqlext-cluster-test",
        "spark.executor.memory": "512m", "spark.executor.cores": "1", "spark.cores.max": "2",
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false",
        "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
    })
    sc = spark.sparkContext
    result: dict = {"driver_pid": os.getpid(), "master": sc.master}
    deadline = time.time() + 180        # both executors up before the first job
    while sc._jsc.sc().getExecutorMemoryStatus().keySet().size() - 1 < 2 and time.time() < deadline:
        time.sleep(0.5)

    # each row records the Python worker that computed it: a process of an executor, not of
    # this driver; the two executors (one core each) share four tasks
    pid = F.udf(lambda _: os.getpid(), T.LongType())
    df = (spark.range(0, 40, numPartitions=4)
          .select(F.col("id"), (F.col("id") % 4).alias("part"), (F.col("id") * 10).alias("val"))
          .withColumn("writer_pid", pid(F.col("id"))))
    result["v_write"] = sqlext.write(df, path, partitionBy=["part"])
    result["writer_pids"] = sorted({r.writer_pid for r in sqlext.read(spark, path).collect()})
    executors = sc._jsc.sc().getExecutorMemoryStatus().keySet().size() - 1
    result["executors"] = executors

    table = DeltaTable.forPath(spark, path)
    table.delete("id % 10 = 0")                                      # DELETE
    table.update("part = 1", {"val": "val + 1"})                     # UPDATE
    source = spark.createDataFrame([(1, 1, -1, 0), (100, 0, 1000, 0)],
                                   "id long, part long, val long, writer_pid long")
    (table.alias("t").merge(source.alias("s"), "t.id = s.id")       # MERGE
     .whenMatchedUpdate(set={"val": "s.val"}).whenNotMatchedInsertAll().execute())
    latest = DeltaTable.forPath(spark, path).history(1).collect()[0].version
    result["latest"] = latest
    result["rows_latest"] = rows(sqlext.read(spark, path).select("id", "part", "val"))
    result["rows_v0"] = rows(sqlext.read(spark, path, versionAsOf=0).select("id", "part", "val"))
    changes = sqlext.changes(spark, path, 1, latest).select("id", "val", "_change_type",
                                                            "_commit_version")
    result["changes"] = rows(changes)
    result["operations"] = [r.operation for r in table.history().collect()]
    result["optimize"] = table.optimize().executeCompaction().collect()[0].metrics.numFilesRemoved
    result["rows_after_optimize"] = rows(sqlext.read(spark, path).select("id", "part", "val"))
    Path(out).write_text(json.dumps(result))
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])
