"""``sqlext.install(spark)``: the delta-spark idioms a user already has, on sqlext.

After ``install``, on that session:

- ``spark.read.format("delta").load(path)`` (options ``versionAsOf``, ``timestampAsOf``,
  ``readChangeFeed`` with ``startingVersion``/``endingVersion``/``startingTimestamp``/
  ``endingTimestamp``) reads through :func:`sqlext.read` / :func:`sqlext.changes`: the same
  native parquet scan with partition and statistics pruning, no rows through Python;
- ``df.write.format("delta")...save(path)`` / ``.saveAsTable(name)`` and ``insertInto(name)`` on
  a sqlext table commit through :func:`sqlext.write`, and so do ``df.writeTo(name)``'s
  ``create``, ``replace``, ``createOrReplace``, ``append``, ``overwrite(condition)`` and
  ``overwritePartitions`` (with ``.using("delta")``, or on a sqlext table)
  (:mod:`~sqlext.drop_in.readwriter`, :mod:`~sqlext.drop_in.writer_v2`);
- ``spark.sql(text)`` runs through :func:`sqlext.sql` (DELETE, UPDATE, MERGE, time travel, change
  feeds on sqlext tables; other statements reach Spark as written), and ``spark.table(name)`` and
  ``spark.read.table(name)`` read a sqlext table's current snapshot;
- ``spark.catalog`` lists sqlext's tables with Spark's (:mod:`~sqlext.drop_in.catalog`);
- ``spark.readStream.format("delta")`` and ``df.writeStream.format("delta")`` stream from and to
  sqlext tables (:mod:`~sqlext.drop_in.streaming`; classic and Spark Connect sessions).

Sessions without ``install`` are untouched: pyspark's classes are wrapped once, and the wrappers
hand every call on another session, or in another format, to pyspark as is.
"""

from __future__ import annotations

import functools

from pyspark.sql import DataFrame, SparkSession

from sqlext.drop_in import catalog, readwriter, streaming, writer_v2
from sqlext.drop_in.state import INSTALLED, installed, is_sqlext_table, wrap_methods
from sqlext.engine.session import is_connect, native_sql, quiet_query_context_logs
from sqlext.errors import ParseError

__all__ = ["install", "installed", "uninstall"]


def install(spark: SparkSession) -> SparkSession:
    """Make delta-spark's idioms work on ``spark`` (see the module docstring); returns it.

    Idempotent. ``spark.sql`` and ``spark.table`` are replaced on this session object only.
    Errors of the calls sqlext runs are raised without pyspark's query context log
    (:func:`sqlext.engine.session.quiet_query_context_logs`).
    """
    quiet_query_context_logs()
    connect = _connect_classes() if is_connect(spark) else {}
    for module in (readwriter, writer_v2, catalog, streaming):
        for cls, wrappers in module.WRAPPERS.items():
            wrap_methods(cls, wrappers)
            if cls.__name__ in connect:     # Spark Connect's own classes, same methods
                wrap_methods(connect[cls.__name__],
                             {k: v for k, v in wrappers.items() if k != "__init__"})
    if not installed(spark):
        setattr(spark, INSTALLED, True)
        spark.sql = functools.partial(_routed_sql, spark)
        spark.table = functools.partial(_routed_table, spark)
    return spark


def _connect_classes() -> dict:
    """Spark Connect's reader, writer, stream reader/writer and catalog classes by name (a
    Connect writer keeps its table name itself, so its ``__init__`` is not wrapped)."""
    from pyspark.sql.connect.catalog import Catalog
    from pyspark.sql.connect.readwriter import (DataFrameReader, DataFrameWriter,
                                                DataFrameWriterV2)
    from pyspark.sql.connect.streaming.readwriter import DataStreamReader, DataStreamWriter
    return {c.__name__: c for c in (Catalog, DataFrameReader, DataFrameWriter, DataFrameWriterV2,
                                    DataStreamReader, DataStreamWriter)}


def uninstall(spark: SparkSession) -> None:
    """Undo :func:`install` on ``spark``: its ``sql``, ``table``, readers, writers and catalog
    are pyspark's again (the class wrappers stay, and pass every call through)."""
    for attribute in ("sql", "table", INSTALLED):
        spark.__dict__.pop(attribute, None)


def _routed_sql(spark: SparkSession, sqlQuery: str, args=None, **kwargs) -> DataFrame:
    from sqlext.sql.runner import run_sql
    if args or kwargs:      # parameter markers: sqlext does not bind them; Spark does
        return native_sql(spark, sqlQuery, args, **kwargs)
    try:
        return run_sql(spark, sqlQuery)
    except ParseError:
        # text sqlext's parser cannot read cannot name a sqlext statement: Spark decides
        return native_sql(spark, sqlQuery)


def _routed_table(spark: SparkSession, tableName: str) -> DataFrame:
    if is_sqlext_table(spark, tableName):
        from sqlext.api import read
        return read(spark, tableName)
    return type(spark).table(spark, tableName)
