"""One reader of a data file's logical rows: a parquet file plus its ``add`` action and the
snapshot's metadata become Arrow record batches of the table's logical columns (model:
delta-kernel-rs ``kernel/src/scan/``, its physical-to-logical transform). No pyspark here.

Public functions::

    read_logical(table_root: str, add: AddFile, metadata: Metadata, columns=None,
                 with_row_index=False, *, version=None, path=None,
                 deletion_vectors=None) -> pa.Table
    iter_logical(...same arguments..., batch_rows=65536) -> Iterator[pa.RecordBatch]
    logical_schema(metadata, columns=None, with_row_index=False) -> pa.Schema

What the transform does, per file:

- columns are found by parquet field id (column mapping ``id``) or physical name (``name``;
  the logical name without column mapping), case-insensitively when unique as Spark matches,
  nested struct fields too (inside lists and maps), and presented by their logical names;
  columns the file lacks are NULL;
- partition columns take the file's ``partitionValues`` (keyed by physical names under column
  mapping), typed by the column's Delta type (:func:`sqlext.log.schema.partition_value`);
- every column is cast to its table type: a file written before a type widening
  (``delta.enableTypeWidening``) reads as the widened type; types are Arrow's forms of Delta's
  (:mod:`sqlext.log.arrow_types`, as PySpark's ``to_arrow_schema`` maps them);
- the rows the action's deletion vector marks are removed;
- ``columns`` (logical names, matched case-insensitively) projects and orders the output;
- ``with_row_index`` adds :data:`ROW_INDEX_COLUMN` (int64): each row's position in the file,
  counted before deletion-vector removal, for callers that mark rows.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sqlext.errors import AnalysisException, DeltaFileNotFoundError
from sqlext.log.actions import AddFile, Metadata
from sqlext.log.arrow_types import arrow_field
from sqlext.log.column_mapping import FIELD_ID_KEY, mapping_mode, physical_name
from sqlext.log.deletion_vectors import DeletionVectorReader
from sqlext.log.schema import Field, fields_of, parse_schema, partition_value
from sqlext.log.storage import is_local
from sqlext.log.table import DeltaLog

#: the row-index column :func:`iter_logical` adds with ``with_row_index``
ROW_INDEX_COLUMN = "__sqlext_row_index"
BATCH_ROWS = 65536
_FIELD_ID = b"PARQUET:field_id"


class _Column:
    """One output column: a table field, and either its partition value or its file column."""

    def __init__(self, field: Field, arrow: pa.Field, partition: bool):
        self.field = field
        self.arrow = arrow
        self.partition = partition


def _plan(metadata: Metadata, columns, table: str, version) -> list[_Column]:
    fields = parse_schema(metadata.schema_string)
    by_name = {f.name.lower(): f for f in fields}
    partitions = {c.lower() for c in metadata.partition_columns}
    if columns is None:
        chosen = fields
    else:
        chosen = []
        for name in columns:
            field = by_name.get(name.lower())
            if field is None:
                raise AnalysisException(
                    f"table {table}" + (f", version {version}" if version is not None else "")
                    + f": column {name} does not exist (columns: "
                    f"{', '.join(f.name for f in fields)}); name one of them", table=table,
                    version=version)
            chosen.append(field)
    out = []
    for field in chosen:
        arrow = arrow_field(field) or pa.field(field.name, pa.null())
        out.append(_Column(field, arrow, field.name.lower() in partitions))
    return out


def logical_schema(metadata: Metadata, columns=None, with_row_index: bool = False,
                   table: str = "the table", version: int | None = None) -> pa.Schema:
    """The Arrow schema :func:`iter_logical` yields for ``metadata`` and ``columns``."""
    return _schema(_plan(metadata, columns, table, version), with_row_index)


def _schema(plan: list[_Column], with_row_index: bool) -> pa.Schema:
    fields = [c.arrow for c in plan]
    if with_row_index:
        fields.append(pa.field(ROW_INDEX_COLUMN, pa.int64(), nullable=False))
    return pa.schema(fields)


def read_logical(table_root: str, add: AddFile, metadata: Metadata, columns=None,
                 with_row_index: bool = False, **options) -> pa.Table:
    """The live rows of one data file as a table of logical columns (see the module's
    docstring; ``options`` as for :func:`iter_logical`)."""
    table = options.get("table") or table_root
    schema = _schema(_plan(metadata, columns, table, options.get("version")), with_row_index)
    return pa.Table.from_batches(
        list(iter_logical(table_root, add, metadata, columns, with_row_index, **options)),
        schema=schema)


def iter_logical(table_root: str, add: AddFile, metadata: Metadata, columns=None,
                 with_row_index: bool = False, *, version: int | None = None,
                 path: str | None = None, deletion_vectors: DeletionVectorReader | None = None,
                 batch_rows: int = BATCH_ROWS, table: str | None = None
                 ) -> Iterator[pa.RecordBatch]:
    """The live rows of the data file ``add`` names, in batches of logical columns.

    ``table_root``: the table's location; ``metadata``: the snapshot's (schema, partition
    columns, column mapping mode); ``version``: the snapshot's, for error messages; ``path``:
    the file's full path when the caller resolved it already (else ``add.path`` under the
    table); ``deletion_vectors``: a reader shared across files (each deletion vector file read
    once); ``table``: the name error messages give the table. Batches the deletion vector
    empties are skipped. A missing file raises :class:`DeltaFileNotFoundError`."""
    log = DeltaLog(table_root)
    table = table or log.name
    plan = _plan(metadata, columns, table, version)
    schema = _schema(plan, with_row_index)
    mode = mapping_mode(metadata)
    full_path = path or log.data_path(add.path)
    parquet = _open(log, full_path, table, version)
    file_fields = list(parquet.schema_arrow)
    wanted: list[str] = []
    sources: list[object] = []     # per output column: its file column's position, or a value
    for column in plan:
        if column.partition:
            text = _partition_text(add, column.field, mode)
            sources.append(("value", partition_value(text, column.field.type)))
            continue
        index = _find(file_fields, column.field, mode)
        if index is None:
            sources.append(("value", None))
        else:
            sources.append(("file", len(wanted)))
            wanted.append(file_fields[index].name)
    num_rows = parquet.metadata.num_rows
    deleted = (deletion_vectors or DeletionVectorReader.of(log)).deleted_mask(
        add.deletion_vector, num_rows)
    offset = 0
    for batch in _batches(parquet, wanted, num_rows, batch_rows):
        n = batch.num_rows
        arrays = []
        for (kind, what), column in zip(sources, plan):
            if kind == "value":
                arrays.append(_constant(what, column.arrow.type, n))
            else:
                arrays.append(_conform(batch.column(what), column.field.type,
                                       column.arrow.type, mode))
        if with_row_index:
            arrays.append(pa.array(np.arange(offset, offset + n, dtype=np.int64)))
        result = pa.RecordBatch.from_arrays(arrays, schema=schema)
        if deleted is not None:
            result = result.filter(pa.array(~deleted[offset:offset + n]))
        offset += n
        if result.num_rows:
            yield result


def _open(log: DeltaLog, path: str, table: str, version) -> pq.ParquetFile:
    try:
        source = path if is_local(path) else pa.BufferReader(log.store.read(path))
        return pq.ParquetFile(source, coerce_int96_timestamp_unit="us")
    except FileNotFoundError as exc:
        at = f", version {version}" if version is not None else ""
        raise DeltaFileNotFoundError(
            f"table {table}{at}: data file {path} does not exist; it was removed (VACUUM) or "
            "lost: restore it, or RESTORE the table to a version that does not need it",
            table=table, version=version) from exc


def _partition_text(add: AddFile, field: Field, mode: str) -> str | None:
    """The file's ``partitionValues`` string of a partition column (keys are physical names
    under column mapping; matched case-insensitively)."""
    key = physical_name(field.name, field.metadata) if mode != "none" else field.name
    values = add.partition_values or {}
    if key in values:
        return values[key]
    return next((v for k, v in values.items() if k.lower() == key.lower()), None)


def _constant(value, dtype: pa.DataType, n: int) -> pa.Array:
    if value is None:
        return pa.nulls(n, dtype)
    return pa.repeat(pa.scalar(value, type=dtype), n)


def _batches(parquet: pq.ParquetFile, columns: list[str], num_rows: int, batch_rows: int):
    """The file's rows in batches of ``columns`` (a file read for partition columns alone still
    yields its row count)."""
    if columns:
        yield from parquet.iter_batches(batch_size=batch_rows, columns=columns,
                                        use_threads=False)
        return
    for start in range(0, num_rows, batch_rows):
        yield pa.RecordBatch.from_pydict({"_": pa.nulls(min(batch_rows, num_rows - start))}) \
            .select([])


def _find(fields: list[pa.Field], field: Field, mode: str) -> int | None:
    """The position among a file's (or a struct's) fields of the column a Delta field is stored
    as: by parquet field id in column mapping ``id`` mode, else by physical name, matched
    case-insensitively when unique, as Spark matches."""
    if mode == "id":
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


def _nulls_of(array: pa.Array):
    return array.is_null() if array.null_count else None


def _conform(array, delta_type, target: pa.DataType | None, mode: str) -> pa.Array:
    """A column as read from the file, with logical names and its table type: struct fields
    found by physical name or id, inside lists and maps too; other values cast (type
    widening). ``target`` None (a type with no Arrow form here) keeps the file's type."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if target is None:
        return array
    if pa.types.is_struct(target) and pa.types.is_struct(array.type) \
            and isinstance(delta_type, dict) and delta_type.get("type") == "struct":
        fields = {f.name.lower(): f for f in fields_of(delta_type)}
        stored = list(array.type)
        children = []
        for out in target:
            field = fields.get(out.name.lower())
            index = None if field is None else _find(stored, field, mode)
            children.append(pa.nulls(len(array), out.type) if index is None else
                            _conform(array.field(index), field.type, out.type, mode))
        return pa.StructArray.from_arrays(children, fields=list(target), mask=_nulls_of(array))
    if pa.types.is_list(target) and isinstance(delta_type, dict) \
            and (pa.types.is_list(array.type) or pa.types.is_large_list(array.type)):
        values = _conform(array.values, delta_type.get("elementType"), target.value_type, mode)
        return pa.ListArray.from_arrays(array.offsets.cast(pa.int32()), values, type=target,
                                        mask=_nulls_of(array))
    if pa.types.is_map(target) and pa.types.is_map(array.type) and isinstance(delta_type, dict):
        keys = _conform(array.keys, delta_type.get("keyType"), target.key_type, mode)
        items = _conform(array.items, delta_type.get("valueType"), target.item_type, mode)
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=target,
                                       mask=_nulls_of(array))
    return array if array.type == target else array.cast(target)

