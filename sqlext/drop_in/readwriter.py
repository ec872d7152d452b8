"""pyspark's ``DataFrameReader`` and ``DataFrameWriter`` on a session with sqlext installed:
``format("delta")`` loads, saves, ``saveAsTable`` and ``insertInto`` go through sqlext."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter

from sqlext.drop_in.state import (FORMAT, MODE, OPTIONS, PARTITIONS, TRUE, frame_of, installed,
                                  is_sqlext_table, merged_options, record_format, record_option,
                                  record_options, recorded, session_of, write_arguments)
from sqlext.errors import ChangeDataFeedError, SchemaMismatchError, SqlextError

CHANGE_OPTIONS = {"startingversion": "startingVersion", "endingversion": "endingVersion",
                  "startingtimestamp": "startingTimestamp", "endingtimestamp": "endingTimestamp"}


def read_delta(spark: SparkSession, table: str, options: dict) -> DataFrame:
    """A sqlext table (path or name) read as delta-spark's reader options ask: a version, a
    timestamp, or the change feed."""
    from sqlext.api import changes, read
    if str(options.get("readchangefeed", options.get("readchangedata", ""))).lower() in TRUE:
        bounds = {name: options[key] for key, name in CHANGE_OPTIONS.items() if key in options}
        if "startingVersion" not in bounds and "startingTimestamp" not in bounds:
            raise ChangeDataFeedError(f"reading the change feed of {table} needs startingVersion "
                                      "or startingTimestamp (as delta-spark does): add "
                                      ".option('startingVersion', n)", table=table,
                                      error_class="DELTA_NO_START_FOR_CDC_READ")
        # versions as given (text, as Spark's options are): sqlext.changes reads them, and
        # refuses what is no version number
        return changes(spark, table, **bounds)
    # versionAsOf as given: sqlext.read refuses what is no version (delta-spark's condition)
    return read(spark, table, versionAsOf=options.get("versionasof"),
                timestampAsOf=options.get("timestampasof"))


def _reader_load(original, self, path=None, format=None, schema=None, **options):  # noqa: A002
    fmt = str(format or recorded(self, FORMAT, "")).lower()
    if fmt != "delta" or not installed(session_of(self)):
        return original(self, path, format, schema, **options)
    merged = merged_options(self, options)
    path = path if path is not None else merged.pop("path", None)
    if path is None or not isinstance(path, str):
        raise SqlextError("spark.read.format('delta').load() reads one table: give its path "
                          "(load('/path')); for a table name use spark.read.table(name) or "
                          "sqlext.read(spark, name)")
    if schema is not None:
        raise SchemaMismatchError(f"a Delta table has its own schema: drop .schema(...) when "
                                  f"reading {path} (delta-spark refuses it too)")
    return read_delta(session_of(self), path, merged)


def _reader_table(original, self, tableName):
    spark = session_of(self)
    if installed(spark) and (recorded(self, FORMAT) == "delta"
                             or is_sqlext_table(spark, tableName)):
        return read_delta(spark, tableName, recorded(self, OPTIONS, {}))
    return original(self, tableName)


def _writer_mode(original, self, saveMode):
    if saveMode is not None:
        self.__dict__[MODE] = str(saveMode).lower()
    return original(self, saveMode)


def _writer_partition_by(original, self, *cols):
    names = list(cols[0]) if len(cols) == 1 and isinstance(cols[0], (list, tuple)) else list(cols)
    self.__dict__[PARTITIONS] = names
    return original(self, *cols)


def _save_delta(self, table: str, mode, partitionBy, merged: dict) -> None:
    """Write through sqlext; ``merged``: the writer's options (:func:`merged_options`)."""
    from sqlext.api import write
    merged.pop("path", None)
    partitions = partitionBy if partitionBy is not None else recorded(self, PARTITIONS)
    if isinstance(partitions, str):
        partitions = [partitions]
    write(frame_of(self), table, mode=str(mode or recorded(self, MODE, "error")).lower(),
          partitionBy=partitions, **write_arguments(table, merged))


def _writer_save(original, self, path=None, format=None, mode=None, partitionBy=None,  # noqa: A002
                 **options):
    fmt = str(format or recorded(self, FORMAT, "")).lower()
    if fmt != "delta" or not installed(self._spark):
        return original(self, path, format, mode, partitionBy, **options)
    merged = merged_options(self, options)
    path = path if path is not None else merged.get("path")
    if path is None:
        raise SqlextError("df.write.format('delta').save() needs the table's path: "
                          "save('/path'), or saveAsTable(name) for a named table")
    _save_delta(self, path, mode, partitionBy, merged)


def _writer_save_as_table(original, self, name, format=None, mode=None,  # noqa: A002
                          partitionBy=None, **options):
    fmt = str(format or recorded(self, FORMAT, "")).lower()
    spark = self._spark
    if not installed(spark) or not (fmt == "delta" or is_sqlext_table(spark, name)):
        return original(self, name, format, mode, partitionBy, **options)
    merged = merged_options(self, options)
    if "path" in merged:
        raise SqlextError(f"saveAsTable({name!r}) with a path option: create the table at that "
                          "location with sqlext.sql(spark, \"CREATE TABLE ... USING delta "
                          "LOCATION '...'\"), then write to it; nothing was written")
    _save_delta(self, name, mode, partitionBy, merged)


def _writer_insert_into(original, self, tableName, overwrite=None):
    spark = self._spark
    if not installed(spark) or not is_sqlext_table(spark, tableName):
        return original(self, tableName, overwrite)
    from sqlext.api import read, write
    columns = read(spark, tableName).columns
    if len(columns) != len(frame_of(self).columns):
        raise SchemaMismatchError(f"insertInto {tableName}: the table has {len(columns)} "
                                  f"columns, the data {len(frame_of(self).columns)}; insertInto "
                                  "matches columns by position. Nothing was written.")
    mode = "overwrite" if overwrite or recorded(self, MODE) == "overwrite" else "append"
    write(frame_of(self).toDF(*columns), tableName, mode=mode)


_RECORDERS = {"format": record_format, "option": record_option, "options": record_options}
WRAPPERS = {
    DataFrameReader: {**_RECORDERS, "load": _reader_load, "table": _reader_table},
    DataFrameWriter: {**_RECORDERS, "mode": _writer_mode, "partitionBy": _writer_partition_by,
                      "save": _writer_save, "saveAsTable": _writer_save_as_table,
                      "insertInto": _writer_insert_into},
}
