"""``sqlext-thriftserver``: Spark's Thrift JDBC/ODBC server (HiveServer2 protocol: beeline, BI
tools, any Hive JDBC driver) with sqlext's tables in its catalog.

The server runs one SparkSession (``spark.sql.hive.thriftServer.singleSession``: every
connection shares it, and with it the registrations of sqlext's Python data sources,
:mod:`sqlext.thrift.source`). :class:`CatalogMirror` puts one entry per table of sqlext's catalog
(``<warehouse>/_sqlext_catalog``) into that session's catalog, an EXTERNAL table ``USING
sqlext_delta_<digest>`` (the table's own data source) at the table's location with its current
columns, and keeps the entries in step
with sqlext's catalog every ``--refresh`` seconds (new and dropped tables and schemas, changed
columns). The entries hold no file list: each query reads the table's current snapshot.

Spark's catalog is the in-memory one unless ``--conf spark.sql.catalogImplementation=hive`` is
given: the entries live as long as the server and are made again at the next start. The server
session's own ``spark.sql.warehouse.dir`` is a private temporary directory, not the warehouse
served (see :func:`main`); the warehouse served follows sqlext's one rule
(:func:`sqlext.engine.session.choose_warehouse`). The server listens on 127.0.0.1 unless told
otherwise (``--host``): like Spark's, it has no authentication of its own.

Writes over JDBC are refused: an entry's data source is named after the table as clients know
it (:func:`sqlext.thrift.source.source_name`), which is the name Spark's DELETE and TRUNCATE
errors give, and its writer refuses INSERT naming the table; both say to change it with sqlext.
So do UPDATE and MERGE, whose error Spark words from its resources (:mod:`sqlext.thrift.messages`).
A client sees each error as one line, without the Java stack Spark's server would add to it
(:mod:`sqlext.thrift.one_line`); the server's log keeps the stack.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

from sqlext.errors import SqlextError
from sqlext.thrift.messages import with_messages
from sqlext.thrift.one_line import OneLineErrors

DEFAULT_PORT = 10000
DEFAULT_HOST = "127.0.0.1"
HOST_CONF = "spark.hive.server2.thrift.bind.host"
PORT_CONF = "spark.hive.server2.thrift.port"
#: Hive's environment variables, which would win over the settings in the server's JVM
HOST_ENV, PORT_ENV = "HIVE_SERVER2_THRIFT_BIND_HOST", "HIVE_SERVER2_THRIFT_PORT"
#: Python errors over JDBC (the data source's) as one line, without the Python traceback
HIDE_TRACEBACK_CONF = "spark.sql.execution.pyspark.udf.hideTraceback.enabled"
DEFAULT_REFRESH_SECONDS = 10.0
SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from sqlext.engine.session import WAREHOUSE_RULE

    parser = argparse.ArgumentParser(
        prog="sqlext-thriftserver",
        description="Spark's Thrift JDBC/ODBC server with sqlext's tables in its catalog "
                    "(reading only)", epilog=WAREHOUSE_RULE)
    parser.add_argument("--port", type=int, default=None,
                        help=f"TCP port (default {DEFAULT_PORT}; or --conf {PORT_CONF}, "
                             f"${PORT_ENV})")
    parser.add_argument("--host", default=None,
                        help=f"address to listen on (default {DEFAULT_HOST}: this machine "
                             f"only; 0.0.0.0 for every interface; or --conf {HOST_CONF}, "
                             f"${HOST_ENV}). There is no authentication: expose it to trusted "
                             "networks only")
    parser.add_argument("--warehouse", metavar="DIR",
                        help="the warehouse whose sqlext tables to serve (see below)")
    parser.add_argument("--refresh", type=float, default=DEFAULT_REFRESH_SECONDS,
                        metavar="SECONDS", help="how often the catalog entries are brought in "
                        f"step with sqlext's catalog (default {DEFAULT_REFRESH_SECONDS:g})")
    parser.add_argument("--master", help="Spark master URL (default local[2])")
    parser.add_argument("--conf", action="append", default=[], metavar="K=V",
                        help="a Spark setting (repeatable)")
    return parser.parse_args(argv)


def server_settings(args: argparse.Namespace, environ=None) -> dict[str, str]:
    """The Spark settings of the server's session from the command line (and ``environ``,
    default ``os.environ``): the warehouse served (``spark.sql.warehouse.dir``, sqlext's rule),
    the address (default 127.0.0.1) and port."""
    from sqlext.engine.session import WAREHOUSE_CONF, absolute_location, choose_warehouse
    from sqlext.sql.shell import conf_arguments

    environ = os.environ if environ is None else environ
    conf = conf_arguments(args, "sqlext-thriftserver")
    given = absolute_location(args.warehouse) if args.warehouse else conf.get(WAREHOUSE_CONF)
    conf[WAREHOUSE_CONF] = choose_warehouse(given, environ)[0]
    # flag, then setting (Spark's name, or Hive's), then Hive's environment variable, then ours
    conf[HOST_CONF] = (args.host or conf.get(HOST_CONF) or conf.get(HOST_CONF[len("spark."):])
                       or environ.get(HOST_ENV) or DEFAULT_HOST)
    conf[PORT_CONF] = str(args.port if args.port is not None else
                          conf.get(PORT_CONF) or conf.get(PORT_CONF[len("spark."):])
                          or environ.get(PORT_ENV) or DEFAULT_PORT)
    conf.setdefault(HIDE_TRACEBACK_CONF, "true")
    conf.setdefault("spark.app.name", "sqlext-thriftserver")
    # Hive's embedded Derby (the server's execution client) writes derby.log into the working
    # directory unless told otherwise
    conf.setdefault("spark.driver.extraJavaOptions", "-Dderby.stream.error.file="
                    + os.path.join(tempfile.gettempdir(), "sqlext-thriftserver-derby.log"))
    # every connection shares the session holding the data source and the entries
    conf["spark.sql.hive.thriftServer.singleSession"] = "true"
    return conf


class CatalogMirror:
    """Spark's catalog entries for sqlext's tables on one SparkSession: :meth:`sync` makes,
    replaces and drops them to match sqlext's catalog. Only entries (and schemas) it made
    itself are ever replaced or dropped; an entry is an EXTERNAL table, so dropping it (here
    or over JDBC) never touches the table's files."""

    def __init__(self, spark, warehouse: str | None = None, log=None):
        from sqlext.catalog.registry import Catalog
        from sqlext.thrift.source import PUSHDOWN_CONF, DeltaTableSource

        self.spark = spark
        self.catalog = Catalog(spark, warehouse)
        self.log = log or (lambda message: print(message, file=sys.stderr, flush=True))
        spark.dataSource.register(DeltaTableSource)
        spark.conf.set(PUSHDOWN_CONF, "true")     # the entries' readers prune files by filters
        self.sources: dict[str, str] = {}   # data source name -> the location it reads
        self.entries: dict[tuple[str, str], tuple] = {}   # (schema, table) -> what it was made of
        self.schemas: set[str] = set()
        # the last problem logged per ("read" or "entry", schema, table)
        self.problems: dict[tuple[str, str, str], str] = {}

    def wanted(self) -> dict[tuple[str, str], tuple]:
        """sqlext's tables now: (schema, table) -> (location, columns as JSON, description)."""
        from sqlext.log.table import DeltaLog
        from sqlext.thrift.source import logical_schema

        found = {}
        for schema in self.catalog.list_schemas():
            for name in self.catalog.list_tables(schema):
                ref = self.catalog.lookup(schema, name)
                if ref is None:
                    continue
                try:
                    metadata = DeltaLog(ref.location).snapshot().metadata
                except Exception as exc:  # noqa: BLE001 - one unreadable table must not stop the rest
                    self._once(("read", schema, name), f"`{schema}`.`{name}` left out: {exc}")
                    continue
                self.problems.pop(("read", schema, name), None)
                found[(schema, name)] = (ref.location,
                                         logical_schema(metadata.schema_string).json(),
                                         metadata.description)
        return found

    def sync(self) -> tuple[int, int]:
        """Bring the entries in step with sqlext's catalog; returns (made, dropped)."""
        from sqlext.catalog.registry import DEFAULT_SCHEMA, spark_name

        wanted = self.wanted()
        for key in self._gone():
            del self.entries[key]           # dropped over JDBC: made again below
        made = dropped = 0
        for key in sorted(set(self.entries) - set(wanted)):
            self._drop(key)
            dropped += 1
        for key, entry in sorted(wanted.items()):
            if self.entries.get(key) == entry:
                continue
            schema, name = key
            if schema != DEFAULT_SCHEMA and schema not in self.schemas:
                self.spark.sql(f"CREATE DATABASE IF NOT EXISTS {spark_name(schema)}")
                self.schemas.add(schema)
            if key in self.entries:
                self._drop(key)
            try:
                self._create(key, entry)
            except Exception as exc:  # noqa: BLE001 - e.g. a Spark table or view of that name
                self._once(("entry", *key), f"no entry for `{schema}`.`{name}`: "
                                f"{str(exc).splitlines()[0][:300]}")
                continue
            self.problems.pop(("entry", *key), None)
            self.entries[key] = entry
            made += 1
        in_use = {schema for schema, _ in self.entries}
        for schema in sorted(self.schemas - in_use - {s for s, _ in wanted}):
            try:
                self.spark.sql(f"DROP DATABASE IF EXISTS {spark_name(schema)}")
            except Exception:  # noqa: BLE001 - it holds other Spark objects: it stays
                continue
            self.schemas.discard(schema)
        return made, dropped

    def _once(self, key: tuple[str, str, str], message: str) -> None:
        """Log a table's problem when it is new (not again at every refresh)."""
        if self.problems.get(key) != message:
            self.problems[key] = message
            self.log(f"sqlext-thriftserver: {message}")

    def _gone(self) -> list[tuple[str, str]]:
        """The entries made here that Spark's catalog no longer has (dropped over JDBC, or
        their schema was); their schemas are made again with them."""
        from sqlext.catalog.registry import spark_name

        exists = self.spark.catalog.tableExists
        gone = [key for key in self.entries if not exists(spark_name(*key))]
        self.schemas.difference_update(schema for schema, _ in gone)
        return gone

    def _create(self, key: tuple[str, str], entry: tuple) -> None:
        import json

        from pyspark.sql import types as T

        from sqlext.catalog.registry import spark_name
        from sqlext.thrift.source import source_for, source_name

        location, columns, description = entry
        name = spark_name(*key)
        source = source_name(location, name)
        if self.sources.get(source) != location:
            self.spark.dataSource.register(source_for(location, name))
            self.sources[source] = location
        self.spark.catalog.createTable(name, path=location, source=source,
                                       schema=T.StructType.fromJson(json.loads(columns)),
                                       description=description)

    def _drop(self, key: tuple[str, str]) -> None:
        from sqlext.catalog.registry import spark_name
        self.spark.sql(f"DROP TABLE IF EXISTS {spark_name(*key)}")
        self.entries.pop(key, None)


def start_server(spark):
    """Start Spark's Thrift server on ``spark`` (its port and address from the session's
    ``spark.hive.server2.thrift.*`` settings); returns the JVM's server object."""
    jvm = spark.sparkContext._jvm
    server_class = getattr(jvm, SERVER_CLASS)
    return server_class.startWithContext(spark._jsparkSession.sqlContext())


def main(argv: list[str] | None = None) -> int:
    """The ``sqlext-thriftserver`` console script: serve until SIGTERM or Ctrl-C."""
    args = parse_args(argv)
    if args.refresh <= 0:
        raise SystemExit("sqlext-thriftserver: --refresh must be a positive number of seconds")
    conf = server_settings(args)
    for name in (HOST_ENV, PORT_ENV):   # decided above; Hive's would win in the JVM
        os.environ.pop(name, None)
    from sqlext.engine.session import session
    from sqlext.log.storage import normalize_location

    # sqlext's warehouse is served, never managed by the server's Spark catalog: Spark's own
    # databases and tables (CREATE DATABASE for a schema, a CTAS over JDBC) live in a private
    # directory, removed at exit, so that no DROP DATABASE (whose in-memory catalog deletes the
    # database's directory, even for a schema of EXTERNAL entries) reaches sqlext's files
    warehouse = normalize_location(conf["spark.sql.warehouse.dir"])
    private = tempfile.mkdtemp(prefix="sqlext-thriftserver-")
    conf["spark.sql.warehouse.dir"] = private
    # UPDATE and MERGE over JDBC answer to change the table with sqlext (a resource of the JVM)
    messages = tempfile.mkdtemp(prefix="sqlext-thriftserver-messages-")
    conf = with_messages(conf, messages)
    spark = session(progress=False, **conf)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = None
    try:
        mirror = CatalogMirror(spark, warehouse)
        made, _ = mirror.sync()
        one_line = OneLineErrors(spark)
        server = start_server(spark)
        unchanged = one_line.install(server)
        if unchanged:
            print(f"sqlext-thriftserver: errors over JDBC keep Spark's Java stack ({unchanged})",
                  file=sys.stderr, flush=True)
        print(f"sqlext-thriftserver: listening on {conf[HOST_CONF]}:{conf[PORT_CONF]} "
              f"(jdbc:hive2://), {made} sqlext tables of {mirror.catalog.warehouse}; catalog "
              f"refreshed every {args.refresh:g}s", flush=True)
        while not stop.wait(args.refresh):
            try:
                started = time.monotonic()
                made, dropped = mirror.sync()
                if made or dropped:
                    print(f"sqlext-thriftserver: {made} entries made, {dropped} dropped "
                          f"({time.monotonic() - started:.1f}s)", flush=True)
            except SqlextError as exc:
                print(f"sqlext-thriftserver: catalog refresh failed: {exc}", file=sys.stderr,
                      flush=True)
    finally:
        if server is not None:
            server.stop()
        spark.stop()
        shutil.rmtree(private, ignore_errors=True)
        shutil.rmtree(messages, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
