"""The SparkSession sqlext runs on: sensible local defaults, or the active session; and the
session's size settings read as bytes."""

from __future__ import annotations

import os
import re
import sys
import weakref
from collections.abc import Callable

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from sqlext.engine.io import storage_bridge
from sqlext.errors import SqlextError

# Settings sqlext relies on for files other engines can read; applied unless the caller sets them.
FORMAT_DEFAULTS = {
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
    "spark.hadoop.parquet.enable.summary-metadata": "false",
}

LOCAL_DEFAULTS = {
    "spark.master": "local[2]",
    "spark.app.name": "sqlext",
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.adaptive.enabled": "true",
    "spark.driver.memory": "2g",
    # PySpark's call-site capture for DataFrame errors costs several py4j round trips per Column
    # function; sqlext builds its plans from hundreds of them (a third of a small MERGE's driver
    # time). Sessions the caller builds keep their own setting.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    **FORMAT_DEFAULTS,
}


PROGRESS_CONF = "spark.ui.showConsoleProgress"


def progress_setting(progress: bool | None, stream=None) -> str:
    """``spark.ui.showConsoleProgress`` for a new session: as asked, or by default on when
    ``stream`` (standard error) is a terminal, where Spark's progress bar can redraw itself."""
    if progress is None:
        stream = stream if stream is not None else sys.stderr
        progress = bool(getattr(stream, "isatty", lambda: False)())
    return "true" if progress else "false"


def is_connect(spark) -> bool:
    """Whether ``spark`` is a Spark Connect session (``SparkSession.builder.remote(...)``): no
    JVM in this process, so sqlext reads and writes the log with its Python stores and asks the
    server, through DataFrames and SQL, whatever it would ask the JVM of a classic session."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def session(progress: bool | None = None, remote: str | None = None, **conf) -> SparkSession:
    """A SparkSession for sqlext: the active one, or a new local one with sensible defaults.

    Keyword arguments are Spark settings (``session(**{"spark.sql.shuffle.partitions": "8"})``);
    ``master`` and ``app_name`` are accepted as short forms. Settings given for an already active
    session are applied to it where Spark allows (SQL settings). ``progress``: Spark's console
    progress bar for a new session (default: on when standard error is a terminal; a setting
    ``spark.ui.showConsoleProgress`` given here wins). ``remote``: a Spark Connect URL
    (``"sc://host:15002"``): a Connect session to that server, with ``conf``'s SQL settings
    (needs the ``connect`` extra; see README, "Spark Connect").
    """
    if remote is not None:
        return _remote_session(remote, {k: str(v) for k, v in conf.items()})
    if "master" in conf:
        conf["spark.master"] = conf.pop("master")
    if "app_name" in conf:
        conf["spark.app.name"] = conf.pop("app_name")
    conf = {k: str(v) for k, v in conf.items()}
    spark = SparkSession.getActiveSession()
    if spark is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        builder = SparkSession.builder
        defaults = {**LOCAL_DEFAULTS, PROGRESS_CONF: progress_setting(progress)}
        for key, value in {**defaults, **conf}.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
    else:
        for key, value in conf.items():
            if not key.startswith("spark.hadoop.") and key not in ("spark.master", "spark.app.name"):
                try:
                    spark.conf.set(key, value)
                except Exception:  # noqa: BLE001 - static settings cannot change on a live session
                    pass
    prepare(spark)
    return spark


def _remote_session(url: str, conf: dict) -> SparkSession:
    try:
        from pyspark.sql.connect.session import SparkSession as ConnectSession
        # pyspark's functions build Connect Columns while this is set (as builder.remote sets
        # it); a classic session of the same process must not be used meanwhile
        os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
        builder = ConnectSession.builder.remote(url)
        for key, value in conf.items():
            if key.startswith("spark.sql."):    # the server's other settings are its own
                builder = builder.config(key, value)
        spark = builder.getOrCreate()
    except ImportError as exc:
        raise SqlextError(f"a Spark Connect session ({url}) needs pyspark's Connect client "
                          f"libraries: pip install 'sqlext[connect]' ({exc})") from exc
    prepare(spark)
    return spark


#: per SparkContext (its JVM context never changes): its Hadoop configuration, once prepared
_PREPARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: per SparkSession: values that cannot change while it lives (see :func:`session_constant`)
_CONSTANTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def prepare(spark: SparkSession) -> None:
    """Make a session (sqlext's or the caller's) ready for sqlext: remote log stores, writer
    settings that do not change results. The JVM side is set up once per SparkContext (every
    statement calls this: four py4j round trips saved each time); the log store factory and the
    bucket options resolver are installed again on each call, as they always were. A Spark
    Connect session needs nothing: its log goes through sqlext's Python stores, its writer
    settings are the server's."""
    if is_connect(spark):
        return
    sc = spark.sparkContext
    hconf = _PREPARED.get(sc)
    if hconf is None:
        hconf = sc._jsc.hadoopConfiguration()
        hconf.set("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false")
        hconf.set("parquet.enable.summary-metadata", "false")
        _PREPARED[sc] = hconf
    storage_bridge.install(spark, hconf)


def session_constant(spark: SparkSession, name: str, compute: Callable[[], object]):
    """``compute()``, asked once per SparkSession object for ``name``: for values fixed for the
    session's lifetime (a static setting such as the warehouse directory, the session's id),
    which otherwise cost a py4j round trip each time they are read."""
    values = _CONSTANTS.get(spark)
    if values is None:
        values = _CONSTANTS[spark] = {}
    if name not in values:
        values[name] = compute()
    return values[name]


def native_sql(spark: SparkSession, text: str, *args, **kwargs):
    """Spark's own ``spark.sql``, also on a session where :func:`sqlext.install` routed
    ``spark.sql`` through sqlext (sqlext hands statements to Spark through this)."""
    return type(spark).sql(spark, text, *args, **kwargs)


class TempViews:
    """Spark's temporary views of one session: the JVM's session catalog, or on a Spark Connect
    session the server's (``spark.catalog``)."""

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self._jcatalog = None

    def exists(self, name: str) -> bool:
        """Whether Spark has a temporary view ``name``."""
        try:
            if is_connect(self.spark):
                lowered = name.lower()
                return any(t.isTemporary and t.name.lower() == lowered
                           for t in type(self.spark.catalog).listTables(self.spark.catalog))
            if self._jcatalog is None:
                # the session's catalog object never changes: looked up once per session
                spark = self.spark
                self._jcatalog = session_constant(
                    spark, "session_catalog", lambda: spark._jsparkSession.sessionState().catalog())
            return bool(self._jcatalog.getTempView(name).isDefined())
        except Exception:  # noqa: BLE001 - no temp view API: nothing shadows
            return False


def spark_temp_view_exists(spark: SparkSession, name: str) -> bool:
    """Whether ``spark`` has a temporary view ``name``."""
    return TempViews(spark).exists(name)


def native_sql_with_views(spark: SparkSession, text: str, views: dict):
    """``native_sql(spark, text)`` where each name of ``views`` in ``text`` stands for that
    DataFrame. On a Spark Connect session the DataFrames' plans travel with the query (pyspark's
    ``spark.sql(text, **dataframes)``), so the result stays valid whenever it is collected; a
    classic session analyses the query now, so temporary views registered for the call do."""
    if not views:
        return native_sql(spark, text)
    escaped = text.replace("{", "{{").replace("}", "}}")
    names = re.compile("|".join(re.escape(n) for n in sorted(views, key=len, reverse=True)))
    escaped = names.sub(lambda m: "{" + m.group(0) + "}", escaped)
    return type(spark).sql(spark, escaped, **views)


def native_table_exists(spark: SparkSession, name: str) -> bool:
    """Whether Spark's own catalog has a table or view ``name``, also on a session where
    :func:`sqlext.install` lists sqlext's tables in ``spark.catalog``."""
    method = type(spark.catalog).tableExists
    return bool(getattr(method, "__wrapped__", method)(spark.catalog, name))


def parse_size(value) -> int:
    """Bytes in a size setting: a number of bytes or ``128mb``, ``1g``, ``512 KiB``..."""
    text = str(value).strip().lower().replace(" ", "")
    units = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024 ** 2, "mb": 1024 ** 2,
             "mib": 1024 ** 2, "g": 1024 ** 3, "gb": 1024 ** 3, "gib": 1024 ** 3,
             "t": 1024 ** 4, "tb": 1024 ** 4, "tib": 1024 ** 4}
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(number):]
    if not number or unit not in units:
        raise SqlextError(f"not a size: {value!r} (expected bytes, or e.g. '128mb', '1g')")
    return int(float(number) * units[unit])


def conf_bytes(spark: SparkSession, key: str, default: int | None = None) -> int | None:
    """A size setting of the session in bytes; ``default`` when it is not a size, or unset
    (without ``default``, an unset Spark setting has Spark's default)."""
    try:
        return parse_size(spark.conf.get(key) if default is None
                          else spark.conf.get(key, str(default)))
    except (SqlextError, PySparkException):
        return default
