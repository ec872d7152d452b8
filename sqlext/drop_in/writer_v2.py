"""pyspark's ``DataFrameWriterV2`` (``df.writeTo(name)``) on a session with sqlext installed:
``create``/``replace``/``createOrReplace`` as CREATE [OR REPLACE] TABLE AS SELECT, ``append``,
``overwrite(condition)`` and ``overwritePartitions`` as sqlext writes."""

from __future__ import annotations

import re

from pyspark.sql import DataFrame
from pyspark.sql.readwriter import DataFrameWriterV2

from sqlext.drop_in.state import (FORMAT, OPTIONS, PARTITIONS, frame_of, installed,
                                  is_sqlext_table, record_format, record_option, record_options,
                                  recorded, write_arguments)
from sqlext.engine.session import is_connect
from sqlext.errors import (SqlextError, TableAlreadyExistsError, TableNotFoundError,
                           UnsupportedOperationError)

_PROPERTIES = "_sqlext_properties"
_TABLE = "_sqlext_table"


def _v2_init(original, self, df, table):
    self.__dict__[_TABLE] = table       # pyspark keeps the name on the JVM side only
    original(self, df, table)


def _table(self) -> str:
    """The table a ``DataFrameWriterV2`` writes (a Spark Connect writer keeps it itself)."""
    return recorded(self, _TABLE) or self._table_name


def _column_name(column) -> str:
    expression = getattr(column, "_expr", None)     # a Spark Connect Column
    if expression is not None:
        return getattr(expression, "_unparsed_identifier", None) or str(expression)
    return column._jc.toString()


def _v2_table_property(original, self, property, value):  # noqa: A002 - pyspark's name
    self.__dict__.setdefault(_PROPERTIES, {})[property] = str(value)
    return original(self, property, value)


def _v2_partitioned_by(original, self, col, *cols):
    names = []
    for column in (col, *cols):
        name = column if isinstance(column, str) else _column_name(column)
        if not re.fullmatch(r"\w+", name):
            raise SqlextError(f"writeTo({_table(self)!r}).partitionedBy({name}): Delta "
                              "tables partition by plain columns; add a column for the transform "
                              "(e.g. withColumn('day', to_date(ts))) and partition by it")
        names.append(name)
    self.__dict__[PARTITIONS] = names
    return original(self, col, *cols)


def _v2_routed(self) -> bool:
    spark = self._spark
    return installed(spark) and (recorded(self, FORMAT) == "delta"
                                 or is_sqlext_table(spark, _table(self))
                                 or _table(self).lower().startswith("delta.`"))


def _v2_exists(self) -> bool:
    from sqlext.catalog import Catalog
    from sqlext.catalog.registry import has_delta_log
    return has_delta_log(Catalog(self._spark).resolve(_table(self)).location)


def _v2_require(self, exists: bool) -> None:
    table = _table(self)
    if _v2_exists(self) == exists:
        return
    if exists:
        raise TableNotFoundError(f"writeTo({table!r}): table {table} does not exist; use "
                                 "create() or createOrReplace(). Nothing was written.",
                                 error_class="TABLE_OR_VIEW_NOT_FOUND", table=table)
    raise TableAlreadyExistsError(f"writeTo({table!r}).create(): table {table} already "
                                  "exists; use append(), replace() or createOrReplace()",
                                  error_class="TABLE_OR_VIEW_ALREADY_EXISTS", table=table)


def _v2_write(self, mode: str, **arguments) -> None:
    """Write to the existing table (append or overwrite) with the builder's options."""
    from sqlext.api import write
    _v2_require(self, True)
    table = _table(self)
    write(frame_of(self), table, mode=mode, **write_arguments(table, recorded(self, OPTIONS, {})),
          **arguments)


def _v2_create_table(self, replace: bool) -> None:
    """CREATE [OR REPLACE] TABLE ... AS SELECT the builder's DataFrame, as SQL would."""
    from sqlext.catalog import Catalog
    from sqlext.engine.ddl import TableDefinition
    from sqlext.names import create_table
    table = _table(self)
    options = write_arguments(table, recorded(self, OPTIONS, {}))
    properties = {**options.pop("configuration", {}), **recorded(self, _PROPERTIES, {})}
    if options:
        raise SqlextError(f"writeTo({table!r}): the options {sorted(options)} apply to writes "
                          "into an existing table, not to creating one. Nothing was written.")
    definition = TableDefinition(query=frame_of(self), partition_by=recorded(self, PARTITIONS) or [],
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
    predicate = condition if isinstance(condition, str) else _column_sql(frame_of(self), condition)
    _v2_write(self, "overwrite", replaceWhere=predicate)


def _column_sql(df: DataFrame, column) -> str:
    """SQL text of a Column over ``df``'s columns: Spark's own rendering of it once analyzed."""
    if is_connect(df.sparkSession):
        raise UnsupportedOperationError(
            "df.writeTo(name).overwrite(condition) on a Spark Connect session takes the "
            "condition as a SQL string (overwrite(\"day = '2024-01-01'\")), not a Column: "
            "the client cannot render a Column as SQL. Nothing was written.")
    analyzed = df.select(column)._jdf.queryExecution().analyzed()
    return analyzed.projectList().head().child().sql()


def _v2_overwrite_partitions(original, self):
    if not _v2_routed(self):
        return original(self)
    _v2_write(self, "overwrite", partitionOverwriteMode="dynamic")


WRAPPERS = {
    DataFrameWriterV2: {"__init__": _v2_init, "using": record_format, "option": record_option,
                        "options": record_options, "tableProperty": _v2_table_property,
                        "partitionedBy": _v2_partitioned_by, "create": _v2_create,
                        "replace": _v2_replace, "createOrReplace": _v2_create_or_replace,
                        "append": _v2_append, "overwrite": _v2_overwrite,
                        "overwritePartitions": _v2_overwrite_partitions},
}
