"""pyspark's ``DataStreamReader`` and ``DataStreamWriter`` on a session with sqlext installed:
``readStream.format("delta")`` reads a sqlext table as a stream (the Python data source of
:mod:`sqlext.engine.streaming.source`), and ``writeStream.format("delta")`` ``start(path)`` /
``toTable(name)`` (or ``toTable`` on a sqlext table) writes each micro-batch through
:mod:`sqlext.engine.streaming.sink` (a ``foreachBatch`` function: Spark runs the query and keeps
its checkpoint; every commit carries the query id and batch id as its ``txn``).

Classic sessions only: Spark Connect's stream reader and writer are not wrapped."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

from sqlext.drop_in.state import (FORMAT, MODE, PARTITIONS, installed, is_sqlext_table,
                                  merged_options, record_format, record_option, record_options,
                                  recorded, session_of)
from sqlext.errors import SchemaMismatchError, SqlextError


# --- readStream ---------------------------------------------------------------------------

def _stream_of(reader, table: str, options: dict) -> DataFrame:
    """The stream of the sqlext table ``table`` (path or name) through sqlext's source."""
    from sqlext.catalog import Catalog
    from sqlext.engine.streaming.source import SOURCE_NAME, register
    spark = session_of(reader)
    ref = Catalog(spark).resolve(table)
    register(spark)
    options = {k: v for k, v in options.items() if k != "path"}
    return DataStreamReader.load.__wrapped__(reader, ref.location, SOURCE_NAME, None, **options)


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
    if not installed(self._spark):
        return original(self, *cols)
    self.__dict__[PARTITIONS] = names
    return self


def _spark_partitions(self) -> None:
    """Hand a deferred ``partitionBy`` to Spark (the query is not sqlext's)."""
    names = self.__dict__.pop(PARTITIONS, None)
    if names is not None:
        DataStreamWriter.partitionBy.__wrapped__(self, *names)


def _start_delta(self, original, table: str, ref, outputMode, partitionBy, queryName,
                 options: dict):
    from sqlext.engine.streaming.sink import batch_writer, output_mode, sink_arguments
    mode = output_mode(outputMode or recorded(self, MODE))
    partitions = partitionBy if partitionBy is not None else recorded(self, PARTITIONS)
    if isinstance(partitions, str):
        partitions = [partitions]
    self.__dict__.pop(PARTITIONS, None)
    arguments = sink_arguments(options, mode == "Complete")
    self.foreachBatch(batch_writer(table, mode, partitions, arguments, ref))
    # Spark checks the output mode against the query (e.g. complete needs an aggregation)
    return original(self, None, None, mode.lower(), None, queryName)


def _writer_start(original, self, path=None, format=None, outputMode=None,  # noqa: A002
                  partitionBy=None, queryName=None, **options):
    fmt = str(format or recorded(self, FORMAT, "")).lower()
    if fmt != "delta" or not installed(self._spark):
        _spark_partitions(self)
        return original(self, path, format, outputMode, partitionBy, queryName, **options)
    from sqlext.catalog import Catalog
    merged = merged_options(self, options)
    path = path if path is not None else merged.get("path")
    if path is None:
        raise SqlextError("df.writeStream.format('delta').start() needs the table's path: "
                          "start('/path'), or toTable(name) for a named table")
    ref = Catalog(self._spark).resolve(path)
    return _start_delta(self, original, path, ref, outputMode, partitionBy, queryName, merged)


def _writer_to_table(original, self, tableName, format=None, outputMode=None,  # noqa: A002
                     partitionBy=None, queryName=None, **options):
    fmt = str(format or recorded(self, FORMAT, "")).lower()
    spark = self._spark
    if not installed(spark) or not (fmt == "delta" or is_sqlext_table(spark, tableName)):
        _spark_partitions(self)
        return original(self, tableName, format, outputMode, partitionBy, queryName, **options)
    from sqlext.catalog import Catalog
    ref = Catalog(spark).resolve(tableName)
    start = DataStreamWriter.start.__wrapped__
    return _start_delta(self, lambda w, *a: start(w, *a), tableName, ref, outputMode,
                        partitionBy, queryName, merged_options(self, options))


_RECORDERS = {"format": record_format, "option": record_option, "options": record_options}
WRAPPERS = {
    DataStreamReader: {**_RECORDERS, "load": _reader_load, "table": _reader_table},
    DataStreamWriter: {**_RECORDERS, "outputMode": _writer_output_mode,
                       "partitionBy": _writer_partition_by, "start": _writer_start,
                       "toTable": _writer_to_table},
}
