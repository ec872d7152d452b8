"""delta-spark's examples/python/using_with_pip.py, in our words: a session from
``configure_spark_with_delta_pip`` (with ``spark.jars.repositories`` set as the example does), a
parquet table converted to Delta, read with DataFrames and with ``DeltaTable``; and the
``delta.exceptions`` submodule imports."""

import os

from delta import *  # noqa: F401,F403  (DeltaTable, as the example uses it)
from example_session import scratch, session

spark = session("with-pip", **{"spark.jars.repositories": "https://repo1.maven.org/maven2/"})
path = os.path.join(scratch(), "delta-table")

print("== parquet table")
spark.range(0, 5).write.format("parquet").save(path)

print("== convert to delta")
DeltaTable.convertToDelta(spark, "parquet.`%s`" % path)  # noqa: F405

print("== read with DataFrames")
spark.read.format("delta").load(path).show()

print("== read with DeltaTable")
DeltaTable.forPath(spark, path).toDF().show()  # noqa: F405

print("== submodules import")
from delta.exceptions import MetadataChangedException  # noqa: E402
print(MetadataChangedException.__name__)
spark.stop()
