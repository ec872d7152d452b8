"""Connections of ``type: sqlext``: an in-process SparkSession (``method: session``) or a Spark
Connect server's (``method: connect``), every statement through ``sqlext.sql``.

Each dbt connection gets its own SQL session (``SparkSession.newSession()`` of the active session,
of one ``sqlext.session()`` starts, or of the Connect server's default session), as the Spark
Thrift Server gives each JDBC connection: settings a model changes (``SET ...``) and its
temporary views stay within the connection, and never leak into the caller's session. A Connect
connection's server session is released when dbt closes the connection.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import uuid
from contextlib import contextmanager
from typing import Any, Iterator, List, Optional, Sequence, Tuple

from dbt.adapters.contracts.connection import AdapterResponse, Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.exceptions import FailedToConnectError
from dbt.adapters.spark.connections import SparkConnectionManager, SparkConnectionWrapper
from dbt_common.events.contextvars import get_node_info
from dbt_common.exceptions import DbtRuntimeError
from pyspark import SparkContext
from pyspark.sql import DataFrame, Row, SparkSession
from sqlext.errors import ParseError

from dbt.adapters.sqlext.bindings import render
from dbt.adapters.sqlext.credentials import SqlextCredentials

logger = AdapterLogger("sqlext")

#: Spark settings that only take effect when the Spark application starts.
_STATIC_PREFIXES = ("spark.master", "spark.app.name", "spark.driver.", "spark.executor.",
                    "spark.jars", "spark.hadoop.", "spark.sql.warehouse.dir",
                    "spark.sql.extensions", "spark.sql.catalogImplementation")


def commit_user_metadata() -> str:
    """userMetadata for the commits of the statement about to run: the dbt invocation id and,
    while dbt runs a node, the node's unique id."""
    from dbt_common.invocation import get_invocation_id

    info = {"dbt_invocation_id": get_invocation_id()}
    unique_id = (get_node_info() or {}).get("unique_id")
    if unique_id:
        info["dbt_unique_id"] = unique_id
    return json.dumps(info, sort_keys=True)


def connect(credentials: SqlextCredentials) -> SparkSession:
    """The connection's SQL session (see the module docstring)."""
    from sqlext.engine.session import prepare

    conf = dict(credentials.server_side_parameters or {})
    if credentials.warehouse:
        conf.setdefault("spark.sql.warehouse.dir",
                        os.path.abspath(os.path.expanduser(credentials.warehouse)))
    root = remote_root(credentials, conf) if credentials.is_connect else local_root(conf)
    spark = root.newSession()
    for key, value in conf.items():
        if not key.startswith(_STATIC_PREFIXES):
            spark.conf.set(key, value)
    prepare(spark)
    return spark


def remote_root(credentials: SqlextCredentials, conf: dict) -> SparkSession:
    """The default session of the profile's Spark Connect server; static settings and the
    profile's warehouse are the server's own, so they are reported and left out."""
    import sqlext

    root = sqlext.session(remote=credentials.connect_url)
    ignored = sorted(key for key in conf if key.startswith(_STATIC_PREFIXES))
    if ignored:
        logger.warning(f"sqlext: method connect: {', '.join(ignored)} of the profile apply only "
                       f"to a Spark the adapter starts; the server at "
                       f"{credentials.host}:{credentials.port} keeps its own")
    return root


def local_root(conf: dict) -> SparkSession:
    """The process's Spark application: the running one, or one started now."""
    import sqlext

    root = SparkSession.getActiveSession()
    if root is None and SparkContext._active_spark_context is not None:
        # the application's session, seen from a dbt worker thread; no settings are applied to it
        root = SparkSession.builder.getOrCreate()
    if root is None:
        # the JVM's start takes 10-30 s: say so (a Connect server is started once, not per run)
        logger.info("sqlext: starting Spark in the dbt process (method: session; `method: "
                    "connect` uses a running sqlext-connect-server instead)")
        root = sqlext.session(**conf)
    else:
        wanted = conf.get("spark.sql.warehouse.dir")
        actual = root.conf.get("spark.sql.warehouse.dir")
        if wanted and wanted.rstrip("/") != actual.rstrip("/").removeprefix("file:"):
            logger.warning(f"sqlext: the running Spark session's warehouse is {actual}; the "
                           f"profile's warehouse {wanted} applies only to a new Spark process")
    return root


class SqlextCursor:
    """A DB-API style cursor over one statement's DataFrame."""

    def __init__(self, spark: SparkSession, tag: str):
        self.spark = spark
        self.tag = tag
        self._df: Optional[DataFrame] = None
        self._rows: Optional[List[Row]] = None

    def execute(self, sql: str, bindings: Optional[Sequence[Any]] = None) -> None:
        """Run ``sql`` (one or more statements) through ``sqlext.sql``; bindings become literals."""
        import sqlext
        from sqlext.engine.commit import commit_metadata_scope

        text = render(sql, bindings)
        self._df, self._rows = None, None
        self.spark.addTag(self.tag)
        try:
            with commit_metadata_scope(commit_user_metadata()):
                self._df = sqlext.sql(self.spark, text)
        finally:
            self.spark.removeTag(self.tag)

    @property
    def description(self) -> List[Tuple[str, str, None, None, None, None, bool]]:
        if self._df is None:
            return []
        return [(f.name, f.dataType.simpleString(), None, None, None, None, f.nullable)
                for f in self._df.schema.fields]

    def fetchall(self) -> List[Row]:
        if self._rows is None:
            self._rows = self._df.collect() if self._df is not None else []
        return self._rows

    def fetchmany(self, size: int) -> List[Row]:
        if self._rows is None and self._df is not None:
            return self._df.take(size)
        return self.fetchall()[:size]

    def fetchone(self) -> Optional[Row]:
        rows = self.fetchmany(1)
        return rows[0] if rows else None

    def close(self) -> None:
        self._df, self._rows = None, None


class SqlextConnectionWrapper(SparkConnectionWrapper):
    """dbt's connection handle: hands out cursors on the connection's SQL session."""

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self.tag = f"dbt-sqlext-{uuid.uuid4().hex[:12]}"
        self._cursor: Optional[SqlextCursor] = None

    def cursor(self) -> SqlextCursor:  # type: ignore[override]
        self._cursor = SqlextCursor(self.spark, self.tag)
        return self._cursor

    def execute(self, sql: str, bindings: Optional[List[Any]] = None) -> None:
        self.cursor().execute(sql, bindings)

    def fetchall(self) -> Optional[List]:
        return self._cursor.fetchall() if self._cursor else None

    @property
    def description(self):
        return self._cursor.description if self._cursor else []

    def cancel(self) -> None:
        """Cancel the Spark jobs of the statement this connection is running."""
        try:
            self.spark.interruptTag(self.tag)
        except Exception as exc:  # noqa: BLE001 - a stopped session has nothing to cancel
            logger.debug(f"sqlext: cancel failed: {exc}")

    def close(self) -> None:
        from sqlext.engine.session import is_connect

        if self._cursor:
            self._cursor.close()
        if is_connect(self.spark):
            # stop() releases the server session before it waits for the client's pending
            # ReleaseExecute calls, which then fail on the server (an error logged per call)
            concurrent.futures.wait(list(getattr(self.spark.client, "_release_futures", ())),
                                    timeout=10)
            self.spark.stop()   # releases this connection's session on the server

    def rollback(self, *args: Any, **kwargs: Any) -> None:
        logger.debug("NotImplemented: rollback")


def failure_message(error: BaseException) -> str:
    """What dbt reports for a failed statement: the error's message; for a syntax error in
    sqlext's parser's wording (``Expecting ) at line ...``, which does not say what failed),
    ``Syntax error: `` and that message. Spark's wording names its condition first
    (``[PARSE_SYNTAX_ERROR] Syntax error at or near ...``: pyspark's ``getMessage()`` is the
    message itself) and is reported as it is."""
    if isinstance(error, ParseError) and error.getMessage() != str(error):
        return f"Syntax error: {error}"
    return str(error)


class SqlextConnectionManager(SparkConnectionManager):
    TYPE = "sqlext"

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        """dbt-spark's: a failed statement raises dbt's ``DbtRuntimeError`` with the error's
        message (:func:`failure_message`), raised from the error itself, so that callers decide
        on its class and fields (see ``impl.is_missing_relation``), not on its words."""
        try:
            yield
        except Exception as exc:
            logger.debug(f"Error while running:\n{sql}")
            logger.debug(exc)
            if not exc.args:
                raise
            raise DbtRuntimeError(failure_message(exc)) from exc

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        try:
            handle = SqlextConnectionWrapper(connect(connection.credentials))
        except Exception as exc:  # noqa: BLE001 - any failure to start Spark
            raise FailedToConnectError(f"sqlext: cannot start Spark: {type(exc).__name__}: "
                                       f"{exc}") from exc
        connection.handle = handle
        connection.state = ConnectionState.OPEN  # type: ignore[assignment]
        return connection

    @classmethod
    def get_response(cls, cursor: Any) -> AdapterResponse:
        return AdapterResponse(_message="OK")

    @classmethod
    def data_type_code_to_name(cls, type_code: Any) -> str:
        return type_code if isinstance(type_code, str) else type_code.__name__.upper()

