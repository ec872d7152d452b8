"""delta-spark's examples/python/quickstart_sql.py, in our words: the quickstart's steps as SQL on
a catalog table (CREATE TABLE ... USING delta, INSERT, MERGE from a parquet table, INSERT
OVERWRITE, UPDATE, DELETE), then version 0 read with ``option("versionAsOf", 0).table(name)``."""

from example_session import session

spark = session("quickstart_sql")
name = "tbltestpython"
spark.sql("DROP TABLE IF EXISTS " + name)
spark.sql("DROP TABLE IF EXISTS newData")
try:
    print("== create")
    spark.sql(f"CREATE TABLE {name}(id LONG) USING delta")
    spark.sql(f"INSERT INTO {name} VALUES 0, 1, 2, 3, 4")

    print("== read")
    spark.sql(f"SELECT * FROM {name}").show()

    print("== upsert")
    spark.sql("CREATE TABLE newData(id LONG) USING parquet")
    spark.sql("INSERT INTO newData VALUES 3, 4, 5, 6")
    spark.sql(f"""MERGE INTO {name} USING newData
                  ON {name}.id = newData.id
                  WHEN MATCHED THEN UPDATE SET {name}.id = newData.id
                  WHEN NOT MATCHED THEN INSERT *""")
    spark.sql(f"SELECT * FROM {name}").show()

    print("== overwrite")
    spark.sql(f"INSERT OVERWRITE {name} SELECT * FROM (VALUES 5, 6, 7, 8, 9) x (id)")
    spark.sql(f"SELECT * FROM {name}").show()

    print("== update: even ids + 100")
    spark.sql(f"UPDATE {name} SET id = (id + 100) WHERE (id % 2 == 0)")
    spark.sql(f"SELECT * FROM {name}").show()

    print("== delete even ids")
    spark.sql(f"DELETE FROM {name} WHERE (id % 2 == 0)")
    spark.sql(f"SELECT * FROM {name}").show()

    print("== time travel to version 0")
    spark.read.format("delta").option("versionAsOf", 0).table(name).show()
finally:
    spark.sql("DROP TABLE " + name)
    spark.sql("DROP TABLE IF EXISTS newData")
    print("== tables after cleanup")
    print(sorted(t.name for t in spark.catalog.listTables()))
    spark.stop()
