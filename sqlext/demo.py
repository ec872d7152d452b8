"""The sqlext demo: a tour of the product on an embedded local Spark.

Run with ``./demo.sh`` (or ``python -m sqlext.demo [--dir DIR]``). Every step prints what it did.
With ``--dir DIR`` the tables are left in DIR for inspection with other engines; without it they
are made in a temporary directory, removed at the end.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import tempfile
import time

from pyspark.sql import functions as F

import sqlext


def _title(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 70 - len(text)))


def _show(df, n: int = 20) -> None:
    df.show(n, truncate=False)


def run(base: str) -> None:
    """Run every step of the demo with tables under ``base``."""
    spark = sqlext.session(**{"spark.sql.warehouse.dir": os.path.join(base, "warehouse")})
    path = os.path.join(base, "events")

    _title("1. Create a partitioned table (one commit)")
    day1 = spark.createDataFrame(
        [(1, "click", "2024-01-01", 1.5), (2, "view", "2024-01-01", 0.5),
         (3, "click", "2024-01-02", 2.0)], "id long, kind string, day string, value double")
    v = sqlext.write(day1, path, mode="overwrite", partitionBy=["day"])
    print(f"committed version {v}")
    _show(sqlext.read(spark, path).orderBy("id"))
    time.sleep(1.1)       # distinct commit times for the timestamp time-travel step below
    after_create = dt.datetime.now(dt.timezone.utc)
    time.sleep(1.1)

    _title("2. Append")
    more = spark.createDataFrame([(4, "view", "2024-01-02", 3.0), (5, "click", "2024-01-03", 1.0)],
                                 day1.schema)
    print(f"committed version {sqlext.write(more, path)}")
    _show(sqlext.read(spark, path).orderBy("id"))

    _title("3. Overwrite one partition with replaceWhere")
    fixed = spark.createDataFrame([(3, "click", "2024-01-02", 20.0), (6, "view", "2024-01-02", 6.0)],
                                  day1.schema)
    v = sqlext.write(fixed, path, mode="overwrite", replaceWhere="day = '2024-01-02'")
    print(f"committed version {v}: day 2024-01-02 replaced, other days untouched")
    _show(sqlext.read(spark, path).orderBy("id"))

    _title("4. Evolve the schema (mergeSchema adds a column)")
    evolved = spark.createDataFrame([(7, "click", "2024-01-04", 7.0, "mobile")],
                                    "id long, kind string, day string, value double, device string")
    before_dml = sqlext.write(evolved, path, mergeSchema=True)
    print(f"committed version {before_dml}; older rows read NULL for the new column")
    _show(sqlext.read(spark, path).orderBy("id"))

    _title("5. Time travel: by version and by timestamp")
    print("VERSION AS OF 1:")
    _show(sqlext.read(spark, path, versionAsOf=1).orderBy("id"))
    print(f"TIMESTAMP AS OF {after_create.isoformat(timespec='seconds')} (right after the create):")
    _show(sqlext.read(spark, path, timestampAsOf=after_create).orderBy("id"))

    _title("6. Pruned read: only files that can match are scanned")
    pruned = sqlext.read(spark, path, filter="day = '2024-01-01' AND value > 1")
    print(f"files scanned: {len(pruned.inputFiles())} of "
          f"{len(sqlext.read(spark, path).inputFiles())}")
    _show(pruned)

    _title("7. DELETE and UPDATE: only files holding matching rows are rewritten")
    table = sqlext.DeltaTable.forPath(spark, path)
    table.delete("kind = 'view' AND day = '2024-01-01'")
    table.update("id = 1", {"value": "value * 100"})
    _show(table.toDF().orderBy("id"))

    _title("8. MERGE: update matching rows, insert the others")
    updates = spark.createDataFrame([(5, "click", "2024-01-03", 50.0, "web"),
                                     (8, "view", "2024-01-05", 8.0, "tv")], evolved.schema)
    _show(table.alias("t").merge(updates.alias("s"), "t.id = s.id")
          .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
    _show(table.toDF().orderBy("id"))

    _title("9. The change feed of the DELETE, UPDATE and MERGE")
    _show(sqlext.changes(spark, path, startingVersion=before_dml + 1)
          .select("id", "kind", "value", "_change_type", "_commit_version")
          .orderBy("_commit_version", "id", "_change_type"))

    _title("10. SQL on the same table")
    sqlext.sql(spark, f"CREATE TABLE demo_sql USING delta LOCATION '{path}'")
    _show(sqlext.sql(spark, "SELECT day, count(*) AS n, sum(value) AS total FROM demo_sql "
                            f"VERSION AS OF {before_dml} GROUP BY day ORDER BY day"))

    _title("11. History")
    _show(table.history().select(
        "version", "operation", "operationParameters",
        F.col("operationMetrics")["executionTimeMs"].alias("executionTimeMs")))

    _title("12. A managed table by name, and its detail")
    sqlext.write(day1.withColumn("value", F.col("value") * 10), "demo_events", mode="overwrite")
    _show(sqlext.DeltaTable.forName(spark, "demo_events").detail()
          .select("name", "location", "numFiles", "properties"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="where to create the demo tables, kept afterwards (default: "
                                      "a temporary directory, removed at the end)")
    args = parser.parse_args(argv)
    if args.dir:
        base = os.path.abspath(args.dir)
        os.makedirs(base, exist_ok=True)
        run(base)
        print(f"\nTables are in {base}; any Delta reader (deltalake, DuckDB, delta-spark) "
              "reads them.")
        return 0
    base = tempfile.mkdtemp(prefix="sqlext-demo-")
    try:
        run(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"\nThe tables were in {base}, removed now; run with --dir DIR to keep them for other "
          "readers (deltalake, DuckDB, delta-spark).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
