"""delta-spark's examples/python/quickstart.py, in our words: create a table from a range, read
it, upsert a larger range with MERGE, overwrite it, add 100 to the even ids with UPDATE, delete the
even ids, read version 0 by time travel; each step shows the table."""

import os

from pyspark.sql.functions import col, expr

from delta.tables import DeltaTable
from example_session import scratch, session

spark = session("quickstart")
path = os.path.join(scratch(), "delta-table")

print("== create")
spark.range(0, 5).write.format("delta").save(path)

print("== read")
spark.read.format("delta").load(path).show()

print("== upsert")
table = DeltaTable.forPath(spark, path)
table.alias("oldData") \
    .merge(spark.range(0, 20).alias("newData"), "oldData.id = newData.id") \
    .whenMatchedUpdate(set={"id": col("newData.id")}) \
    .whenNotMatchedInsert(values={"id": col("newData.id")}) \
    .execute()
table.toDF().show()

print("== overwrite")
spark.range(5, 10).write.format("delta").mode("overwrite").save(path)
table.toDF().show()

table = DeltaTable.forPath(spark, path)
print("== update: even ids + 100")
table.update(condition=expr("id % 2 == 0"), set={"id": expr("id + 100")})
table.toDF().show()

print("== delete even ids")
table.delete(condition=expr("id % 2 == 0"))
table.toDF().show()

print("== time travel to version 0")
spark.read.format("delta").option("versionAsOf", 0).load(path).show()

print("== history")
table.history().select("version", "operation").orderBy("version").show()
spark.stop()
