"""sqlext's data plane on Spark. Importing it checks that the installed pyspark is supported and
makes sqlext's errors instances of pyspark's exception classes
(:mod:`sqlext.engine.pyspark_errors`)."""

from sqlext.engine.pyspark_version import require_supported

require_supported()

from sqlext.engine.pyspark_errors import bind  # noqa: E402 - pyspark is checked first

bind()
