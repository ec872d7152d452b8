"""Compare query results from different engines as multisets of rows.

Engines disagree on representation, not on values: DuckDB says ``timestamp[us, tz=Etc/UTC]``
where Spark says ``timestamp[us, tz=UTC]`` and delta-rs a naive ``timestamp[ms]``; widths of
integers and decimals differ; strings come as ``string``, ``large_string`` or ``string_view``;
columns may be dictionary-encoded or in another order. :func:`rows` turns a table into Python
tuples in which all of those compare equal; :func:`assert_same_rows` compares two tables that
way, by column name, ignoring row order.

Normalisation (recursively, inside lists, structs and maps too):
- timestamps -> aware ``datetime`` in UTC with microsecond precision (naive counts as UTC;
  nanoseconds are truncated);
- integers of any width -> ``int``; decimals of any precision/scale -> ``Decimal`` (equal when
  the numbers are equal); string/large_string/string_view -> ``str``; all binaries -> ``bytes``;
- dictionary-encoded -> the values; lists -> tuples; structs -> tuples of ``(name, value)``
  sorted by name; maps -> tuples of ``(key, value)`` sorted by key;
- float NaN -> the string ``"NaN"`` so that NaN rows match each other.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat

MAX_SHOWN = 20
_UTC = dt.timezone.utc


def to_arrow(data) -> pa.Table:
    """``data`` as a pyarrow table: pyarrow Table/RecordBatch, pyspark DataFrame (``toArrow``),
    pandas DataFrame, or anything exporting the Arrow C stream (arro3, polars, DuckDB)."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if hasattr(data, "toArrow"):  # pyspark.sql.DataFrame (pyspark >= 4)
        return data.toArrow()
    if type(data).__module__.startswith("pandas"):
        return pa.Table.from_pandas(data, preserve_index=False)
    return pa.table(data)


def _value(value, typ: pa.DataType):
    if value is None:
        return None
    if pat.is_dictionary(typ):
        return _value(value, typ.value_type)
    if pat.is_timestamp(typ):
        if hasattr(value, "to_pydatetime"):  # pandas.Timestamp for nanosecond values
            value = value.to_pydatetime(warn=False)
        return value.replace(tzinfo=_UTC) if value.tzinfo is None else value.astimezone(_UTC)
    if pat.is_floating(typ):
        return "NaN" if math.isnan(value) else value
    if pat.is_map(typ):
        pairs = ((_value(k, typ.key_type), _value(v, typ.item_type)) for k, v in value)
        return tuple(sorted(pairs, key=_sort_key))
    if _is_list_like(typ):
        return tuple(_value(v, typ.value_type) for v in value)
    if pat.is_struct(typ):
        return tuple(sorted((f.name, _value(value[f.name], f.type)) for f in typ))
    return value


def _is_list_like(typ: pa.DataType) -> bool:
    checks = (pat.is_list, pat.is_large_list, pat.is_fixed_size_list, pat.is_list_view, pat.is_large_list_view)
    return any(check(typ) for check in checks)


def _column_values(column: pa.ChunkedArray) -> list:
    typ = column.type
    if pat.is_timestamp(typ):  # nanoseconds -> microseconds before Python sees them
        column = pc.cast(column, pa.timestamp("us", "UTC" if typ.tz else None), safe=False)
    return [_value(v, typ) for v in column.to_pylist()]


def _sort_key(value):
    """Total order over normalised values: None first, then by kind, then by value."""
    if value is None:
        return (0,)
    if isinstance(value, tuple):
        return (1, tuple(_sort_key(v) for v in value))
    if isinstance(value, (bool, int, float, Decimal)):
        return (2, "number", value)
    if isinstance(value, (str, bytes, dt.datetime, dt.date, dt.time, dt.timedelta)):
        return (2, type(value).__name__, value)
    return (3, type(value).__name__, repr(value))


def rows(data, columns: Sequence[str] | None = None, sort_by: Sequence[str] | None = None) -> list[tuple]:
    """Normalised rows of ``data`` as tuples of ``columns`` (default: all, in table order),
    sorted by ``sort_by`` columns first (default: all columns in order)."""
    table = to_arrow(data)
    columns = list(columns) if columns is not None else table.column_names
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise KeyError(f"columns {missing} not in {table.column_names}")
    values = [_column_values(table.column(c)) for c in columns]
    result = list(zip(*values)) if values else [() for _ in range(table.num_rows)]
    return _sorted_rows(result, columns, sort_by)


def _sorted_rows(items, columns: Sequence[str], sort_by: Sequence[str] | None) -> list[tuple]:
    order = [list(columns).index(c) for c in (sort_by or ())] + list(range(len(columns)))
    return sorted(items, key=lambda row: tuple(_sort_key(row[i]) for i in order))


def assert_same_rows(actual, expected, *, columns: Sequence[str] | None = None, sort_by: Sequence[str] | None = None) -> None:
    """Assert ``actual`` and ``expected`` hold the same multiset of rows.

    Both may be anything :func:`to_arrow` accepts. Columns are matched by name (order does not
    matter); ``columns`` restricts the comparison to those (default: all, which then must be the
    same set on both sides). ``sort_by`` only orders the rows shown in the failure message (put
    the key columns there so that a changed row shows up next to its expected version). The
    message lists at most 20 rows only in ``actual`` and 20 only in ``expected``.
    """
    actual_t, expected_t = to_arrow(actual), to_arrow(expected)
    if columns is None:
        if set(actual_t.column_names) != set(expected_t.column_names):
            raise AssertionError(
                f"different columns: actual {actual_t.column_names}, expected {expected_t.column_names}"
            )
        columns = expected_t.column_names
    got, want = Counter(rows(actual_t, columns)), Counter(rows(expected_t, columns))
    if got == want:
        return
    only_actual, only_expected = got - want, want - got
    raise AssertionError(
        f"rows differ: {actual_t.num_rows} actual vs {expected_t.num_rows} expected, columns {list(columns)}\n"
        + _describe("only in actual", only_actual, columns, sort_by)
        + _describe("only in expected", only_expected, columns, sort_by)
    )


def _describe(title: str, counts: Counter, columns: Sequence[str], sort_by) -> str:
    listed = _sorted_rows(counts.elements(), columns, sort_by)
    lines = [f"{title} ({len(listed)} rows):"]
    lines += [f"  {row!r}" for row in listed[:MAX_SHOWN]]
    if len(listed) > MAX_SHOWN:
        lines.append(f"  ... and {len(listed) - MAX_SHOWN} more")
    return "\n".join(lines) + "\n"


def nested_field_names(schema: pa.Schema) -> list:
    """Column names with nested struct field names, to compare schemas across engines whose
    types differ in width or string kind: ``['id', ('s', ['a', 'b'])]``."""
    def names(t: pa.DataType):
        return [(f.name, names(f.type)) if pa.types.is_struct(f.type) else f.name for f in t]
    return names(pa.struct(list(schema)))
