"""Per-file statistics for ``add`` actions, read from the parquet footer with pyarrow.

``numRecords``, ``minValues``, ``maxValues`` and ``nullCount`` for the first
``delta.dataSkippingNumIndexedCols`` (default 32) leaf columns, as PROTOCOL.md describes:
strings cut to 32 characters (a cut maximum gets a tie-breaker so it still bounds the data),
timestamps truncated to the millisecond for minima and rounded up for maxima.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from decimal import Decimal
from typing import Any

import pyarrow.parquet as pq

from sqlext.log.schema import Field

DEFAULT_NUM_INDEXED_COLS = 32
STRING_PREFIX = 32
_MAX_CHAR = "\U0010ffff"


def _ms_floor(t: _dt.datetime) -> _dt.datetime:
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def _ms_ceil(t: _dt.datetime) -> _dt.datetime:
    floored = _ms_floor(t)
    return floored if floored == t else floored + _dt.timedelta(milliseconds=1)


def _fmt_timestamp(t: _dt.datetime, utc: bool) -> str:
    if t.tzinfo is not None:
        t = t.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}" + ("Z" if utc else "")


def _decimal_bound(d: Decimal, upper: bool) -> float | int:
    if d == d.to_integral_value() and abs(d) < 2**53:
        return int(d)
    f = float(d)
    if upper and Decimal(f) < d:
        f = math.nextafter(f, math.inf)
    if not upper and Decimal(f) > d:
        f = math.nextafter(f, -math.inf)
    return f


def _bound(value: Any, type_name: Any, upper: bool) -> Any:
    """A JSON-ready min (upper=False) or max (upper=True) statistic, or None to leave it out."""
    if value is None:
        return None
    if type_name == "string":
        if not isinstance(value, str):
            return None
        if len(value) <= STRING_PREFIX:
            return value
        return value[:STRING_PREFIX] + _MAX_CHAR if upper else value[:STRING_PREFIX]
    if type_name in ("timestamp", "timestamp_ntz"):
        if not isinstance(value, _dt.datetime):
            return None
        value = _ms_ceil(value) if upper else _ms_floor(value)
        return _fmt_timestamp(value, utc=type_name == "timestamp")
    if type_name == "date":
        return value.isoformat() if isinstance(value, _dt.date) else None
    if isinstance(type_name, str) and type_name.startswith("decimal"):
        return _decimal_bound(Decimal(value), upper) if value is not None else None
    if type_name in ("float", "double"):
        return None if (not isinstance(value, (int, float)) or math.isnan(value)) else float(value)
    if type_name in ("byte", "short", "integer", "long"):
        return int(value)
    return None      # boolean, binary and complex types: no min/max (as delta-spark)


def _leaf_fields(fields: list[Field], prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Field]]:
    out = []
    for f in fields:
        if f.is_struct:
            out.extend(_leaf_fields(f.children(), prefix + (f.name,)))
        else:
            out.append((prefix + (f.name,), f))
    return out


def _set(tree: dict, path: tuple[str, ...], value: Any) -> None:
    for part in path[:-1]:
        tree = tree.setdefault(part, {})
    tree[path[-1]] = value


def stats_from_metadata(metadata: pq.FileMetaData, data_fields: list[Field],
                        num_indexed_cols: int = DEFAULT_NUM_INDEXED_COLS) -> str:
    """The ``stats`` JSON of a parquet file whose columns are ``data_fields``."""
    stats: dict[str, Any] = {"numRecords": metadata.num_rows}
    mins: dict = {}
    maxs: dict = {}
    nulls: dict = {}
    columns = {metadata.schema.column(i).path: i for i in range(metadata.num_columns)}
    leaves = _leaf_fields(data_fields)
    if num_indexed_cols >= 0:
        leaves = leaves[:num_indexed_cols]
    for path, field in leaves:
        idx = columns.get(".".join(path))
        if idx is None:
            _set(nulls, path, metadata.num_rows)   # column absent from the file: all null
            continue
        lo = hi = None
        null_count = 0
        complete = True
        for rg in range(metadata.num_row_groups):
            col = metadata.row_group(rg).column(idx)
            s = col.statistics
            if s is None:
                complete = False
                null_count = None
                break
            if s.has_null_count and null_count is not None:
                null_count += s.null_count
            else:
                null_count = None
            if s.has_min_max:
                try:
                    lo = s.min if lo is None or s.min < lo else lo
                    hi = s.max if hi is None or s.max > hi else hi
                except TypeError:
                    complete = False
            elif metadata.row_group(rg).num_rows != (s.null_count if s.has_null_count else -1):
                complete = False          # values present but no bounds recorded
        if null_count is not None:
            _set(nulls, path, null_count)
        if complete and lo is not None:
            lo_v, hi_v = _bound(lo, field.type, False), _bound(hi, field.type, True)
            if lo_v is not None and hi_v is not None:
                _set(mins, path, lo_v)
                _set(maxs, path, hi_v)
    stats["minValues"] = mins
    stats["maxValues"] = maxs
    stats["nullCount"] = nulls
    return json.dumps(stats, separators=(",", ":"), ensure_ascii=False)


def file_stats(source, data_fields: list[Field],
               num_indexed_cols: int = DEFAULT_NUM_INDEXED_COLS) -> str:
    """The ``stats`` JSON of a parquet file (a path or a readable file object)."""
    return stats_from_metadata(pq.read_metadata(source), data_fields, num_indexed_cols)
