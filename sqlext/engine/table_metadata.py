"""A table's ``metaData`` and the ``protocol`` it needs, staged on a transaction.

Every command that creates a table or changes its configuration (writes, CREATE / REPLACE,
SET / UNSET TBLPROPERTIES, ADD COLUMNS, column comments) stages its new metadata here, so the
rule is written once: a new table gets the protocol its configuration needs
(:func:`sqlext.log.protocol.protocol_for_new_table`), an existing table is upgraded only when
its new configuration needs more than its protocol offers (the change feed on a writer-2 table).
The protocol properties (``delta.minReaderVersion``, ``delta.minWriterVersion``,
``delta.feature.<name>``) are requests for features, applied to the protocol and never kept in
the configuration (:mod:`sqlext.log.protocol_changes`).
"""

from __future__ import annotations

import dataclasses

from sqlext.log.actions import Metadata, Protocol
from sqlext.log.protocol import protocol_for_new_table, upgrade_for_configuration
from sqlext.log import row_tracking
from sqlext.log.protocol_changes import check_feature_names, merged, split_protocol_properties
from sqlext.log.transaction import now_ms
from sqlext.log.widening_dependents import refuse_evolution_widening

# Tables sqlext creates record their changes unless told otherwise.
DEFAULT_NEW_TABLE_CONFIGURATION = {"delta.enableChangeDataFeed": "true"}

# delta-spark's session defaults of new tables' properties:
# spark.databricks.delta.properties.defaults.<key> gives delta.<key>
SESSION_DEFAULTS_PREFIX = "spark.databricks.delta.properties.defaults."
SESSION_DEFAULT_KEYS = ("enableDeletionVectors", "enableChangeDataFeed", "appendOnly",
                        "enableRowTracking")


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


# the protocol a new table has before its configuration asks for more (delta-spark's default)
_NEW_TABLE_BASE = Protocol(1, 2)


def stage_metadata(txn, metadata: Metadata) -> None:
    """Stage ``metadata`` on ``txn`` with the protocol it needs (see the module docstring)."""
    current = txn.snapshot.protocol if txn.snapshot is not None else None
    if txn.snapshot is not None:
        refuse_evolution_widening(txn.log.name, txn.read_version, txn.snapshot.metadata, metadata)
    conf, requested = split_protocol_properties(txn.log.name, txn.read_version,
                                                metadata.configuration,
                                                current or _NEW_TABLE_BASE)
    if row_tracking.enabled(conf):
        requested |= {row_tracking.FEATURE}
    if requested:
        check_feature_names(txn.log.name, txn.read_version, requested)
    if current is None:
        protocol = protocol_for_new_table(conf, metadata.schema_string)
    else:
        protocol = upgrade_for_configuration(current, conf, metadata.schema_string) or current
    protocol = merged(protocol, requested) or protocol
    if row_tracking.FEATURE in (protocol.writer_features or []):
        names = row_tracking.materialized_column_names(conf)
        if names:
            conf = {**conf, **names}
    txn.update_metadata(dataclasses.replace(metadata, configuration=conf)
                        if conf is not metadata.configuration else metadata)
    if protocol != current:
        txn.update_protocol(protocol)
