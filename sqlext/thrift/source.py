"""A Spark Python data source (``pyspark.sql.datasource``) reading a Delta table through
sqlext's log: each catalog entry of ``sqlext-thriftserver`` uses one, named after the table as
clients know it (:func:`source_for`, :func:`source_name`).

Every query plans anew: :meth:`DeltaReader.partitions` replays the log to its *current* version
and lists that snapshot's live files, one partition each, so a DELETE or UPDATE committed after
the entry was made is seen by the next query, and no entry ever hands a plain parquet reader a
frozen file list. :meth:`DeltaReader.read` reads one file in the Python worker with the
kernel's reader (:mod:`sqlext.log.file_reader`): columns by their physical names (column mapping ``name``) or parquet field ids (``id``),
presented by their logical names; partition columns from the log's ``partitionValues``; the rows
the file's deletion vector marks dropped. Columns of the entry's schema the file lacks are NULL.

Locations must be reachable without a JVM (the Python workers have none): local paths, and
s3:// / s3a:// through sqlext's S3 store.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import hashlib
from typing import Iterable, Iterator

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

try:        # pyspark 4.1+: filters pushed into Python data sources
    from pyspark.sql.datasource import (EqualNullSafe, EqualTo, Filter, GreaterThan,
                                        GreaterThanOrEqual, In, IsNotNull, IsNull, LessThan,
                                        LessThanOrEqual, Not)
except ImportError:     # pragma: no cover - pyspark 4.0 never calls pushFilters
    class Filter:   # type: ignore[no-redef]
        """Absent before pyspark 4.1 (Spark pushes no filter to a Python data source)."""
    EqualNullSafe = EqualTo = GreaterThan = GreaterThanOrEqual = In = IsNotNull = IsNull = \
        LessThan = LessThanOrEqual = Not = Filter
from sqlglot import exp

from sqlext.engine.io.python_source import DeltaFile, logical_schema, read_delta_file
from sqlext.errors import UnsupportedOperationError
from sqlext.log.column_mapping import ColumnMapping, mapping_mode
from sqlext.log.pruning import Pruner
from sqlext.log.table import DeltaLog

#: ``spark.read.format("sqlext_delta").load(location)``; entries use ``sqlext_delta_<digest>``
SOURCE_NAME = "sqlext_delta"
#: the setting a session reading through :func:`source_for`'s sources needs (Spark refuses a
#: reader with ``pushFilters`` without it)
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


class DeltaTableSource(DataSource):
    """The current snapshot of one Delta table: ``location`` (a subclass per table sets it, see
    :func:`source_for`; on this class itself, option ``path`` gives it:
    ``spark.read.format("sqlext_delta").load(location)``). Reading only: its writer refuses
    INSERT naming the table, and Spark refuses DELETE, UPDATE, MERGE and TRUNCATE on an entry
    using it (a Python data source has no row-level operations).

    A catalog entry needs a source of its own because Spark hands a Python data source no
    option of a catalog table (neither its LOCATION nor its OPTIONS) when a query reads it."""

    location: str | None = None
    #: the table as Spark's catalog names it (an entry's source), for errors
    table: str | None = None

    @classmethod
    def name(cls) -> str:
        """The name ``spark.read.format`` takes: ``sqlext_delta``."""
        return SOURCE_NAME

    def table_location(self) -> str:
        """The table this source reads."""
        return self.location or self.options["path"]

    def schema(self) -> T.StructType:
        """The table's current columns by logical name (column mapping metadata left out)."""
        return logical_schema(DeltaLog(self.table_location()).snapshot().metadata.schema_string)

    def reader(self, schema: T.StructType) -> "DeltaReader":
        """A reader of the table's current snapshot in ``schema``'s columns."""
        return DeltaReader(self.table_location(), schema)

    def writer(self, schema: T.StructType, overwrite: bool):
        """Refused: INSERT (or a DataFrame write) through this source would bypass the log."""
        table = self.table or f"the table at {self.table_location()}"
        raise UnsupportedOperationError(
            f"{table} is a sqlext table, read-only here (sqlext-thriftserver): nothing was "
            "written. Change it with sqlext (sqlext-sql, sqlext.sql, DeltaTable, dbt)")


#: what an entry's data source name says after the table's name (see :func:`source_name`)
READ_ONLY_NOTE = "(a sqlext table, read-only here: change it with sqlext)"


def source_name(location: str, table: str | None = None) -> str:
    """The name of the data source of the table at ``location``: ``sqlext_delta_`` and a
    digest of the location; for a catalog entry (``USING`` of it), the table as Spark's
    catalog names it (``table``, e.g. ```sales`.`orders```) and :data:`READ_ONLY_NOTE`.

    Spark names a table it cannot DELETE from or TRUNCATE by its data source's name, so that
    a client's ``DELETE FROM sales.orders`` over JDBC answers ``Table does not support deletes:
    `sales`.`orders` (a sqlext table, read-only here: change it with sqlext).``"""
    if table is not None:
        return f"{table} {READ_ONLY_NOTE}"
    return f"{SOURCE_NAME}_{hashlib.sha1(location.encode()).hexdigest()[:16]}"


def source_for(location: str, table: str | None = None) -> type[DeltaTableSource]:
    """A :class:`DeltaTableSource` for the table at ``location`` (the catalog entry ``table``,
    if it is one's), named :func:`source_name`, to register with ``spark.dataSource.register``
    (Spark pickles it by value for its workers). Its reader skips the files that Spark's
    filters rule out (:class:`PruningDeltaReader`): the session needs
    ``spark.sql.python.filterPushdown.enabled`` (:data:`PUSHDOWN_CONF`)."""
    name = source_name(location, table)
    digest = hashlib.sha1(name.encode()).hexdigest()[:16]
    return type(f"DeltaTableSource_{digest}", (DeltaTableSource,),
                {"location": location, "table": table, "name": classmethod(lambda cls: name),
                 "reader": lambda self, schema: PruningDeltaReader(location, schema),
                 "__doc__": f"The Delta table at {location}."})


class DeltaReader(DataSourceReader):
    """Reads the snapshot current when the query is planned, in ``schema``'s columns."""

    def __init__(self, location: str, schema: T.StructType):
        self.location = location
        self.schema = schema

    predicate = None     # a sqlglot predicate the files read must be able to match

    def partitions(self) -> list[DeltaFile]:
        """The live files of the table's latest version (read from its log now); with a
        :attr:`predicate`, those whose partition values or statistics may match it."""
        log = DeltaLog(self.location)
        snapshot = log.snapshot()
        mapping = ColumnMapping.of(snapshot.metadata)
        mode = mapping_mode(snapshot.metadata)
        files = []
        for f in Pruner.of(self.predicate, snapshot).prune(snapshot.files):
            values = (mapping.logical_partition_values(f.partition_values) if mapping is not None
                      else dict(f.partition_values or {}))
            files.append(DeltaFile(log.location, log.data_path(f.path),
                                   {k.lower(): v for k, v in values.items()}, f.deletion_vector,
                                   snapshot.metadata.schema_string, mode, snapshot.version))
        return files

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """The rows of one file (:func:`read_delta_file`)."""
        if not isinstance(partition, DeltaFile):     # a table without files: Spark's empty one
            return iter(())
        return read_delta_file(partition, self.schema)


class PruningDeltaReader(DeltaReader):
    """A :class:`DeltaReader` that reads only the files Spark's pushed filters may match (by
    partition values and statistics, :class:`sqlext.log.pruning.Pruner`). Every filter is
    handed back to Spark, which evaluates them all on the rows read: pruning only skips files,
    it never decides a row."""

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        """Keep what the filters say about files; return them all for Spark to apply."""
        conditions = [c for c in map(filter_predicate, filters) if c is not None]
        self.predicate = exp.and_(*conditions) if conditions else None
        return list(filters)


def filter_predicate(item: Filter) -> exp.Expression | None:
    """A pushed Spark filter as a sqlglot predicate :class:`Pruner` understands, or None when it
    is on a nested field or has a value pruning does not compare (floats, timestamps, arrays)."""
    if isinstance(item, Not):
        inner = filter_predicate(item.child)
        return None if inner is None else exp.Not(this=inner)
    if len(getattr(item, "attribute", ())) != 1:
        return None
    column = exp.column(item.attribute[0], quoted=True)
    if isinstance(item, IsNull):
        return exp.Is(this=column, expression=exp.Null())
    if isinstance(item, IsNotNull):
        return exp.Not(this=exp.Is(this=column, expression=exp.Null()))
    if isinstance(item, In):
        values = [_literal(v) for v in item.value]
        return None if any(v is None for v in values) else exp.In(this=column, expressions=values)
    op = _COMPARISONS.get(type(item))
    value = _literal(item.value) if op is not None else None
    return None if value is None else op(this=column, expression=value)


_COMPARISONS = {EqualTo: exp.EQ, EqualNullSafe: exp.NullSafeEQ, GreaterThan: exp.GT,
                GreaterThanOrEqual: exp.GTE, LessThan: exp.LT, LessThanOrEqual: exp.LTE}


def _literal(value) -> exp.Expression | None:
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, decimal.Decimal)):
        return exp.Literal.number(str(value))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return exp.Literal.string(value.isoformat())
    return None
