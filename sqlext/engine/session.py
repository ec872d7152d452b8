"""The SparkSession sqlext runs on: sensible local defaults, or the active session; where a new
session keeps its tables (:func:`choose_warehouse`); pyspark's error logs kept out of sqlext's
errors (:func:`quiet_query_context_logs`); and the session's size settings read as bytes."""

from __future__ import annotations

import logging
import os
import re
import shlex
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
#: sqlext's progress lines per phase of MERGE and OPTIMIZE (:mod:`sqlext.engine.progress`): set
#: when asked for (``sqlext.session(progress=...)``, ``SET sqlext.progress = true|false``)
PROGRESS_LINES_CONF = "sqlext.progress"

WAREHOUSE_CONF = "spark.sql.warehouse.dir"
#: the environment variable naming the warehouse of new sessions (see :func:`choose_warehouse`)
WAREHOUSE_ENV = "SQLEXT_WAREHOUSE"
#: the warehouse of new sessions when nothing else names one: one per user, whatever the folder
DEFAULT_WAREHOUSE = os.path.join("~", ".sqlext", "warehouse")

WAREHOUSE_RULE = (
    "Where tables are kept (a new Spark session's spark.sql.warehouse.dir), first found: "
    "--warehouse DIR (or --conf spark.sql.warehouse.dir=DIR); the environment variable "
    f"{WAREHOUSE_ENV}; spark.sql.warehouse.dir in Spark's configuration (spark-defaults.conf, "
    f"PYSPARK_SUBMIT_ARGS); {DEFAULT_WAREHOUSE}. Never the current folder, so every folder "
    "sees the same tables.")


def choose_warehouse(given: str | None = None, environ=None,
                     configured: Callable[[], str | None] | None = None) -> tuple[str, str]:
    """The warehouse of a new session, and where the choice came from: the same rule for
    ``sqlext.session()``, ``sqlext-sql``, ``sqlext-thriftserver`` and ``sqlext-connect-server``
    (:data:`WAREHOUSE_RULE`). ``given``: the caller's own (a ``--warehouse`` flag, a
    ``spark.sql.warehouse.dir`` setting passed to the call); then ``$SQLEXT_WAREHOUSE``
    (``environ``, default ``os.environ``); then Spark's configuration files (``configured()``,
    default :func:`configured_warehouse` of ``environ``); then :data:`DEFAULT_WAREHOUSE`.
    Spark's own default, ``./spark-warehouse`` of the current folder, is never used: a shell
    started in another folder would find no tables and make an empty warehouse there. Local
    paths are made absolute (``~`` expanded); URIs (``s3a://``, ``hdfs://``, ``file:``) are
    kept as given."""
    environ = os.environ if environ is None else environ
    if given:
        return absolute_location(given), "given"
    if environ.get(WAREHOUSE_ENV):
        return absolute_location(environ[WAREHOUSE_ENV]), WAREHOUSE_ENV
    found = configured() if configured is not None else configured_warehouse(environ)
    if found:
        return found, "Spark's configuration"
    return absolute_location(DEFAULT_WAREHOUSE), "default"


def absolute_location(location: str) -> str:
    """A local path made absolute (``~`` expanded); a URI (``scheme:...``) as it is."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]+:", location):
        return location
    return os.path.abspath(os.path.expanduser(location))


def configured_warehouse(environ=None) -> str | None:
    """``spark.sql.warehouse.dir`` as Spark's launcher would find it for a new local session
    (without starting one): ``--conf`` in ``PYSPARK_SUBMIT_ARGS``, else the properties file
    (``--properties-file`` there, else ``spark-defaults.conf`` in ``$SPARK_CONF_DIR`` or
    ``$SPARK_HOME/conf``, ``SPARK_HOME`` being pyspark's folder when unset)."""
    environ = os.environ if environ is None else environ
    args = shlex.split(environ.get("PYSPARK_SUBMIT_ARGS", ""))
    properties_file = None
    for flag, value in zip(args, args[1:]):
        if flag in ("--conf", "-c") and value.partition("=")[0].strip() == WAREHOUSE_CONF:
            return value.partition("=")[2].strip()
        if flag == "--properties-file":
            properties_file = value
    if properties_file is None:
        conf_dir = environ.get("SPARK_CONF_DIR")
        if not conf_dir:
            import pyspark
            home = environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
            conf_dir = os.path.join(home, "conf")
        properties_file = os.path.join(conf_dir, "spark-defaults.conf")
    try:
        with open(properties_file, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        match = re.match(r"^\s*([^\s=:#!][^\s=:]*)\s*[\s=:]\s*(.*?)\s*$", line)
        if match and match.group(1) == WAREHOUSE_CONF and match.group(2):
            return match.group(2)
    return None


def warn_about_old_warehouse(chosen: str, cwd: str | None = None) -> None:
    """Say so when the default warehouse is used while the current folder's
    ``spark-warehouse`` holds sqlext tables (Spark's default before: a session started here
    used it)."""
    old = os.path.join(cwd or os.getcwd(), "spark-warehouse")
    if os.path.isdir(os.path.join(old, "_sqlext_catalog")) and \
            os.path.realpath(old) != os.path.realpath(chosen):
        logging.getLogger("sqlext").warning(
            "sqlext: tables are kept in %s (the default); %s holds sqlext tables from before: "
            "use them with --warehouse %s or %s=%s", chosen, old, old, WAREHOUSE_ENV, old)


#: pyspark's loggers that print a JSON block (the error and the JVM's stack) each time an error
#: with a query context is made, before the error is even raised
QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
#: modules whose Spark errors sqlext reports itself (raised as they are or wrapped)
_OWN_MODULES = ("sqlext.", "dbt.adapters.sqlext")


class _ReportedBySqlext(logging.Filter):
    """Drops pyspark's query context log records of errors made while sqlext (or its dbt
    adapter) is running: sqlext raises them, or its own error naming the table, to the caller;
    the log would print the same error a second time with the JVM's stack first. Spark errors
    of the user's own calls are logged as pyspark does."""

    def filter(self, record: logging.LogRecord) -> bool:
        frame = sys._getframe(1)
        while frame is not None:
            module = frame.f_globals.get("__name__") or ""
            if module == "sqlext" or module.startswith(_OWN_MODULES):
                return False
            frame = frame.f_back
        return True


_QUIETED = False


def quiet_query_context_logs() -> None:
    """Keep pyspark's query context logs (``SQLQueryContextLogger``, a ~10 KB JSON block on
    standard error with the JVM's stack) out of the errors sqlext reports: a Spark error made
    while sqlext runs is raised, or reported in one line by ``sqlext-sql``, without it. Called
    by ``sqlext.session()``, ``sqlext.install()``, ``sqlext-sql`` and for every session sqlext
    prepares (:func:`prepare`: the dbt adapter's too). Once per process; other Spark errors
    still log as pyspark does."""
    global _QUIETED
    if _QUIETED:
        return
    from pyspark.logger import PySparkLogger

    for name in QUERY_CONTEXT_LOGGERS:
        logger = PySparkLogger.getLogger(name)
        if not any(isinstance(f, _ReportedBySqlext) for f in logger.filters):
            logger.addFilter(_ReportedBySqlext())
    _QUIETED = True


def progress_settings(progress: bool | None, stream=None) -> dict[str, str]:
    """The progress settings of a new session: Spark's bar (:func:`progress_setting`) and,
    when asked either way, sqlext's progress lines (:data:`PROGRESS_LINES_CONF`); not asked,
    the lines follow the bar and standard error being a terminal
    (:class:`sqlext.engine.progress.Progress`)."""
    settings = {PROGRESS_CONF: progress_setting(progress, stream)}
    if progress is not None:
        settings[PROGRESS_LINES_CONF] = "true" if progress else "false"
    return settings


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
    ``master``, ``app_name`` and ``warehouse`` are accepted as short forms. Settings given for an
    already active session are applied to it where Spark allows (SQL settings). A new session's
    warehouse follows :func:`choose_warehouse` (``warehouse``, ``$SQLEXT_WAREHOUSE``, Spark's
    configuration files, ``~/.sqlext/warehouse``). ``progress``: Spark's console progress bar
    and sqlext's progress lines for a new session (default: on when standard error is a
    terminal; a setting ``spark.ui.showConsoleProgress`` given here wins). ``remote``: a Spark
    Connect URL (``"sc://host:15002"``): a Connect session to that server, with ``conf``'s SQL
    settings (needs the ``connect`` extra; see README, "Spark Connect").
    """
    quiet_query_context_logs()
    if remote is not None:
        conf.pop("warehouse", None)         # the server's own
        return _remote_session(remote, {k: str(v) for k, v in conf.items()})
    if "master" in conf:
        conf["spark.master"] = conf.pop("master")
    if "app_name" in conf:
        conf["spark.app.name"] = conf.pop("app_name")
    if conf.get("warehouse") is not None:
        conf[WAREHOUSE_CONF] = absolute_location(str(conf.pop("warehouse")))
    conf.pop("warehouse", None)
    conf = {k: str(v) for k, v in conf.items() if v is not None}
    spark = SparkSession.getActiveSession()
    if spark is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        warehouse, source = choose_warehouse(conf.get(WAREHOUSE_CONF))
        if source == "given":
            warehouse = conf[WAREHOUSE_CONF]      # a setting passed as such means what Spark reads
        elif source == "default":
            warn_about_old_warehouse(warehouse)
        conf[WAREHOUSE_CONF] = warehouse
        builder = SparkSession.builder
        defaults = {**LOCAL_DEFAULTS, **progress_settings(progress)}
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
            if key.startswith("spark.sql.") and key != WAREHOUSE_CONF:   # the rest: the server's
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
    quiet_query_context_logs()
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


def conf_flag(spark: SparkSession, key: str, default: bool = False) -> bool:
    """A boolean setting of the session: ``true`` (any case, spaces around) is true, any other
    value false, ``default`` when unset."""
    value = spark.conf.get(key, None)
    return default if value is None else str(value).strip().lower() == "true"


def conf_bytes(spark: SparkSession, key: str, default: int | None = None) -> int | None:
    """A size setting of the session in bytes; ``default`` when it is not a size, or unset
    (without ``default``, an unset Spark setting has Spark's default)."""
    try:
        return parse_size(spark.conf.get(key) if default is None
                          else spark.conf.get(key, str(default)))
    except (SqlextError, PySparkException):
        return default
