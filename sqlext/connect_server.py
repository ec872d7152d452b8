"""``sqlext-connect-server``: Spark's Connect server (``sc://host:15002``) on a local Spark with
sqlext's settings, for ``sqlext.session(remote=...)``, ``sqlext-sql --remote`` and any Spark
Connect client.

The server is pyspark's own (``org.apache.spark.sql.connect.SparkConnectPlugin``, started with
the Spark application) on a session from :func:`sqlext.session`: the same defaults as every new
sqlext session (UTC session time zone, microsecond parquet timestamps, no ``_SUCCESS`` files)
and the same warehouse rule (:func:`sqlext.engine.session.choose_warehouse`), so a Connect
client's sqlext tables are the ones the shell and the Python API see. It listens on 127.0.0.1
unless told otherwise (``--host``): like Spark's own, the server runs whatever a client sends with
its file permissions, and has no authentication here (pyspark's clients send a token only over
TLS), so another address should be on a trusted network only. Clients and server must reach the
tables at the same paths (see README, "Spark Connect").
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 15002
PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"
HOST_CONF = "spark.connect.grpc.binding.address"
PORT_CONF = "spark.connect.grpc.binding.port"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from sqlext.engine.session import WAREHOUSE_RULE

    parser = argparse.ArgumentParser(
        prog="sqlext-connect-server",
        description="Spark's Connect server on a local Spark with sqlext's settings",
        epilog=WAREHOUSE_RULE)
    parser.add_argument("--host", default=None,
                        help=f"address to listen on (default {DEFAULT_HOST}: this machine only; "
                             "0.0.0.0 for every interface). There is no authentication: expose "
                             "it to trusted networks only")
    parser.add_argument("--port", type=int, default=None,
                        help=f"TCP port (default {DEFAULT_PORT}; or --conf {PORT_CONF})")
    parser.add_argument("--warehouse", metavar="DIR", help="where tables are kept (see below)")
    parser.add_argument("--master", help="Spark master URL (default local[2])")
    parser.add_argument("--conf", action="append", default=[], metavar="K=V",
                        help="a Spark setting (repeatable)")
    return parser.parse_args(argv)


def server_settings(args: argparse.Namespace, environ=None) -> dict[str, str]:
    """The Spark settings of the server's application from the command line (and ``environ``):
    the Connect plugin, its address (default 127.0.0.1) and port, the warehouse."""
    from sqlext.engine.session import WAREHOUSE_CONF, absolute_location, choose_warehouse
    from sqlext.sql.shell import conf_arguments

    conf = conf_arguments(args, "sqlext-connect-server")
    given = absolute_location(args.warehouse) if args.warehouse else conf.get(WAREHOUSE_CONF)
    conf[WAREHOUSE_CONF] = choose_warehouse(given, environ)[0]
    conf[HOST_CONF] = args.host or conf.get(HOST_CONF) or DEFAULT_HOST
    conf[PORT_CONF] = str(args.port if args.port is not None
                          else conf.get(PORT_CONF) or DEFAULT_PORT)
    plugins = [p for p in conf.get("spark.plugins", "").split(",") if p.strip()]
    conf["spark.plugins"] = ",".join(plugins + ([PLUGIN] if PLUGIN not in plugins else []))
    conf.setdefault("spark.app.name", "sqlext-connect-server")
    return conf


def main(argv: list[str] | None = None) -> int:
    """The ``sqlext-connect-server`` console script: serve until SIGTERM or Ctrl-C."""
    conf = server_settings(parse_args(argv))
    import sqlext

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    spark = sqlext.session(progress=False, **conf)
    try:
        host, port = conf[HOST_CONF], conf[PORT_CONF]
        print(f"sqlext-connect-server: listening on {host}:{port} (sc://{host}:{port}); tables "
              f"in {spark.conf.get('spark.sql.warehouse.dir')}", flush=True)
        while not stop.wait(3600):
            pass
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
