"""delta-spark's examples/python/quickstart_sql_on_paths.py, in our words: the SQL quickstart on a
table named by its path, ``delta.`<path>```: CREATE, INSERT, MERGE (target alias) from a parquet
table, INSERT OVERWRITE, UPDATE, DELETE."""

import os

from example_session import scratch, session

spark = session("quickstart_sql_on_paths")
table = "delta.`%s`" % os.path.join(scratch(), "delta-table")
spark.sql("DROP TABLE IF EXISTS newData")
try:
    print("== create")
    spark.sql(f"CREATE TABLE {table}(id LONG) USING delta")
    spark.sql(f"INSERT INTO {table} VALUES 0, 1, 2, 3, 4")

    print("== read")
    spark.sql(f"SELECT * FROM {table}").show()

    print("== upsert")
    spark.sql("CREATE TABLE newData(id LONG) USING parquet")
    spark.sql("INSERT INTO newData VALUES 3, 4, 5, 6")
    spark.sql(f"""MERGE INTO {table} AS data USING newData
                  ON data.id = newData.id
                  WHEN MATCHED THEN UPDATE SET data.id = newData.id
                  WHEN NOT MATCHED THEN INSERT *""")
    spark.sql(f"SELECT * FROM {table}").show()

    print("== overwrite")
    spark.sql(f"INSERT OVERWRITE {table} SELECT * FROM (VALUES 5, 6, 7, 8, 9) x (id)")
    spark.sql(f"SELECT * FROM {table}").show()

    print("== update: even ids + 100")
    spark.sql(f"UPDATE {table} SET id = (id + 100) WHERE (id % 2 == 0)")
    spark.sql(f"SELECT * FROM {table}").show()

    print("== delete even ids")
    spark.sql(f"DELETE FROM {table} WHERE (id % 2 == 0)")
    spark.sql(f"SELECT * FROM {table}").show()

    print("== history")
    spark.sql(f"DESCRIBE HISTORY {table}").select("version", "operation") \
        .orderBy("version").show()
finally:
    spark.sql("DROP TABLE IF EXISTS newData")
    spark.stop()
