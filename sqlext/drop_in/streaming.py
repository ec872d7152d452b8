"""pyspark's ``DataStreamReader`` and ``DataStreamWriter`` on a session with sqlext installed:
``readStream.format("delta")`` reads a sqlext table as a stream (the Python data source of
:mod:`sqlext.engine.streaming.source`), and ``writeStream.format("delta")`` ``start(path)`` /
``toTable(name)`` (or ``toTable`` on a sqlext table) writes each micro-batch through
:mod:`sqlext.engine.streaming.sink` (a ``foreachBatch`` function: Spark runs the query and keeps
its checkpoint; every commit carries the query id and batch id as its ``txn``).

On Spark Connect the same wrappers wrap Connect's reader and writer: the source is registered
on the server (its reader runs in the server's Python workers), and the sink's ``foreachBatch``
function runs in the server's foreachBatch worker, where it reads the query id from the
checkpoint's ``metadata`` (so a Connect query needs ``checkpointLocation``, or Spark's
``spark.sql.streaming.checkpointLocation`` with a ``queryName``)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

from sqlext import names as table_names
from sqlext.drop_in.state import (FORMAT, MODE, PARTITIONS, installed, is_sqlext_table,
                                  merged_options, record_format, record_option, record_options,
                                  recorded, session_of)
from sqlext.engine.session import is_connect
from sqlext.errors import SchemaMismatchError, SqlextError

#: Spark's setting of a parent folder for the checkpoints of queries with a name
CHECKPOINT_CONF = "spark.sql.streaming.checkpointLocation"


# --- readStream ---------------------------------------------------------------------------

def _stream_of(reader, table: str, options: dict) -> DataFrame:
    """The stream of the sqlext table ``table`` (path or name) through sqlext's source."""
    from sqlext.catalog import Catalog
    from sqlext.engine.streaming.schema_log import session_settings
    from sqlext.engine.streaming.source import (SOURCE_NAME, TIME_ZONE_OPTION, register,
                                                require_admission_control)
    spark = session_of(reader)
    ref = Catalog(spark).resolve(table)
    require_admission_control(spark.version, options, ref.location)
    register(spark)
    options = {k: v for k, v in options.items() if k != "path"}
    # startingTimestamp without an offset is read in the session's time zone, as delta-spark
    options.setdefault(TIME_ZONE_OPTION, spark.conf.get("spark.sql.session.timeZone", "UTC"))
    # the session's allowSourceColumn* settings, for a stream with schemaTrackingLocation
    options.update(session_settings(lambda: spark.conf.getAll, options))
    return type(reader).load.__wrapped__(reader, ref.location, SOURCE_NAME, None, **options)


def _reader_load(original, self, path=None, format=None, schema=None, **options):  # noqa: A002
    fmt = str(format or recorded(self, FORMAT, "")).lower()
    if fmt != "delta" or not installed(session_of(self)):
        return original(self, path, format, schema, **options)
    merged = merged_options(self, options)
    path = path if path is not None else merged.get("path")
    if path is None or not isinstance(path, str):
        raise SqlextError("spark.readStream.format('delta').load() reads one table: give its "
                          "path (load('/path')), or use spark.readStream.table(name)")
    if schema is not None:
        raise SchemaMismatchError(f"a Delta table has its own schema: drop .schema(...) when "
                                  f"reading {path} as a stream (delta-spark refuses it too)")
    return _stream_of(self, path, merged)


def _reader_table(original, self, tableName):
    spark = session_of(self)
    if installed(spark) and (recorded(self, FORMAT) == "delta"
                             or is_sqlext_table(spark, tableName)):
        return _stream_of(self, tableName, merged_options(self, {}))
    return original(self, tableName)


# --- writeStream --------------------------------------------------------------------------

def _writer_output_mode(original, self, outputMode):
    self.__dict__[MODE] = str(outputMode).lower()
    return original(self, outputMode)


def _writer_partition_by(original, self, *cols):
    """Recorded; handed to Spark only when the query is not a Delta one (Spark's
    ``foreachBatch`` sink refuses partitioning)."""
    names = list(cols[0]) if len(cols) == 1 and isinstance(cols[0], (list, tuple)) else list(cols)
    if not installed(session_of(self)):
        return original(self, *cols)
    self.__dict__[PARTITIONS] = names
    return self


def _spark_partitions(self) -> None:
    """Hand a deferred ``partitionBy`` to Spark (the query is not sqlext's)."""
    names = self.__dict__.pop(PARTITIONS, None)
    if names is not None:
        type(self).partitionBy.__wrapped__(self, *names)


def _start_delta(self, original, ref, outputMode, partitionBy, queryName,
                 options: dict):
    from sqlext.engine.streaming.sink import batch_writer, output_mode, sink_arguments
    mode = output_mode(outputMode or recorded(self, MODE))
    partitions = partitionBy if partitionBy is not None else recorded(self, PARTITIONS)
    if isinstance(partitions, str):
        partitions = [partitions]
    self.__dict__.pop(PARTITIONS, None)
    arguments = sink_arguments(options, mode == "Complete")
    spark = session_of(self)
    checkpoint = _connect_checkpoint(self, spark, options, queryName) if is_connect(spark) \
        else None
    self.foreachBatch(batch_writer(ref, mode, partitions, arguments, checkpoint,
                                   table_names.write))
    # Spark checks the output mode against the query (e.g. complete needs an aggregation)
    return original(self, None, None, mode.lower(), None, queryName)


def _checkpoint_of(spark, options: dict, name) -> str | None:
    """A query's checkpoint location, as Spark derives it: the ``checkpointLocation`` option,
    else ``<spark.sql.streaming.checkpointLocation>/<queryName>``; None when neither is given."""
    given = options.get("checkpointlocation")
    if given:
        return str(given)
    parent = spark.conf.get(CHECKPOINT_CONF, None)
    return parent.rstrip("/") + "/" + name if parent and name else None


def _check_schema_locations(writer, options: dict, query_name) -> None:
    """delta-spark's check, when a query starts, that each sqlext Delta source's
    ``schemaTrackingLocation`` is under the query's checkpoint (a classic session: the sources'
    options are read from the query's plan in the JVM; unchecked without a known checkpoint)."""
    from sqlext.engine.streaming.schema_log import (ALLOW_OUTSIDE, check_under_checkpoint,
                                                    tracking_location)
    from sqlext.engine.streaming.source import SOURCE_NAME
    spark = session_of(writer)
    if is_connect(spark):
        return
    checkpoint = _checkpoint_of(spark, options, query_name)
    if checkpoint is None or str(spark.conf.get(ALLOW_OUTSIDE, "false")).lower() == "true":
        return
    leaves = writer._df._jdf.queryExecution().analyzed().collectLeaves().iterator()
    while leaves.hasNext():
        leaf = leaves.next()
        if leaf.getClass().getSimpleName() == "StreamingRelationV2" \
                and leaf.sourceName() == SOURCE_NAME:
            opts = {str(k).lower(): v
                    for k, v in dict(leaf.extraOptions().asCaseSensitiveMap()).items()}
            location = tracking_location(opts)
            if location is not None:
                check_under_checkpoint(location, checkpoint, str(opts.get("path")))


def _connect_checkpoint(writer, spark, options: dict, query_name) -> str:
    """A Connect query's checkpoint location (:func:`_checkpoint_of`), which it needs."""
    found = _checkpoint_of(spark, options, query_name or writer._write_proto.query_name)
    if found is not None:
        return found
    raise SqlextError("a Delta stream sink on Spark Connect needs its checkpoint's location: "
                      ".option('checkpointLocation', '/path') (or a queryName with "
                      f"{CHECKPOINT_CONF} set); its commits carry the query id kept there")


def _writer_start(original, self, path=None, format=None, outputMode=None,  # noqa: A002
                  partitionBy=None, queryName=None, **options):
    fmt = str(format or recorded(self, FORMAT, "")).lower()
    if installed(session_of(self)):
        _check_schema_locations(self, merged_options(self, options), queryName)
    if fmt != "delta" or not installed(session_of(self)):
        _spark_partitions(self)
        return original(self, path, format, outputMode, partitionBy, queryName, **options)
    from sqlext.catalog import Catalog
    merged = merged_options(self, options)
    path = path if path is not None else merged.get("path")
    if path is None:
        raise SqlextError("df.writeStream.format('delta').start() needs the table's path: "
                          "start('/path'), or toTable(name) for a named table")
    ref = Catalog(session_of(self)).resolve(path)
    return _start_delta(self, original, ref, outputMode, partitionBy, queryName, merged)


def _writer_to_table(original, self, tableName, format=None, outputMode=None,  # noqa: A002
                     partitionBy=None, queryName=None, **options):
    fmt = str(format or recorded(self, FORMAT, "")).lower()
    spark = session_of(self)
    if installed(spark):
        _check_schema_locations(self, merged_options(self, options), queryName)
    if not installed(spark) or not (fmt == "delta" or is_sqlext_table(spark, tableName)):
        _spark_partitions(self)
        return original(self, tableName, format, outputMode, partitionBy, queryName, **options)
    from sqlext.catalog import Catalog
    ref = Catalog(spark).resolve(tableName)
    start = type(self).start.__wrapped__
    return _start_delta(self, lambda w, *a: start(w, *a), ref, outputMode,
                        partitionBy, queryName, merged_options(self, options))


def _writer_foreach_batch(original, self, func):
    """On an installed Spark Connect session, the function releases its batch DataFrame
    when it returns (:class:`sqlext.engine.streaming.sink.ReleasingBatchFunction`)."""
    spark = session_of(self)
    if installed(spark) and is_connect(spark):
        from sqlext.engine.streaming.sink import ReleasingBatchFunction
        func = ReleasingBatchFunction(func)
    return original(self, func)


_RECORDERS = {"format": record_format, "option": record_option, "options": record_options}
WRAPPERS = {
    DataStreamReader: {**_RECORDERS, "load": _reader_load, "table": _reader_table},
    DataStreamWriter: {**_RECORDERS, "outputMode": _writer_output_mode,
                       "partitionBy": _writer_partition_by, "start": _writer_start,
                       "foreachBatch": _writer_foreach_batch,
                       "toTable": _writer_to_table},
}
