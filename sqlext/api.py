"""sqlext's public Python API: ``write``, ``read``, ``changes`` and ``sql`` on a SparkSession."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from sqlext import names
from sqlext.engine import read as table_reads
from sqlext.engine.changes import read as change_feed


def write(df: DataFrame, table: str, mode: str = "append", partitionBy=None, replaceWhere=None,
          mergeSchema: bool | None = None, overwriteSchema: bool = False, configuration=None,
          userMetadata=None, txnAppId=None, txnVersion=None, **options) -> int:
    """Write a DataFrame to a Delta table in one commit and return the new version.

    ``table`` is a path or URI, ``delta.`/path```, or a table name (managed under the warehouse).
    Modes: ``append`` (creates the table when missing), ``overwrite``, ``error``/``errorifexists``,
    ``ignore``. ``partitionBy`` sets the partition columns of a new table; ``replaceWhere`` (with
    ``overwrite``) replaces only the rows matching a predicate and refuses data outside it;
    ``mergeSchema`` adds new columns (not given: the session's
    ``spark.databricks.delta.schema.autoMerge.enabled``, as in delta-spark); ``overwriteSchema`` (with ``overwrite``) replaces schema and
    partitioning; ``configuration`` sets table properties (new tables get
    ``delta.enableChangeDataFeed=true`` unless it says otherwise); ``userMetadata`` is recorded in
    the commit; ``txnAppId``/``txnVersion`` make the write idempotent (a version already committed
    for that application id is skipped). ``partitionOverwriteMode="dynamic"`` overwrites only the
    partitions present in the data.
    """
    return names.write(df.sparkSession, df, table, mode, partitionBy, replaceWhere,
                       mergeSchema, overwriteSchema, configuration, userMetadata,
                       txnAppId, txnVersion, **options)


def read(spark: SparkSession, table: str, versionAsOf: int | None = None, timestampAsOf=None,
         filter: str | None = None) -> DataFrame:  # noqa: A002 - delta-spark's option name
    """Read a Delta table (latest, ``versionAsOf`` or ``timestampAsOf``) as a DataFrame.

    ``filter`` is a SQL condition: files that cannot hold matching rows are skipped using their
    partition values and min/max statistics, and the condition is applied to the rows.
    """
    return table_reads.read(spark, names.resolve(spark, table), versionAsOf, timestampAsOf,
                            filter)


def changes(spark: SparkSession, table: str, startingVersion=None, endingVersion=None,
            startingTimestamp=None, endingTimestamp=None, deduplicationMode: str = "none",
            computeUpdates: bool = False, identifierColumns=None,
            filter: str | None = None) -> DataFrame:  # noqa: A002 - like read's option
    """The table's change feed between two versions or timestamps (inclusive).

    Columns: the table's, ``_change_type``, ``_commit_version``, ``_commit_timestamp``.
    ``deduplicationMode``: ``none``, ``dropCarryovers`` or ``netChanges`` (Spark 4's CHANGES
    clause); ``computeUpdates`` with ``identifierColumns`` pairs deletes and inserts of one key
    into updates; ``filter`` (SQL) prunes files. See :func:`sqlext.engine.changes.read.changes`.
    """
    return change_feed.changes(spark, names.resolve(spark, table), startingVersion,
                               endingVersion, startingTimestamp, endingTimestamp,
                               deduplicationMode, computeUpdates, identifierColumns,
                               filter=filter)
