"""Which path a small statement takes: the driver path (:mod:`sqlext.engine.local`) or Spark's.

Settings of the session:

- ``spark.sqlext.execution.local``: ``auto`` (default) takes the driver path when the bytes it
  would read (candidate files, plus a source's) are at most ``localMaxBytes``; ``force`` takes it
  wherever it supports the statement, whatever the size; ``off`` never takes it.
- ``spark.sqlext.execution.localMaxBytes`` (default 16 MB): the bytes of Parquet the driver
  reads at most in ``auto``. A Spark job costs 80-200 ms here before it reads anything; pyarrow
  reads and writes a few MB of Parquet on the driver in well under that, so the driver path pays
  below a few tens of MB. 16 MB of Parquet also decodes (typically 2-4x) to less than Spark's
  ``spark.sql.execution.arrow.localRelationThreshold`` (48 MB), the size up to which Spark keeps
  Arrow rows as a local relation, and is little memory for a driver. Clusters whose driver
  should hold no data set ``off``.
- ``spark.sqlext.execution.localReadMaxBytes`` (default 256 KB): the same limit for a query's
  table reads and change feeds (:mod:`sqlext.engine.local.read`), which only hand rows to Spark:
  a parquet scan of a few MB costs less than reading the files on the driver and passing their
  rows to the JVM (a 1.2 MB table: 1.0-1.8x the scan's time; 12 MB: 5-11x; 0.3 MB: 0.7-1.1x),
  where a DML statement rewrites what it reads either way.

The driver path stands on Spark's own classes (``ArrowConverters``, ``LocalRelation``) and
pyspark's Arrow type mapping as pyspark 4.3 has them: on an older pyspark line the setting reads
as ``off`` (every statement takes Spark's path, as before the driver path existed).
"""

from __future__ import annotations

import pyspark
from pyspark.sql import SparkSession

from sqlext.engine.session import conf_bytes
from sqlext.errors import IllegalArgumentError

MODE_CONF = "spark.sqlext.execution.local"
MAX_BYTES_CONF = "spark.sqlext.execution.localMaxBytes"
MODES = ("auto", "force", "off")
DEFAULT_MODE = "auto"
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
READ_MAX_BYTES_CONF = "spark.sqlext.execution.localReadMaxBytes"
DEFAULT_READ_MAX_BYTES = 256 * 1024
#: the oldest pyspark line the driver path runs on
FIRST_LINE = (4, 3)


def _line(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


AVAILABLE = _line(pyspark.__version__) >= FIRST_LINE


def mode(spark: SparkSession, where: str = "") -> str:
    """The session's ``spark.sqlext.execution.local`` (``auto``, ``force`` or ``off``; always
    ``off`` on a pyspark older than 4.3); any other value raises :class:`IllegalArgumentError`
    naming ``where`` (the table and version)."""
    value = str(spark.conf.get(MODE_CONF, DEFAULT_MODE)).strip().lower()
    if value not in MODES:
        at = f"{where}: " if where else ""
        raise IllegalArgumentError(
            f"{at}{MODE_CONF} is {value!r}; it takes one of {', '.join(MODES)}. Set it to auto "
            "(the default) and run the statement again; nothing was committed.")
    return value if AVAILABLE else "off"


def max_bytes(spark: SparkSession) -> int:
    """The session's ``spark.sqlext.execution.localMaxBytes`` in bytes (16 MB when unset or not
    a size)."""
    return conf_bytes(spark, MAX_BYTES_CONF, DEFAULT_MAX_BYTES)


def use_driver(spark: SparkSession, read_bytes: int, where: str = "",
               query: bool = False) -> bool:
    """Whether a statement reading ``read_bytes`` of files takes the driver path (when it
    supports the statement at all); ``query``: the read of a query, limited by
    ``localReadMaxBytes`` instead of ``localMaxBytes``."""
    chosen = mode(spark, where)
    if chosen == "off":
        return False
    limit = conf_bytes(spark, READ_MAX_BYTES_CONF, DEFAULT_READ_MAX_BYTES) if query \
        else max_bytes(spark)
    return chosen == "force" or read_bytes <= limit
