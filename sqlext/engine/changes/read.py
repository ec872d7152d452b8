"""Change feed reads: the rows a range of versions inserted, deleted and updated, as one DataFrame.

The log says which files hold the changes (:mod:`sqlext.log.changes_plan`); all of them —
change files and data files of every version — are read by one parquet scan (one per partition
layout when the range repartitions the table), each file's commit version, commit time and (for
data files) change type attached by the file-name join of :func:`sqlext.engine.io.scan.read_files`.
The deduplication modes are windows on top (:mod:`sqlext.engine.changes.dedup`), so a read is one
lazy Spark plan.
"""

from __future__ import annotations

import datetime as _dt
from collections import defaultdict

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine.changes import dedup
from sqlext.log.changes_plan import (CHANGE_TYPE, COMMIT_TIMESTAMP, COMMIT_VERSION, ChangeFile,
                                        ChangePlan, RangeRequest, check_files_present,
                                        plan_changes, resolve_range)
from sqlext.engine.read import timestamp_ms
from sqlext.engine.io.mapped_scan import read_mapped_files
from sqlext.engine.local.read import local_change_frame
from sqlext.engine.io.scan import FileRead, check_shredded_variants_readable, empty_frame
from sqlext.engine.schemas import quote_identifier, spark_schema
from sqlext.engine.session import prepare
from sqlext.engine.conditions import check_condition, spark_condition
from sqlext.errors import ChangeDataFeedError
from sqlext.log.actions import AddFile
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.pruning import Pruner, parse_predicate, referenced_columns
from sqlext.log.schema import parse_schema
from sqlext.log.table import DeltaLog
from sqlext.log.table_ref import TableRef

MODES = {"none": "none", "dropcarryovers": "dropCarryovers", "netchanges": "netChanges"}
_INFERRED_TYPE = "__sqlext_change_type"   # the change type of a data file's rows
CHANGE_FIELDS = [T.StructField(CHANGE_TYPE, T.StringType()),
                 T.StructField(COMMIT_VERSION, T.LongType()),
                 T.StructField(COMMIT_TIMESTAMP, T.TimestampType())]


def changes(spark: SparkSession, ref: TableRef, startingVersion=None, endingVersion=None,
            startingTimestamp=None, endingTimestamp=None, deduplicationMode: str = "none",
            computeUpdates: bool = False, identifierColumns=None,
            filter: str | None = None) -> DataFrame:  # noqa: A002 - the option's public name
    """The change feed of the resolved table ``ref`` between two versions or timestamps
    (inclusive).

    Columns: the table's (schema of the end version; columns added inside the range are NULL for
    older versions), ``_change_type`` (``insert``, ``delete``, ``update_preimage``,
    ``update_postimage``), ``_commit_version`` and ``_commit_timestamp``. A start timestamp
    resolves to the first commit at or after it, an end timestamp to the last commit at or before
    it; without an end, or with one past the latest version, the range ends at the latest version.

    ``deduplicationMode``: ``none`` (the changes as recorded), ``dropCarryovers`` (rows a rewrite
    only copied — an identical delete and insert in one version — are dropped) or ``netChanges``
    (one outcome per row over the whole range; per key with ``identifierColumns``, else per row
    value). ``computeUpdates`` (needs ``identifierColumns``) turns a delete and an insert of one
    key in one version into ``update_preimage``/``update_postimage``. Identifier columns must
    identify one row: a key with two recorded rows on the same side (two deletes, two inserts)
    in one version is an error, found by a Spark job over the key columns before the read is
    returned. ``filter`` is a SQL condition on the result: files that cannot hold matching rows
    are skipped (by partition values and statistics) when that cannot change the
    deduplication's outcome.

    Raises :class:`~sqlext.errors.ChangeDataFeedError` when the range cannot be answered (no start,
    start after the latest version, end before start, the feed not enabled for the whole range,
    a column dropped or retyped inside it, files removed by VACUUM).
    """
    prepare(spark)
    return changes_of(spark, ref, startingVersion, endingVersion, startingTimestamp,
                      endingTimestamp, deduplicationMode, computeUpdates, identifierColumns, filter)


def changes_of(spark: SparkSession, ref: TableRef, startingVersion=None, endingVersion=None,
               startingTimestamp=None, endingTimestamp=None, deduplicationMode: str = "none",
               computeUpdates: bool = False, identifierColumns=None,
               filter: str | None = None) -> DataFrame:  # noqa: A002
    """:func:`changes` for a table already resolved (``DeltaTable.changes``)."""
    log = DeltaLog(ref.location, name=ref.display)
    mode = MODES.get(str(deduplicationMode).lower())
    if mode is None:
        raise ChangeDataFeedError(f"table {ref.display}: deduplicationMode must be one of none, "
                                  f"dropCarryovers, netChanges, not {deduplicationMode!r}",
                                  table=ref.display)
    listing = log.listing()
    log.require_table(listing)
    times = log.commit_timestamps(listing)
    request = RangeRequest(
        startingVersion, endingVersion,
        None if startingTimestamp is None else timestamp_ms(startingTimestamp, spark, log.name),
        None if endingTimestamp is None else timestamp_ms(endingTimestamp, spark, log.name))
    bounds = resolve_range(log, listing, times, request)
    if bounds is None:
        snapshot = log.snapshot(listing=listing)
        return _empty(spark, spark_schema(snapshot.metadata.schema_string))
    plan = plan_changes(log, listing, times, *bounds)
    schema = spark_schema(plan.metadata.schema_string)
    _check_reserved(ref.display, schema)
    keys = _identifier_columns(ref.display, schema, identifierColumns)
    if computeUpdates and not keys:
        raise ChangeDataFeedError(
            f"table {ref.display}: computeUpdates needs identifierColumns, the columns that "
            "identify a row (e.g. identifierColumns=['id']), to pair a delete with an insert",
            table=ref.display)
    if computeUpdates and mode == "none" and plan.inferred_rewrites:
        raise ChangeDataFeedError(
            f"table {ref.display}: version(s) {plan.inferred_rewrites} rewrote files without "
            "change data files, so their changes include rows that were only copied (a delete "
            "and an identical insert); computeUpdates would report those as updates. Use "
            "deduplicationMode='dropCarryovers' or 'netChanges' with computeUpdates",
            table=ref.display, version=plan.inferred_rewrites[0])
    keyed = bool(keys) and (computeUpdates or mode == "netChanges")
    condition, early = None, False
    if filter is not None:
        predicate = parse_predicate(filter)
        refs = referenced_columns(predicate)
        names = {f.name.lower() for f in schema.fields}
        early = refs <= names and (not keyed or refs <= {k.lower() for k in keys})
        if early:
            plan.files = _pruned(plan, predicate)
        condition = spark_condition(filter, ref.display)
    check_files_present(log, plan)
    df = _raw(spark, log, plan, schema)
    if condition is not None:
        check_condition(df, condition, filter, ref.display)
        if early:
            df = df.filter(condition)
    if keyed:   # on the recorded changes: a job that reads the key columns only
        _require_unique_keys(ref.display, df, keys, plan)
    df = _deduplicated(df, [f.name for f in schema.fields], mode, computeUpdates, keys, keyed)
    if condition is not None and not early:
        df = df.filter(condition)
    return df


def _deduplicated(df: DataFrame, columns: list[str], mode: str, updates: bool, keys: list[str],
                  keyed: bool) -> DataFrame:
    """The raw changes after carry-over removal, update pairing and net changes, as asked."""
    if mode == "none" and not updates:
        return df
    # every window below partitions by a superset of these columns: one shuffle serves them all
    df = df.repartition(*dedup.value_keys(df, keys if keyed else columns))
    if mode != "none":
        df = dedup.drop_carryovers(df, columns)
    if updates and mode != "netChanges":   # the net matrix labels updates itself
        df = dedup.compute_updates(df, keys)
    if mode == "netChanges":
        df = (dedup.net_changes_by_key(df, keys, updates) if keys
              else dedup.net_changes_by_value(df, columns))
    return df


def _raw(spark: SparkSession, log: DeltaLog, plan: ChangePlan, schema: T.StructType) -> DataFrame:
    """The recorded changes, change files and data files read by one scan per partition layout
    (normally one): change files hold ``_change_type`` as a column, data files get it from the
    file-name join (data files have no such column, so it reads as NULL there)."""
    if '"variant"' in plan.metadata.schema_string:
        check_shredded_variants_readable(log, log.snapshot(plan.end))
    local = local_change_frame(spark, log, plan, schema, CHANGE_FIELDS)
    if local is not None:
        return local
    mapping = ColumnMapping.of(plan.metadata)
    # partition values are keyed by physical names in a column-mapped table
    names = {(mapping.physical_name(f.name) if mapping else f.name).lower(): f.name
             for f in schema.fields}
    groups: dict[tuple[str, ...], list[FileRead]] = defaultdict(list)
    for f in plan.files:
        layout = tuple(sorted(names[k.lower()] for k in f.partition_values if k.lower() in names))
        when = _dt.datetime.fromtimestamp(f.timestamp / 1000, _dt.timezone.utc)
        groups[layout].append(FileRead(f.path, f.partition_values, (f.change_type, f.version, when),
                                       f.deletion_vector, f.selection))
    stored = T.StructType(schema.fields + CHANGE_FIELDS[:1])
    extras = [T.StructField(_INFERRED_TYPE, T.StringType())] + CHANGE_FIELDS[1:]
    columns = [quote_identifier(f.name) for f in schema.fields] + [
        F.coalesce(F.col(_INFERRED_TYPE), F.col(CHANGE_TYPE)).alias(CHANGE_TYPE),
        COMMIT_VERSION, COMMIT_TIMESTAMP]
    parts = [read_mapped_files(spark, log, stored, list(layout), reads, mapping, extras)
             .select(*columns) for layout, reads in groups.items()]
    if not parts:
        return _empty(spark, schema)
    result = parts[0]
    for part in parts[1:]:
        result = result.unionByName(part)
    return result


def _pruned(plan: ChangePlan, predicate) -> list[ChangeFile]:
    """The plan's files that may hold rows matching ``predicate`` (partition values, stats)."""
    fields = parse_schema(plan.metadata.schema_string)
    mapping = ColumnMapping.of(plan.metadata)
    pruners: dict[tuple[str, ...], Pruner] = {}
    kept = []
    for f in plan.files:
        keys = mapping.logical_partition_values(f.partition_values) if mapping \
            else f.partition_values
        layout = tuple(sorted(k.lower() for k in keys))
        pruner = pruners.get(layout)
        if pruner is None:
            pruner = pruners[layout] = Pruner(predicate, fields, list(layout), mapping)
        if pruner.might_match(AddFile(f.path, f.partition_values, 0, 0, True, f.stats)):
            kept.append(f)
    return kept


def _require_unique_keys(table: str, df: DataFrame, keys: list[str], plan: ChangePlan) -> None:
    hit = dedup.duplicate_key(df, keys)
    if hit is None:
        return
    key = ", ".join(f"{k}={v!r}" for k, v in hit["key"].items())
    raise ChangeDataFeedError(
        f"table {table}: identifier columns {keys} do not identify one row: key ({key}) has "
        f"{hit['count']} '{hit['change_type']}' changes in version {hit['version']} (range "
        f"{plan.start}..{plan.end}). Give identifierColumns that are unique per row, or read "
        "without computeUpdates / netChanges by key", table=table, version=hit["version"])


def _identifier_columns(table: str, schema: T.StructType, given) -> list[str]:
    if given is None:
        return []
    wanted = [given] if isinstance(given, str) else list(given)
    names = {f.name.lower(): f.name for f in schema.fields}
    unknown = [c for c in wanted if not isinstance(c, str) or c.lower() not in names]
    if unknown or not wanted:
        raise ChangeDataFeedError(
            f"table {table}: identifierColumns {wanted!r} must name columns of the table "
            f"({', '.join(names.values())})" + (f"; unknown: {unknown}" if unknown else ""),
            table=table)
    return list(dict.fromkeys(names[c.lower()] for c in wanted))


def _check_reserved(table: str, schema: T.StructType) -> None:
    clash = [f.name for f in schema.fields
             if f.name.lower() in {c.name for c in CHANGE_FIELDS}]
    if clash:
        raise ChangeDataFeedError(f"table {table}: column(s) {clash} clash with the change "
                                  "feed's own columns; rename them to read the change feed",
                                  table=table)


def _empty(spark: SparkSession, schema: T.StructType) -> DataFrame:
    return empty_frame(spark, T.StructType(schema.fields + CHANGE_FIELDS))
