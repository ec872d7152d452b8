"""delta-spark's examples/python/utilities.py, in our words: write a parquet table, convert it
with ``DeltaTable.convertToDelta``, read it, VACUUM, history, detail, the symlink manifest, SQL
VACUUM with a retention, SQL DESCRIBE HISTORY. Printed: the rows, and of history and detail the
columns that do not depend on the engine, the clock or the location."""

import os

from delta.tables import DeltaTable
from example_session import scratch, session

spark = session("utilities", **{"spark.sql.sources.parallelPartitionDiscovery.parallelism": "4"})
path = os.path.join(scratch(), "delta-table")

print("== parquet table")
spark.range(0, 5).write.format("parquet").save(path)

print("== convert to delta")
DeltaTable.convertToDelta(spark, "parquet.`%s`" % path)
spark.read.format("delta").load(path).show()

table = DeltaTable.forPath(spark, path)
print("== vacuum")
print(sorted(r[0].replace(path, "<table>") for r in table.vacuum().collect()))

print("== history")
table.history().select("version", "operation").orderBy("version").show()

print("== detail")
table.detail().select("format", "numFiles", "partitionColumns", "minReaderVersion",
                      "minWriterVersion").show()

print("== manifest")
table.generate("symlink_format_manifest")
manifest = os.path.join(path, "_symlink_format_manifest", "manifest")
with open(manifest) as f:
    print(len(f.read().split()), "files listed")

print("== sql vacuum")
print(spark.sql("VACUUM '%s' RETAIN 169 HOURS" % path).count(), "row")

print("== sql describe history")
print([(r.version, r.operation) for r in
       spark.sql("DESCRIBE HISTORY delta.`%s`" % path).orderBy("version").collect()])
spark.stop()
