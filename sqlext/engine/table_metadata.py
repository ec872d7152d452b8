"""A table's ``metaData`` and the ``protocol`` it needs, staged on a transaction.

Every command that creates a table or changes its configuration (writes, CREATE / REPLACE,
SET / UNSET TBLPROPERTIES, ADD COLUMNS, column comments) stages its new metadata here, so the
rule is written once: a new table gets the protocol its configuration needs
(:func:`sqlext.log.protocol.protocol_for_new_table`), an existing table is upgraded only when
its new configuration needs more than its protocol offers (the change feed on a writer-2 table).
"""

from __future__ import annotations

from sqlext.log.actions import Metadata
from sqlext.log.protocol import protocol_for_new_table, upgrade_for_configuration
from sqlext.log.transaction import now_ms

# Tables sqlext creates record their changes unless told otherwise.
DEFAULT_NEW_TABLE_CONFIGURATION = {"delta.enableChangeDataFeed": "true"}

# delta-spark's session defaults of new tables' properties:
# spark.databricks.delta.properties.defaults.<key> gives delta.<key>
SESSION_DEFAULTS_PREFIX = "spark.databricks.delta.properties.defaults."
SESSION_DEFAULT_KEYS = ("enableDeletionVectors", "enableChangeDataFeed", "appendOnly")


def session_defaults() -> dict[str, str]:
    """The table properties the active Spark session sets for new tables
    (``SET spark.databricks.delta.properties.defaults.enableDeletionVectors = true``)."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        return {}
    out = {}
    for key in SESSION_DEFAULT_KEYS:
        value = spark.conf.get(SESSION_DEFAULTS_PREFIX + key, None)
        if value is not None:
            out[f"delta.{key}"] = str(value)
    return out


def new_table_metadata(schema_string: str, partition_columns: list[str],
                       configuration: dict | None, name: str | None = None,
                       description: str | None = None) -> Metadata:
    """The metadata of a new table: sqlext's defaults, then the session's
    (:func:`session_defaults`), overridden by ``configuration``."""
    conf = {**DEFAULT_NEW_TABLE_CONFIGURATION, **session_defaults(),
            **{k: str(v) for k, v in (configuration or {}).items()}}
    return Metadata.new(schema_string, partition_columns, conf, now_ms(), name=name,
                        description=description)


def stage_metadata(txn, metadata: Metadata) -> None:
    """Stage ``metadata`` on ``txn`` with the protocol it needs (see the module docstring)."""
    txn.update_metadata(metadata)
    if txn.snapshot is None:
        txn.update_protocol(protocol_for_new_table(metadata.configuration,
                                                   metadata.schema_string))
        return
    upgraded = upgrade_for_configuration(txn.snapshot.protocol, metadata.configuration,
                                         metadata.schema_string)
    if upgraded is not None:
        txn.update_protocol(upgraded)
