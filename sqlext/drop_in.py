"""``sqlext.install(spark)``: the delta-spark idioms a user already has, on sqlext.

After ``install``, on that session:

- ``spark.read.format("delta").load(path)`` (options ``versionAsOf``, ``timestampAsOf``,
  ``readChangeFeed`` with ``startingVersion``/``endingVersion``/``startingTimestamp``/
  ``endingTimestamp``) reads through :func:`sqlext.read` / :func:`sqlext.changes`: the same
  native parquet scan with partition and statistics pruning, no rows through Python;
- ``df.write.format("delta")...save(path)`` / ``.saveAsTable(name)`` and ``insertInto(name)`` on
  a sqlext table commit through :func:`sqlext.write`, and so do ``df.writeTo(name)``'s
  ``create``, ``replace``, ``createOrReplace``, ``append``, ``overwrite(condition)`` and
  ``overwritePartitions`` (with ``.using("delta")``, or on a sqlext table);
- ``spark.sql(text)`` runs through :func:`sqlext.sql` (DELETE, UPDATE, MERGE, time travel, change
  feeds on sqlext tables; other statements reach Spark as written), and ``spark.table(name)`` and
  ``spark.read.table(name)`` read a sqlext table's current snapshot.

Sessions without ``install`` are untouched: pyspark's reader and writer classes are wrapped once,
and the wrappers hand every call on another session, or in another format, to pyspark as is.
"""

from __future__ import annotations

import functools
import re

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter, DataFrameWriterV2

from sqlext.engine.session import native_sql
from sqlext.errors import (ParseError, SchemaMismatchError, SqlextError, TableAlreadyExistsError,
                           TableNotFoundError)

_INSTALLED = "_sqlext_installed"
_FORMAT = "_sqlext_format"
_OPTIONS = "_sqlext_options"
_MODE = "_sqlext_mode"
_PARTITIONS = "_sqlext_partition_by"

_TRUE = ("true", "1", "yes")
# delta-spark's writer options -> (sqlext.write's argument, conversion)
_WRITE_OPTIONS = {
    "replacewhere": ("replaceWhere", str),
    "mergeschema": ("mergeSchema", lambda v: str(v).lower() in _TRUE),
    "overwriteschema": ("overwriteSchema", lambda v: str(v).lower() in _TRUE),
    "partitionoverwritemode": ("partitionOverwriteMode", str),
    "usermetadata": ("userMetadata", str),
    "txnappid": ("txnAppId", str),
    "txnversion": ("txnVersion", int),
}
_CHANGE_OPTIONS = {"startingversion": "startingVersion", "endingversion": "endingVersion",
                   "startingtimestamp": "startingTimestamp", "endingtimestamp": "endingTimestamp"}


def install(spark: SparkSession) -> SparkSession:
    """Make delta-spark's idioms work on ``spark`` (see the module docstring); returns it.

    Idempotent. ``spark.sql`` and ``spark.table`` are replaced on this session object only.
    """
    _wrap_pyspark_classes()
    if not getattr(spark, _INSTALLED, False):
        setattr(spark, _INSTALLED, True)
        spark.sql = functools.partial(_routed_sql, spark)
        spark.table = functools.partial(_routed_table, spark)
    return spark


def uninstall(spark: SparkSession) -> None:
    """Undo :func:`install` on ``spark``: its ``sql``, ``table``, readers and writers are
    pyspark's again (the class wrappers stay, and pass every call through)."""
    for attribute in ("sql", "table", _INSTALLED):
        spark.__dict__.pop(attribute, None)


def installed(spark: SparkSession) -> bool:
    """Whether :func:`install` ran on this session."""
    return bool(getattr(spark, _INSTALLED, False))


# --- spark.sql / spark.table ------------------------------------------------------------------


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
    if _is_sqlext_table(spark, tableName):
        from sqlext.api import read
        return read(spark, tableName)
    return type(spark).table(spark, tableName)


def _is_sqlext_table(spark: SparkSession, name: str) -> bool:
    from sqlext.catalog import Catalog
    from sqlext.catalog.registry import looks_like_path, split_name
    if looks_like_path(name):
        return False
    catalog = Catalog(spark)
    schema, table = split_name(name)
    return catalog.lookup(schema or catalog.current_schema(), table) is not None


# --- the reader -------------------------------------------------------------------------------


def _read_delta(spark: SparkSession, table: str, options: dict) -> DataFrame:
    from sqlext.api import changes, read
    if str(options.get("readchangefeed", options.get("readchangedata", ""))).lower() in _TRUE:
        bounds = {name: options[key] for key, name in _CHANGE_OPTIONS.items() if key in options}
        if "startingVersion" not in bounds and "startingTimestamp" not in bounds:
            raise SqlextError(f"reading the change feed of {table} needs startingVersion or "
                              "startingTimestamp (as delta-spark does): add "
                              ".option('startingVersion', n)")
        for key in ("startingVersion", "endingVersion"):
            if key in bounds and str(bounds[key]).lower() != "latest":
                bounds[key] = int(bounds[key])
        return changes(spark, table, **bounds)
    version = options.get("versionasof")
    return read(spark, table, versionAsOf=None if version is None else int(version),
                timestampAsOf=options.get("timestampasof"))


def _recorded(obj, name: str, default=None):
    return obj.__dict__.get(name, default)


def _record_format(original, self, source):
    self.__dict__[_FORMAT] = str(source).lower()
    return original(self, source)


def _record_option(original, self, key, value):
    self.__dict__.setdefault(_OPTIONS, {})[str(key).lower()] = value
    return original(self, key, value)


def _record_options(original, self, **options):
    recorded = self.__dict__.setdefault(_OPTIONS, {})
    recorded.update({str(k).lower(): v for k, v in options.items()})
    return original(self, **options)


def _reader_load(original, self, path=None, format=None, schema=None, **options):  # noqa: A002
    fmt = str(format or _recorded(self, _FORMAT, "")).lower()
    if fmt != "delta" or not installed(self._spark):
        return original(self, path, format, schema, **options)
    merged = {**_recorded(self, _OPTIONS, {}), **{k.lower(): v for k, v in options.items()}}
    path = path if path is not None else merged.pop("path", None)
    if path is None or not isinstance(path, str):
        raise SqlextError("spark.read.format('delta').load() reads one table: give its path "
                          "(load('/path')); for a table name use spark.read.table(name) or "
                          "sqlext.read(spark, name)")
    if schema is not None:
        raise SchemaMismatchError(f"a Delta table has its own schema: drop .schema(...) when "
                                  f"reading {path} (delta-spark refuses it too)")
    return _read_delta(self._spark, path, merged)


def _reader_table(original, self, tableName):
    spark = self._spark
    if installed(spark) and (_recorded(self, _FORMAT) == "delta"
                             or _is_sqlext_table(spark, tableName)):
        return _read_delta(spark, tableName, _recorded(self, _OPTIONS, {}))
    return original(self, tableName)


# --- the writer -------------------------------------------------------------------------------


def _writer_mode(original, self, saveMode):
    if saveMode is not None:
        self.__dict__[_MODE] = str(saveMode).lower()
    return original(self, saveMode)


def _writer_partition_by(original, self, *cols):
    names = list(cols[0]) if len(cols) == 1 and isinstance(cols[0], (list, tuple)) else list(cols)
    self.__dict__[_PARTITIONS] = names
    return original(self, *cols)


def _write_arguments(table: str, options: dict) -> dict:
    arguments, configuration = {}, {}
    for key, value in options.items():
        if key in _WRITE_OPTIONS:
            name, convert = _WRITE_OPTIONS[key]
            arguments[name] = convert(value)
        elif key.startswith("delta."):
            configuration[key] = str(value)
        else:
            known = ", ".join(sorted(n for n, _ in _WRITE_OPTIONS.values()))
            raise SqlextError(f"write to {table}: sqlext does not know the Delta writer option "
                              f"{key!r}; it takes {known} and delta.* table properties (see "
                              "sqlext.write). Nothing was written.")
    if configuration:
        arguments["configuration"] = configuration
    return arguments


def _save_delta(self, table: str, mode, partitionBy, options: dict) -> None:
    from sqlext.api import write
    merged = {**_recorded(self, _OPTIONS, {}), **{k.lower(): v for k, v in options.items()}}
    merged.pop("path", None)
    partitions = partitionBy if partitionBy is not None else _recorded(self, _PARTITIONS)
    if isinstance(partitions, str):
        partitions = [partitions]
    write(self._df, table, mode=str(mode or _recorded(self, _MODE, "error")).lower(),
          partitionBy=partitions, **_write_arguments(table, merged))


def _writer_save(original, self, path=None, format=None, mode=None, partitionBy=None,  # noqa: A002
                 **options):
    fmt = str(format or _recorded(self, _FORMAT, "")).lower()
    if fmt != "delta" or not installed(self._spark):
        return original(self, path, format, mode, partitionBy, **options)
    recorded = {**_recorded(self, _OPTIONS, {}), **{k.lower(): v for k, v in options.items()}}
    path = path if path is not None else recorded.get("path")
    if path is None:
        raise SqlextError("df.write.format('delta').save() needs the table's path: "
                          "save('/path'), or saveAsTable(name) for a named table")
    _save_delta(self, path, mode, partitionBy, options)


def _writer_save_as_table(original, self, name, format=None, mode=None,  # noqa: A002
                          partitionBy=None, **options):
    fmt = str(format or _recorded(self, _FORMAT, "")).lower()
    spark = self._spark
    if not installed(spark) or not (fmt == "delta" or _is_sqlext_table(spark, name)):
        return original(self, name, format, mode, partitionBy, **options)
    if "path" in {k.lower() for k in {**_recorded(self, _OPTIONS, {}), **options}}:
        raise SqlextError(f"saveAsTable({name!r}) with a path option: create the table at that "
                          "location with sqlext.sql(spark, \"CREATE TABLE ... USING delta "
                          "LOCATION '...'\"), then write to it; nothing was written")
    _save_delta(self, name, mode, partitionBy, options)


def _writer_insert_into(original, self, tableName, overwrite=None):
    spark = self._spark
    if not installed(spark) or not _is_sqlext_table(spark, tableName):
        return original(self, tableName, overwrite)
    from sqlext.api import read, write
    columns = read(spark, tableName).columns
    if len(columns) != len(self._df.columns):
        raise SchemaMismatchError(f"insertInto {tableName}: the table has {len(columns)} "
                                  f"columns, the data {len(self._df.columns)}; insertInto "
                                  "matches columns by position. Nothing was written.")
    mode = "overwrite" if overwrite or _recorded(self, _MODE) == "overwrite" else "append"
    write(self._df.toDF(*columns), tableName, mode=mode)


# --- DataFrameWriterV2: df.writeTo(name) ----------------------------------------------------

_PROVIDER = "_sqlext_provider"
_PROPERTIES = "_sqlext_properties"
_TABLE = "_sqlext_table"


def _v2_init(original, self, df, table):
    self.__dict__[_TABLE] = table       # pyspark keeps the name on the JVM side only
    original(self, df, table)


def _v2_using(original, self, provider):
    self.__dict__[_PROVIDER] = str(provider).lower()
    return original(self, provider)


def _v2_table_property(original, self, property, value):  # noqa: A002 - pyspark's name
    self.__dict__.setdefault(_PROPERTIES, {})[property] = str(value)
    return original(self, property, value)


def _v2_partitioned_by(original, self, col, *cols):
    names = []
    for column in (col, *cols):
        name = column if isinstance(column, str) else column._jc.toString()
        if not re.fullmatch(r"\w+", name):
            raise SqlextError(f"writeTo({_recorded(self, _TABLE)!r}).partitionedBy({name}): Delta tables "
                              "partition by plain columns; add a column for the transform "
                              "(e.g. withColumn('day', to_date(ts))) and partition by it")
        names.append(name)
    self.__dict__[_PARTITIONS] = names
    return original(self, col, *cols)


def _v2_routed(self) -> bool:
    spark = self._spark
    return installed(spark) and (_recorded(self, _PROVIDER) == "delta"
                                 or _is_sqlext_table(spark, _recorded(self, _TABLE))
                                 or _recorded(self, _TABLE).lower().startswith("delta.`"))


def _v2_exists(self) -> bool:
    from sqlext.catalog import Catalog
    from sqlext.catalog.registry import has_delta_log
    return has_delta_log(Catalog(self._spark).resolve(_recorded(self, _TABLE)).location)


def _v2_require(self, exists: bool) -> None:
    table = _recorded(self, _TABLE)
    if _v2_exists(self) == exists:
        return
    if exists:
        raise TableNotFoundError(f"writeTo({table!r}): table {table} does not exist; use "
                                 "create() or createOrReplace(). Nothing was written.")
    raise TableAlreadyExistsError(f"writeTo({table!r}).create(): table {table} already "
                                  "exists; use append(), replace() or createOrReplace()")


def _v2_write(self, mode: str, **arguments) -> None:
    """Write to the existing table (append or overwrite) with the builder's options."""
    from sqlext.api import write
    _v2_require(self, True)
    table = _recorded(self, _TABLE)
    write(self._df, table, mode=mode, **_write_arguments(table, _recorded(self, _OPTIONS, {})),
          **arguments)


def _v2_create_table(self, replace: bool) -> None:
    """CREATE [OR REPLACE] TABLE ... AS SELECT the builder's DataFrame, as SQL would."""
    from sqlext.catalog import Catalog
    from sqlext.engine.ddl import TableDefinition, create_table
    table = _recorded(self, _TABLE)
    options = _write_arguments(table, _recorded(self, _OPTIONS, {}))
    properties = {**options.pop("configuration", {}), **_recorded(self, _PROPERTIES, {})}
    if options:
        raise SqlextError(f"writeTo({table!r}): the options {sorted(options)} apply to writes "
                          "into an existing table, not to creating one. Nothing was written.")
    definition = TableDefinition(query=self._df, partition_by=_recorded(self, _PARTITIONS) or [],
                                 properties=properties)
    create_table(self._spark, Catalog(self._spark).resolve(table), definition, replace=replace)


def _v2_create(original, self):
    if not _v2_routed(self):
        return original(self)
    _v2_require(self, False)
    _v2_create_table(self, replace=False)


def _v2_replace(original, self):
    if not _v2_routed(self):
        return original(self)
    _v2_require(self, True)
    _v2_create_table(self, replace=True)


def _v2_create_or_replace(original, self):
    if not _v2_routed(self):
        return original(self)
    _v2_create_table(self, replace=True)


def _v2_append(original, self):
    if not _v2_routed(self):
        return original(self)
    _v2_write(self, "append")


def _v2_overwrite(original, self, condition):
    if not _v2_routed(self):
        return original(self, condition)
    predicate = condition if isinstance(condition, str) else _column_sql(self._df, condition)
    _v2_write(self, "overwrite", replaceWhere=predicate)


def _column_sql(df: DataFrame, column) -> str:
    """SQL text of a Column over ``df``'s columns: Spark's own rendering of it once analyzed."""
    analyzed = df.select(column)._jdf.queryExecution().analyzed()
    return analyzed.projectList().head().child().sql()


def _v2_overwrite_partitions(original, self):
    if not _v2_routed(self):
        return original(self)
    _v2_write(self, "overwrite", partitionOverwriteMode="dynamic")


# what both pyspark classes record, then what each one routes
_RECORDERS = {"format": _record_format, "option": _record_option, "options": _record_options}
_WRAPPERS = {
    DataFrameReader: {**_RECORDERS, "load": _reader_load, "table": _reader_table},
    DataFrameWriter: {**_RECORDERS, "mode": _writer_mode, "partitionBy": _writer_partition_by,
                      "save": _writer_save, "saveAsTable": _writer_save_as_table,
                      "insertInto": _writer_insert_into},
    DataFrameWriterV2: {"__init__": _v2_init, "using": _v2_using, "option": _record_option,
                        "options": _record_options, "tableProperty": _v2_table_property,
                        "partitionedBy": _v2_partitioned_by, "create": _v2_create,
                        "replace": _v2_replace, "createOrReplace": _v2_create_or_replace,
                        "append": _v2_append, "overwrite": _v2_overwrite,
                        "overwritePartitions": _v2_overwrite_partitions},
}


def _wrap_pyspark_classes() -> None:
    for cls, wrappers in _WRAPPERS.items():
        for name, wrapper in wrappers.items():
            original = getattr(cls, name)
            if not getattr(original, "_sqlext_wrapped", False):
                setattr(cls, name, _wrapped(wrapper, original))


def _wrapped(wrapper, original):
    @functools.wraps(original)
    def method(self, *args, **kwargs):
        return wrapper(original, self, *args, **kwargs)
    method._sqlext_wrapped = True
    return method
