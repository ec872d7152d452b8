"""The driver path's equi-join of MERGE target rows with source rows on the ON clause's
``target_column = source_expression`` keys, with Spark's equality:

- NULL equals nothing (``=``), or NULL (``<=>``);
- NaN equals NaN, and -0.0 equals 0.0 (Spark normalizes floating keys of a join);
- integers and decimals compare by value whatever their widths and scales (Spark casts both
  sides to a common type that holds both exactly);
- strings compare byte by byte (the default ``UTF8_BINARY`` collation), binary likewise;
- dates and timestamps by their instant (the same type on both sides).

Any other pair of key types (a cast Spark would insert between unlike types: string against a
number, float against double, a collation...) answers None: the caller leaves the MERGE to
the Spark path, which has Spark compare them.
"""

from __future__ import annotations

import math

import pyarrow as pa
from pyspark.sql import types as T

_EXACT = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.DecimalType)
_SAME = (T.BinaryType, T.BooleanType, T.DateType, T.TimestampType, T.TimestampNTZType,
         T.FloatType, T.DoubleType, T.StringType)
#: stands for NaN in a key (NaN is not equal to itself in Python)
_NAN = ("NaN",)


def comparable(target: T.DataType, source: T.DataType) -> bool:
    """Whether keys of these Spark types compare on the driver as Spark compares them."""
    if isinstance(target, _EXACT) and isinstance(source, _EXACT):
        return True
    if isinstance(target, T.StringType) or isinstance(source, T.StringType):
        return (type(target) is type(source)
                and getattr(target, "collation", "UTF8_BINARY") == "UTF8_BINARY"
                and getattr(source, "collation", "UTF8_BINARY") == "UTF8_BINARY")
    return isinstance(target, _SAME) and type(target) is type(source)


def _values(array) -> list:
    """A key column as Python values that compare and hash as Spark's join compares them."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    kind = array.type
    if pa.types.is_timestamp(kind):
        array = array.cast(pa.timestamp("us", tz=kind.tz)).cast(pa.int64())
    elif pa.types.is_date(kind):
        array = array.cast(pa.date32()).cast(pa.int32())
    values = array.to_pylist()
    if pa.types.is_floating(kind):
        # -0.0 == 0.0 and both hash alike already
        values = [_NAN if v is not None and math.isnan(v) else v for v in values]
    return values


def _keys(columns: list, null_safe: list[bool]) -> list[tuple | None]:
    """Each row's key tuple, or None when a key compared with ``=`` is NULL (it matches
    nothing)."""
    out = []
    for key in zip(*[_values(c) for c in columns]):
        out.append(None if any(v is None and not safe for v, safe in zip(key, null_safe))
                   else key)
    return out


def key_pairs(keys, target_schema: T.StructType, target_rows: pa.Table,
              source_types: list[T.DataType], source_keys: pa.Table
              ) -> list[tuple[int, int]] | None:
    """The (target row, source row) pairs whose keys are equal, target rows in order; None when
    a key's types do not compare on the driver (see the module). ``keys``: the ON clause's
    :class:`~sqlext.engine.merge.prune.KeyPair` s; ``source_keys``: their source values, one
    column each, of ``source_types``."""
    types = {f.name.lower(): f.dataType for f in target_schema.fields}
    names = {n.lower(): n for n in target_rows.column_names}
    if not all(comparable(types[k.target.lower()], t) for k, t in zip(keys, source_types)):
        return None
    null_safe = [k.null_safe for k in keys]
    by_key: dict[tuple, list[int]] = {}
    for j, key in enumerate(_keys(source_keys.columns, null_safe)):
        if key is not None:
            by_key.setdefault(key, []).append(j)
    target = _keys([target_rows.column(names[k.target.lower()]) for k in keys], null_safe)
    return [(i, j) for i, key in enumerate(target) if key is not None
            for j in by_key.get(key, ())]
