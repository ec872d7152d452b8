"""delta-spark's examples/python/table_exists.py, in our words: a helper tells whether a path holds
a Delta table by reading it and catching pyspark's ``AnalysisException`` ("Path does not exist" or
"is not a Delta table"); false before the table is written, true after."""

import os

from pyspark.sql.utils import AnalysisException

from example_session import scratch, session


def exists(spark, path):
    try:
        spark.read.load(path=path, format="delta")
    except AnalysisException as exception:
        if "is not a Delta table" in str(exception) or "Path does not exist" in str(exception):
            return False
        raise
    return True


spark = session("table_exists")
path = os.path.join(scratch(), "table_exists")
print("== before writing:", exists(spark, path))
spark.range(0, 5).write.format("delta").save(path)
print("== after writing:", exists(spark, path))
spark.stop()
