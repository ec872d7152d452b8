"""Which target files a MERGE has to read: pruning by the ON condition.

Two kinds of conjuncts of the ON condition narrow the target files that can hold a matching row:

- conjuncts on target columns only (``t.day = '2024-01-01'``): a file whose partition values or
  statistics rule them out cannot match (:class:`~sqlext.log.pruning.Pruner`), as delta-spark
  prunes with its "target-only predicates";
- equalities between a target column and a source expression (``t.id = s.id``): one pass over
  the source collects, per equality, the minimum and maximum key, and for the first one whose
  type allows it, the key range of each occupied bucket of a grid of at most 4096 buckets laid
  over the candidates' key range (so a few hundred intervals describe where the source's keys
  are). A file whose key range (statistics, or its partition value) holds no source key cannot
  match; NULL keys match nothing. The same pass counts the source rows (``numSourceRows``).
  A source small enough to broadcast is summarised on the driver from its keys (read from its
  parquet files when it is a plain scan of local ones), a larger one by a Spark aggregation.

The analysis is conservative: anything it does not understand keeps the file.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import math
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.engine.session import conf_bytes
from sqlext.engine.io.plain_parquet import local_parquet_files, read_columns
from sqlext.log.actions import AddFile
from sqlext.log.pruning import FileView, conjuncts
from sqlext.log.snapshot import Snapshot
from sqlext.log.column_mapping import ColumnMapping

BUCKETS = 4096
_EPOCH = _dt.date(1970, 1, 1)
_EPOCH_TS = _dt.datetime(1970, 1, 1)
_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_NON_DETERMINISTIC = (exp.Rand, exp.Randn)


@dataclass
class KeyPair:
    """``target = source`` (or ``target <=> source``) in the ON condition: a target column and
    a source expression."""

    target: str                 # the target column's name, as in the table schema
    source: exp.Expression      # over source columns only
    kind: str | None = None     # "int" | "date" | "timestamp" | "string" once typed
    null_safe: bool = False     # ``<=>``: a NULL source key matches a NULL target key


@dataclass
class OnAnalysis:
    """What the ON condition tells about the target files."""

    target_only: exp.Expression | None = None
    keys: list[KeyPair] = field(default_factory=list)


# --- analysing the ON condition ------------------------------------------------------------------


class _Sides:
    def __init__(self, target_alias, source_alias, target_columns, source_columns):
        self.ta = target_alias.lower() if target_alias else None
        self.sa = source_alias.lower() if source_alias else None
        self.tcols = {c.lower(): c for c in target_columns}
        self.scols = {c.lower() for c in source_columns}

    def side(self, col: exp.Column) -> str | None:
        """"t", "s" or None (unknown: qualified by something else, nested, or ambiguous)."""
        if col.args.get("db") or col.args.get("catalog"):
            return None
        name, qualifier = col.name.lower(), (col.table or "").lower()
        if qualifier:
            if qualifier == self.ta and qualifier != self.sa and name in self.tcols:
                return "t"
            if qualifier == self.sa and qualifier != self.ta and name in self.scols:
                return "s"
            return None
        in_t, in_s = name in self.tcols, name in self.scols
        return "t" if in_t and not in_s else "s" if in_s and not in_t else None

    def only(self, node: exp.Expression, side: str) -> bool:
        if any(node.find_all(exp.Subquery, exp.Select, *_NON_DETERMINISTIC)):
            return False
        cols = list(node.find_all(exp.Column))
        if isinstance(node, exp.Column):
            cols = [node]
        return bool(cols) and all(self.side(c) == side for c in cols)


def analyse_on(on: exp.Expression | None, target_alias: str | None, source_alias: str | None,
               target_columns: list[str], source_columns: list[str]) -> OnAnalysis:
    """Split the ON condition into target-only conjuncts and ``target = source`` key pairs."""
    if on is None:
        return OnAnalysis()
    sides = _Sides(target_alias, source_alias, target_columns, source_columns)
    target_only, keys = [], []
    for c in conjuncts(on):
        if sides.only(c, "t"):
            target_only.append(c)
        elif isinstance(c, (exp.EQ, exp.NullSafeEQ)):
            for left, right in ((c.this, c.expression), (c.expression, c.this)):
                if isinstance(left, exp.Column) and sides.side(left) == "t" \
                        and sides.only(right, "s"):
                    keys.append(KeyPair(sides.tcols[left.name.lower()], right.copy(),
                                        null_safe=isinstance(c, exp.NullSafeEQ)))
                    break
    predicate = None
    for c in target_only:
        predicate = c.copy() if predicate is None else exp.and_(predicate, c.copy())
    return OnAnalysis(predicate, keys)


# --- typed key values ----------------------------------------------------------------------------


def _kind(target: T.DataType, source: T.DataType) -> str | None:
    if isinstance(target, _INTEGRAL) and isinstance(source, _INTEGRAL):
        return "int"
    for kind, typ in (("date", T.DateType), ("timestamp", T.TimestampType),
                      ("string", T.StringType)):
        if isinstance(target, typ) and isinstance(source, typ):
            return kind
    return None


def _number(value, kind: str):
    """A key value in the units the grid works in (ints, days, microseconds, or the string)."""
    if value is None:
        return None
    if kind == "int":
        return int(value)
    if kind == "date":
        if isinstance(value, _dt.datetime):
            value = value.date()
        return (value - _EPOCH).days
    if kind == "timestamp":
        if value.tzinfo is not None:
            value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        delta = value - _EPOCH_TS
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return value


def _spark_number(col: Column, kind: str) -> Column:
    if kind == "int":
        return col.cast("long")
    if kind == "date":
        return F.unix_date(col)
    if kind == "timestamp":
        return F.unix_micros(col)
    return col


def _literal(value, kind: str) -> exp.Expression:
    if kind == "int":
        return exp.Literal.number(value)
    if kind == "date":
        return exp.Literal.string((_EPOCH + _dt.timedelta(days=value)).isoformat())
    if kind == "timestamp":
        ts = _EPOCH_TS + _dt.timedelta(microseconds=value)
        return exp.Literal.string(ts.isoformat(sep=" "))
    return exp.Literal.string(value)


@dataclass
class KeyGrid:
    """Equal-width buckets over the candidate files' range of one numeric key."""

    low: int
    high: int
    width: int

    def spark_bucket(self, num: Column) -> Column:
        # keys below and above the candidates' range get a bucket each; NULL keys one too
        return (F.when(num.isNull(), F.lit(None))
                .when(num < F.lit(self.low), F.lit(-2))
                .when(num > F.lit(self.high), F.lit(BUCKETS + 1))
                .otherwise(F.floor((num - F.lit(self.low)) / F.lit(self.width))))


@dataclass
class KeyStats:
    """The source's keys of one :class:`KeyPair`: min, max and, for the grid key, the sorted
    disjoint intervals (one per occupied bucket) that hold them all."""

    pair: KeyPair
    low: object = None
    high: object = None
    grid: KeyGrid | None = None
    intervals: list[tuple[int, int]] | None = None
    has_null: bool = False      # a source key is NULL

    @property
    def prunes(self) -> bool:
        """Whether the key's range bounds the target rows the source can match: not for a
        ``<=>`` key the source has a NULL for (it matches the target's NULLs, wherever)."""
        return not (self.pair.null_safe and self.has_null)


def _file_range(view: FileView, column: str, kind: str):
    """(low, high) of a file's key column (high None: unbounded), "none" when no row can match
    (NULL partition value, all NULL), or None when unknown."""
    col = column.lower()
    if view.is_partition(col):
        v = _number(view.partition_value(col), kind)
        return "none" if v is None else (v, v)
    if view.all_null(col):
        return "none"
    bounds = view.bounds(col)
    if bounds is None:
        return None
    low, high = bounds
    if low is None:
        return None
    return _number(low, kind), _number(high, kind) if high is not None else None


@dataclass
class SourceSummary:
    """What one pass over the source found: its row count and its keys' ranges."""

    num_rows: int
    keys: list[KeyStats]

    def read_predicate(self) -> exp.Expression | None:
        """``col >= min AND col <= max`` per key (FALSE when the source has no key at all):
        the region of the table whose rows the MERGE could match."""
        predicate = None
        for k in self.keys:
            if not k.prunes:
                continue
            if k.low is None:
                return exp.false()
            col = exp.column(k.pair.target, quoted=True)
            part = exp.and_(exp.GTE(this=col, expression=_literal(k.low, k.pair.kind)),
                            exp.LTE(this=col.copy(), expression=_literal(k.high, k.pair.kind)))
            predicate = part if predicate is None else exp.and_(predicate, part)
        return predicate

    def prune(self, snapshot: Snapshot, files: list[AddFile]) -> list[AddFile]:
        """The files whose key ranges hold a source key for every key pair."""
        if not self.keys:
            return list(files)
        types = {f.name.lower(): f.type for f in snapshot.schema}
        pcols = {c.lower() for c in snapshot.partition_columns}
        mapping = ColumnMapping.of(snapshot.metadata)
        return [f for f in files if self._may_match(FileView(f, types, pcols, mapping))]

    def _may_match(self, view: FileView) -> bool:
        for k in self.keys:
            if not k.prunes:
                continue
            try:
                rng = _file_range(view, k.pair.target, k.pair.kind)
            except (TypeError, ValueError, ArithmeticError):
                continue
            if rng == "none" or k.low is None:
                return False
            if rng is None:
                continue
            low, high = rng
            if low > k.high or (high is not None and high < k.low):
                return False
            if k.intervals is not None:
                # the last interval starting at or before the file's end must reach its start
                i = bisect.bisect_right(k.intervals, (high, math.inf) if high is not None
                                        else (math.inf, math.inf)) - 1
                if i < 0 or k.intervals[i][1] < low:
                    return False
        return True


def key_grid(snapshot: Snapshot, files: list[AddFile], pair: KeyPair) -> KeyGrid | None:
    """Buckets over the files' range of ``pair``'s target key (None: a string key, or no
    usable statistics)."""
    if pair.kind == "string":
        return None
    types = {f.name.lower(): f.type for f in snapshot.schema}
    pcols = {c.lower() for c in snapshot.partition_columns}
    mapping = ColumnMapping.of(snapshot.metadata)
    low = high = None
    for f in files:
        try:
            rng = _file_range(FileView(f, types, pcols, mapping), pair.target, pair.kind)
        except (TypeError, ValueError, ArithmeticError):
            continue
        if rng is None or rng == "none" or rng[1] is None:
            continue
        low = rng[0] if low is None else min(low, rng[0])
        high = rng[1] if high is None else max(high, rng[1])
    if low is None or high - low >= 2 ** 52:
        return None     # beyond 2**52 Spark's double division no longer floors exactly
    return KeyGrid(low, high, max(1, math.ceil((high - low + 1) / BUCKETS)))


def broadcastable(df: DataFrame) -> bool:
    """Whether Spark estimates ``df`` small enough to broadcast
    (``spark.sql.autoBroadcastJoinThreshold``), i.e. to send to the driver."""
    limit = conf_bytes(df.sparkSession, "spark.sql.autoBroadcastJoinThreshold")
    try:
        size = int(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())
    except Exception:  # noqa: BLE001 - no estimate (e.g. Spark Connect): assume large
        return False
    return limit is not None and 0 <= size <= limit


def summarize_source(source: DataFrame, snapshot: Snapshot, candidates: list[AddFile],
                     keys: list[KeyPair], target_types: dict[str, T.DataType]) -> SourceSummary:
    """Count the source rows and collect its key ranges (at most one Spark job). Key pairs whose
    types do not allow a safe comparison on the driver are dropped.

    A source Spark estimates small enough to broadcast sends its keys to the driver (as a
    broadcast join would send all of it), where Arrow summarises them; when it is a plain scan of
    local parquet files and its keys are columns of them, the driver reads them from the files
    itself (no Spark job at all). A larger source is grouped by bucket in Spark and at most a few
    thousand small rows come back. All give the same summary."""
    exprs = [F.expr(k.source.sql(dialect="spark")) for k in keys]
    typed: list[tuple[KeyPair, Column]] = []
    if exprs:
        types = source.select(*[e.alias(f"k{i}") for i, e in enumerate(exprs)]).schema
        for k, e, f in zip(keys, exprs, types.fields):
            k.kind = _kind(target_types[k.target.lower()], f.dataType)
            if k.kind is not None:
                typed.append((k, e))
    stats = [KeyStats(k) for k, _ in typed]
    nums = [_spark_number(e, k.kind).alias(f"k{i}") for i, (k, e) in enumerate(typed)]
    grids = ((i, key_grid(snapshot, candidates, k)) for i, (k, _) in enumerate(typed))
    grid_key, grid = next(((i, g) for i, g in grids if g is not None), (None, None))
    if grid_key is not None:
        stats[grid_key].grid = grid
    if nums and broadcastable(source):
        keys = _plain_parquet_keys(source, [k for k, _ in typed])
        if keys is None:
            keys = _local_keys(source.select(*nums))
        if keys is None:
            keys = source.select(*nums).toArrow()
        num_rows = _summarize_on_driver(keys, stats, grid_key)
    else:
        num_rows = _summarize_in_spark(source, nums, stats, grid_key)
    return SourceSummary(num_rows, stats)


def _plain_parquet_keys(source: DataFrame, keys: list[KeyPair]) -> pa.Table | None:
    """The keys (``k<i>``, in the units :func:`_spark_number` gives) read straight from the
    source's parquet files, when the source is a plain scan of local ones and every key is an
    integer or string column of it; else None."""
    if not keys or not all(isinstance(k.source, exp.Column) and k.kind in ("int", "string")
                           for k in keys):
        return None
    files = local_parquet_files(source)
    columns = read_columns(files, [k.source.name for k in keys]) if files else None
    if columns is None:
        return None
    out = []
    for k, column in zip(keys, columns):
        if k.kind == "int" and pa.types.is_integer(column.type):
            out.append(pc.cast(column, pa.int64()))
        elif k.kind == "string" and (pa.types.is_string(column.type)
                                     or pa.types.is_large_string(column.type)):
            out.append(column)
        else:
            return None
    return pa.table(out, names=[f"k{i}" for i in range(len(out))])


#: Arrow types of the key columns :func:`_spark_number` yields
_ARROW_KEY_TYPES = {T.LongType: pa.int64(), T.IntegerType: pa.int32(), T.StringType: pa.string()}


def _local_keys(keys: DataFrame) -> pa.Table | None:
    """The key columns of a source whose rows the plan holds (a ``LocalRelation`` after
    optimization: SQL ``VALUES``, rows from the driver), collected without a Spark job (Spark
    returns a local relation's rows from the driver; ``toArrow`` would run one); else None."""
    try:
        if keys._jdf.queryExecution().optimizedPlan().nodeName() != "LocalRelation":
            return None
    except Exception:  # noqa: BLE001 - no JVM plan (e.g. Spark Connect)
        return None
    fields = keys.schema.fields
    types = [_ARROW_KEY_TYPES.get(type(f.dataType)) for f in fields]
    if any(t is None for t in types):
        return None
    rows = keys.collect()
    return pa.table([pa.array([r[i] for r in rows], type=t) for i, t in enumerate(types)],
                    names=[f.name for f in fields])


def _summarize_in_spark(source: DataFrame, nums: list[Column], stats: list[KeyStats],
                        grid_key: int | None) -> int:
    """Fill ``stats`` from one aggregation of the source (by bucket of the grid key, if any);
    returns the number of source rows."""
    keys = source.select(*nums) if nums else source
    aggs = [F.count(F.lit(1)).alias("n")]
    for i in range(len(nums)):
        aggs += [F.min(f"k{i}").alias(f"lo{i}"), F.max(f"k{i}").alias(f"hi{i}"),
                 F.count(f"k{i}").alias(f"c{i}")]
    if grid_key is None:
        groups = keys.agg(*aggs).collect()
    else:
        bucket = stats[grid_key].grid.spark_bucket(F.col(f"k{grid_key}"))
        groups = keys.groupBy(bucket.alias("b")).agg(*aggs).collect()
        stats[grid_key].intervals = sorted((g[f"lo{grid_key}"], g[f"hi{grid_key}"])
                                           for g in groups if g["b"] is not None)
    for i, s in enumerate(stats):
        lows = [g[f"lo{i}"] for g in groups if g[f"lo{i}"] is not None]
        highs = [g[f"hi{i}"] for g in groups if g[f"hi{i}"] is not None]
        s.low, s.high = (min(lows), max(highs)) if lows else (None, None)
        s.has_null = sum(int(g["n"]) - int(g[f"c{i}"]) for g in groups) > 0
    return sum(int(g["n"]) for g in groups)


def _summarize_on_driver(keys: pa.Table, stats: list[KeyStats], grid_key: int | None) -> int:
    """Fill ``stats`` from the source's key values (column ``k<i>`` per key, NULLs included);
    returns the number of source rows."""
    for i, s in enumerate(stats):
        bounds = pc.min_max(keys.column(f"k{i}")).as_py()
        s.low, s.high = bounds["min"], bounds["max"]
        s.has_null = keys.column(f"k{i}").null_count > 0
    if grid_key is not None:
        s = stats[grid_key]
        values, grid = pc.cast(pc.drop_null(keys.column(f"k{grid_key}")), pa.int64()), s.grid
        bucket = pc.if_else(pc.less(values, grid.low), -2, pc.if_else(
            pc.greater(values, grid.high), BUCKETS + 1,
            pc.divide(pc.subtract(values, grid.low), grid.width)))
        per_bucket = pa.table({"b": bucket, "v": values}).group_by("b").aggregate(
            [("v", "min"), ("v", "max")])
        s.intervals = sorted(zip(per_bucket.column("v_min").to_pylist(),
                                 per_bucket.column("v_max").to_pylist()))
    return keys.num_rows
