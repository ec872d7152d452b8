"""delta-spark's examples/python/change_data_feed.py, in our words: a partitioned catalog table
at a location with the change feed on (CREATE TABLE ... LOCATION, TBLPROPERTIES), an append, an
UPDATE of every row, a DELETE, a partition DELETE, a MERGE from a second table written with
``saveAsTable``; after each, the change feed from that version read by table name
(``readChangeFeed``, ``startingVersion``, ordered by change type and id). The example's last step,
streaming the feed to the console, is left out (a batch read of the same feed is shown instead)."""

import os

from pyspark.sql.functions import expr

from delta.tables import DeltaTable
from example_session import scratch, session

spark = session("Change Data Feed")
path = os.path.join(scratch(), "student")
other_path = os.path.join(scratch(), "student_source")


def changes(starting_version):
    return spark.read.format("delta") \
        .option("readChangeFeed", "true") \
        .option("startingVersion", str(starting_version)) \
        .table("student") \
        .orderBy("_change_type", "id") \
        .drop("_commit_timestamp")


def cleanup():
    spark.sql("DROP TABLE IF EXISTS student")
    spark.sql("DROP TABLE IF EXISTS student_source")


cleanup()
try:
    spark.sql(f"""CREATE TABLE student (id INT, name STRING, age INT)
                  USING DELTA
                  PARTITIONED BY (age)
                  TBLPROPERTIES (delta.enableChangeDataFeed = true)
                  LOCATION '{path}'""")
    spark.range(0, 10).selectExpr("CAST(id as INT) as id", "CAST(id as STRING) as name",
                                  "CAST(id % 4 + 18 as INT) as age") \
        .write.format("delta").mode("append").save(path)                        # v1
    print("== (v1) table")
    spark.read.format("delta").load(path).orderBy("id").show()
    print("== (v1) changes")
    changes(1).show()

    table = DeltaTable.forPath(spark, path)
    print("== (v2) id -> id + 1")
    table.update(set={"id": expr("id + 1")})                                    # v2
    changes(2).show()

    print("== (v3) delete id >= 7")
    table.delete(condition=expr("id >= 7"))                                     # v3
    changes(3).show()

    print("== (v4) delete age = 18 (a whole partition)")
    table.delete(condition=expr("age = 18"))                                    # v4
    changes(4).show()

    spark.sql(f"""CREATE TABLE student_source (id INT, name STRING, age INT)
                  USING DELTA
                  LOCATION '{other_path}'""")
    spark.range(0, 3).selectExpr("CAST(id as INT) as id", "CAST(id as STRING) as name",
                                 "CAST(id % 4 + 18 as INT) as age") \
        .write.format("delta").mode("append").saveAsTable("student_source")
    source = spark.sql("SELECT * FROM student_source")
    table.alias("target") \
        .merge(source.alias("source"), "target.id = source.id") \
        .whenMatchedUpdate(set={"id": "source.id", "age": "source.age + 10"}) \
        .whenNotMatchedInsertAll() \
        .execute()                                                              # v5
    print("== (v5) merge")
    changes(5).show()

    print("== every change from version 0")
    changes(0).show(100)
finally:
    cleanup()
    spark.stop()
