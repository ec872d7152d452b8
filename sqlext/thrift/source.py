"""A Spark Python data source (``pyspark.sql.datasource``) reading a Delta table through
sqlext's log: each catalog entry of ``sqlext-thriftserver`` uses one, named after the table as
clients know it (:func:`source_for`, :func:`source_name`).

Every query plans anew: :meth:`DeltaReader.partitions` replays the log to its *current* version
and lists that snapshot's live files, one partition each, so a DELETE or UPDATE committed after
the entry was made is seen by the next query, and no entry ever hands a plain parquet reader a
frozen file list. :meth:`DeltaReader.read` reads one file with pyarrow in the Python worker:
columns by their physical names (column mapping ``name``) or parquet field ids (``id``),
presented by their logical names; partition columns from the log's ``partitionValues``; the rows
the file's deletion vector marks dropped. Columns of the entry's schema the file lacks are NULL.

Locations must be reachable without a JVM (the Python workers have none): local paths, and
s3:// / s3a:// through sqlext's S3 store.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import hashlib
import json
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
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

from sqlext.errors import UnsupportedOperationError
from sqlext.log.column_mapping import FIELD_ID_KEY, ColumnMapping, mapping_mode, physical_name
from sqlext.log.deletion_vectors import DeletionVectorDescriptor, load_deletion_vector
from sqlext.log.pruning import Pruner
from sqlext.log.schema import Field, fields_of, parse_partition_value, parse_schema
from sqlext.log.storage import is_local
from sqlext.log.table import DeltaLog

#: ``spark.read.format("sqlext_delta").load(location)``; entries use ``sqlext_delta_<digest>``
SOURCE_NAME = "sqlext_delta"
#: the setting a session reading through :func:`source_for`'s sources needs (Spark refuses a
#: reader with ``pushFilters`` without it)
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
_FIELD_ID = b"PARQUET:field_id"
_BATCH_ROWS = 65536


class DeltaFile(InputPartition):
    """One live file of the snapshot a query reads: its full path, its partition values by
    logical column name (the log's strings), its deletion vector (the ``deletionVector`` of its
    action, or None), and the snapshot's schema (``schemaString``) and column mapping mode."""

    def __init__(self, location: str, path: str, partition_values: dict, deletion_vector,
                 schema_string: str, mode: str, version: int):
        super().__init__(path)
        self.location = location
        self.path = path
        self.partition_values = partition_values
        self.deletion_vector = deletion_vector
        self.schema_string = schema_string
        self.mode = mode
        self.version = version


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


def logical_schema(schema_string: str) -> T.StructType:
    """A Delta ``schemaString`` as the StructType users see: logical names, no column mapping
    metadata (nested fields included)."""
    from sqlext.engine.io.mapped_scan import logical_type
    return logical_type(T.StructType.fromJson(json.loads(schema_string)))


def read_delta_file(part: DeltaFile, schema: T.StructType) -> Iterator[pa.RecordBatch]:
    """The rows of one file in ``schema``'s columns, as Arrow record batches of the types
    Spark expects (its Arrow schema for ``schema``, timestamps in UTC)."""
    from sqlext.engine.io.scan import arrow_schema

    target = arrow_schema(schema)
    by_name = {f.name.lower(): f for f in parse_schema(part.schema_string)}
    id_mode = part.mode == "id"
    source = part.path if is_local(part.path) else pa.BufferReader(
        DeltaLog(part.location).store.read(part.path))
    parquet = pq.ParquetFile(source)
    file_fields = list(parquet.schema_arrow)
    columns: list[tuple[str, object]] = []   # per output column: ("file", index) / ("value", v)
    wanted: list[str] = []
    for out in target:
        key = out.name.lower()
        field = by_name.get(key)
        if key in part.partition_values:
            type_name = field.type if field is not None else "string"
            columns.append(("value", _partition_value(part.partition_values[key], type_name)))
            continue
        index = None if field is None else _find(file_fields, field, part.mode, id_mode)
        if index is None:
            columns.append(("value", None))
        else:
            columns.append(("file", (len(wanted), field)))
            wanted.append(file_fields[index].name)
    deleted = _deleted_rows(part, parquet.metadata.num_rows)
    offset = 0
    for batch in _batches(parquet, wanted, parquet.metadata.num_rows):
        n = batch.num_rows
        arrays = []
        for (kind, what), out in zip(columns, target):
            if kind == "value":
                arrays.append(pa.array([what] * n, type=out.type) if what is not None
                              else pa.nulls(n, out.type))
            else:
                position, field = what
                arrays.append(_conform(batch.column(position), field.type, out.type, part.mode,
                                       id_mode))
        result = pa.RecordBatch.from_arrays(arrays, schema=target)
        if deleted is not None:
            result = result.filter(pa.array(~deleted[offset:offset + n]))
        offset += n
        if result.num_rows:
            yield result


def _batches(parquet: pq.ParquetFile, columns: list[str], num_rows: int):
    """The file's rows in batches of ``columns`` (a file read for partition columns alone still
    yields its row count)."""
    if columns:
        yield from parquet.iter_batches(batch_size=_BATCH_ROWS, columns=columns,
                                        use_threads=False)
        return
    for start in range(0, num_rows, _BATCH_ROWS):
        # no column of the file is read: batches with the file's row counts and no columns
        yield pa.RecordBatch.from_pydict({"_": pa.nulls(min(_BATCH_ROWS, num_rows - start))}) \
            .select([])


def _deleted_rows(part: DeltaFile, num_rows: int) -> np.ndarray | None:
    """A boolean mask over the file's rows, True for those its deletion vector deletes."""
    if not part.deletion_vector:
        return None
    log = DeltaLog(part.location)
    bitmap = load_deletion_vector(DeletionVectorDescriptor.from_dict(part.deletion_vector),
                                  lambda path: log.store.read(log.data_path(path)))
    mask = np.zeros(num_rows, dtype=bool)
    rows = bitmap.row_index_array()
    mask[rows[rows < num_rows]] = True
    return mask


def _find(fields: list[pa.Field], field: Field, mode: str, id_mode: bool) -> int | None:
    """The position among a file's (or a struct's) fields of the column a Delta field is stored
    as: by parquet field id in column mapping ``id`` mode, else by physical name (the logical
    name without column mapping), matched case-insensitively as Spark matches."""
    if id_mode:
        field_id = (field.metadata or {}).get(FIELD_ID_KEY)
        if field_id is not None:
            for i, f in enumerate(fields):
                if f.metadata and f.metadata.get(_FIELD_ID) == str(field_id).encode():
                    return i
    stored = physical_name(field.name, field.metadata) if mode != "none" else field.name
    exact = [i for i, f in enumerate(fields) if f.name == stored]
    if exact:
        return exact[0]
    folded = [i for i, f in enumerate(fields) if f.name.lower() == stored.lower()]
    return folded[0] if len(folded) == 1 else None


def _conform(array: pa.Array, delta_type, target: pa.DataType, mode: str,
             id_mode: bool) -> pa.Array:
    """A column as read from the file, with the (logical) names and Arrow type Spark expects:
    struct fields found by physical name or id, inside lists and maps too; other values cast."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_struct(target) and pa.types.is_struct(array.type) and isinstance(delta_type, dict):
        fields = {f.name.lower(): f for f in fields_of(delta_type)}
        stored = list(array.type)
        children = []
        for out in target:
            field = fields.get(out.name.lower())
            index = None if field is None else _find(stored, field, mode, id_mode)
            children.append(pa.nulls(len(array), out.type) if index is None else
                            _conform(array.field(index), field.type, out.type, mode, id_mode))
        return pa.StructArray.from_arrays(children, fields=list(target),
                                          mask=array.is_null() if array.null_count else None)
    if (pa.types.is_list(target) or pa.types.is_large_list(target)) and isinstance(delta_type, dict) \
            and (pa.types.is_list(array.type) or pa.types.is_large_list(array.type)):
        values = _conform(array.values, delta_type.get("elementType"), target.value_type, mode,
                          id_mode)
        return type(array).from_arrays(array.offsets, values, type=target,
                                       mask=array.is_null() if array.null_count else None)
    if pa.types.is_map(target) and pa.types.is_map(array.type) and isinstance(delta_type, dict):
        keys = _conform(array.keys, delta_type.get("keyType"), target.key_type, mode, id_mode)
        items = _conform(array.items, delta_type.get("valueType"), target.item_type, mode,
                         id_mode)
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=target,
                                       mask=array.is_null() if array.null_count else None)
    if array.type != target:
        array = array.cast(target)
    return array


def _partition_value(text: str | None, type_name) -> object:
    """A partition value (the log's string) as the Python value Arrow takes for its type:
    timestamps (stored in UTC) as aware UTC datetimes."""
    value = parse_partition_value(text, type_name)
    if type_name == "timestamp" and isinstance(value, _dt.datetime):
        value = value.replace(tzinfo=_dt.timezone.utc)
    return value
