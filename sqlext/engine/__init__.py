"""sqlext's data plane on Spark. Importing it checks that the installed pyspark is supported."""

from sqlext.engine.pyspark_version import require_supported

require_supported()
