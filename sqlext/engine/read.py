"""Reading a table: the snapshot at a version or timestamp, files pruned by a filter."""

from __future__ import annotations

import datetime as _dt

from pyspark.sql import DataFrame, SparkSession

from sqlext.engine.io.scan import scan
from sqlext.engine.session import prepare
from sqlext.engine.conditions import check_condition, spark_condition
from sqlext.errors import AnalysisException, InvalidTimeTravelError, SqlextError
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.pruning import Pruner, parse_predicate
from sqlext.log.schema import parse_timestamp_text
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog
from sqlext.log.table_ref import TableRef


def timestamp_ms(value, spark: SparkSession | None = None, table: str | None = None) -> int:
    """Milliseconds since the epoch for a timestamp given as text, datetime, date or number.

    Text without a zone is read in the session time zone, as Spark reads ``TIMESTAMP AS OF``.
    Text that is no timestamp raises :class:`AnalysisException` (naming ``table`` if given), as
    delta-spark refuses it at analysis.
    """
    try:
        return _timestamp_ms(value, spark, table)
    except ValueError as exc:
        where = f"table {table}: " if table else ""
        raise AnalysisException(
            f"{where}cannot use {value!r} as a timestamp ({exc}); give e.g. '2024-05-01', "
            "'2024-05-01 12:00:00' or '2024-05-01T12:00:00Z'. Nothing was read or changed.",
            table=table) from exc


def _timestamp_ms(value, spark: SparkSession | None, table: str | None = None) -> int:
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        has_zone = text.endswith("Z") or "+" in text[10:] or text[10:].count("-") > 0
        if not has_zone and spark is not None:
            from zoneinfo import ZoneInfo
            tz = spark.conf.get("spark.sql.session.timeZone") or "UTC"
            local = _dt.datetime.fromisoformat(text.replace("T", " "))
            return int(local.replace(tzinfo=ZoneInfo(tz)).timestamp() * 1000)
        value = parse_timestamp_text(text).replace(tzinfo=_dt.timezone.utc)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return int(value.timestamp() * 1000)
    if isinstance(value, _dt.date):
        return int(_dt.datetime(value.year, value.month, value.day,
                                tzinfo=_dt.timezone.utc).timestamp() * 1000)
    raise SqlextError(f"cannot use {value!r} as a timestamp: give text, a datetime or a date",
                      table=table)


def resolve_snapshot(spark: SparkSession, ref: TableRef, versionAsOf=None,
                     timestampAsOf=None) -> tuple[DeltaLog, Snapshot]:
    """The log and the snapshot a read asks for (latest, by version, or by timestamp)."""
    if versionAsOf is not None and timestampAsOf is not None:
        raise InvalidTimeTravelError(f"table {ref.display}: give versionAsOf or timestampAsOf, "
                                     "not both", error_class="DELTA_ONEOF_IN_TIMETRAVEL",
                                     table=ref.display)
    if versionAsOf is not None:
        versionAsOf = _version(versionAsOf, ref.display)
    log = DeltaLog(ref.location, name=ref.display)
    listing = log.listing()
    if timestampAsOf is not None:
        versionAsOf = log.version_at_timestamp(
            timestamp_ms(timestampAsOf, spark, ref.display), listing)
    return log, log.snapshot(versionAsOf, listing=listing)


def _version(value, table: str) -> int:
    """A ``versionAsOf`` as a version number (an int, or text of one, as Spark's options are)."""
    try:
        if not isinstance(value, bool) and int(value) == float(value):
            return int(value)
    except (TypeError, ValueError):
        pass
    raise InvalidTimeTravelError(
        f"table {table}: versionAsOf must be a version number (an integer), not {value!r}",
        table=table, message_parameters={"timeTravelKey": "versionAsOf"})


def read(spark: SparkSession, ref: TableRef, versionAsOf: int | None = None,
         timestampAsOf=None, filter: str | None = None) -> DataFrame:  # noqa: A002 - public name
    """The resolved table ``ref`` as a DataFrame; see :func:`sqlext.read`."""
    prepare(spark)
    log, snapshot = resolve_snapshot(spark, ref, versionAsOf, timestampAsOf)
    files = snapshot.files
    if filter is not None:
        predicate = parse_predicate(filter)
        files = Pruner(predicate, snapshot.schema, snapshot.partition_columns,
                       ColumnMapping.of(snapshot.metadata)).prune(files)
    # a DataFrame of the API is lazy and may be kept: it stays the file scan (inputFiles(),
    # nothing read before it runs); SQL statements read small tables on the driver (plan_read)
    df = scan(spark, log, snapshot, files)
    if filter is not None:
        condition = spark_condition(filter, ref.display)
        check_condition(df, condition, filter, ref.display)
        df = df.filter(condition)
    return df

