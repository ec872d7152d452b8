"""A write's options, checked once: :class:`WriteOptions` (delta-rs
``operations/write/configs.rs``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import SparkSession

from sqlext.engine.commit import CommitProperties, auto_merge, session_transaction
from sqlext.errors import IllegalArgumentError, SqlextError
from sqlext.log.operations import Operation

#: write mode (lowercased) -> its name in ``operationParameters``
SAVE_MODES = {"append": "Append", "overwrite": "Overwrite", "error": "ErrorIfExists",
              "errorifexists": "ErrorIfExists", "default": "ErrorIfExists", "ignore": "Ignore"}


@dataclass(frozen=True)
class WriteOptions:
    """What a write does, as :func:`write_options` checked it.

    ``mode``: a key of :data:`SAVE_MODES`; ``partition_by``: the partition columns asked for
    (None: the table's); ``merge_schema``: resolved against the session's autoMerge setting;
    ``partition_overwrite_mode``: "static"/"dynamic" overriding the session's;
    ``configuration`` and ``description``: table properties and comment of a created or
    replaced table; ``replace_table``: CREATE OR REPLACE TABLE ... AS SELECT; ``operation``: the
    commit's operation when not ``WRITE`` (its parameters follow the write's); ``commit``: what
    the commit records besides (user metadata, application transaction)."""
    mode: str = "append"
    partition_by: tuple[str, ...] | None = None
    replace_where: str | None = None
    merge_schema: bool = False
    overwrite_schema: bool = False
    partition_overwrite_mode: str | None = None
    configuration: dict[str, str] | None = None
    description: str | None = None
    replace_table: bool = False
    operation: Operation | None = None
    commit: CommitProperties = field(default_factory=CommitProperties)

    @property
    def save_mode(self) -> str:
        """The mode as ``operationParameters`` names it (``Append``, ``Overwrite``, ...)."""
        return SAVE_MODES[self.mode]

    @property
    def operation_name(self) -> str:
        """The commit's operation name: ``WRITE`` or :attr:`operation`'s."""
        return self.operation.name if self.operation is not None else "WRITE"

    @property
    def overwrite(self) -> bool:
        return self.mode == "overwrite"


def write_options(spark: SparkSession, mode: str = "append",
                  partition_by: list[str] | str | None = None, replace_where: str | None = None,
                  merge_schema: bool | None = None, overwrite_schema: bool = False,
                  user_metadata: str | None = None, app_id: str | None = None,
                  app_version: int | None = None, **rest) -> WriteOptions:
    """:class:`WriteOptions` from a write's arguments (``rest``: the other fields by name),
    refusing an unknown mode, half an application transaction and ``replace_where`` outside an
    overwrite. Without ``app_id`` and ``app_version``, the session's
    ``spark.databricks.delta.write.txnAppId`` / ``txnVersion`` apply (as delta-spark's)."""
    key = str(mode).lower()
    if key not in SAVE_MODES:
        raise SqlextError(f"unknown write mode {mode!r}: use append, overwrite, error, "
                          "errorifexists or ignore")
    if app_id is None and app_version is None:
        app_id, app_version = session_transaction(spark) or (None, None)
    if (app_id is None) != (app_version is None):
        raise IllegalArgumentError(
            "idempotent writes need both txnAppId and txnVersion",
            error_class="DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS", message_parameters={
                "reason": "Both txnVersion and txnAppId must be specified for idempotent data "
                          "frame writes"})
    if replace_where is not None and key != "overwrite":
        raise SqlextError("replaceWhere is only valid with mode='overwrite'")
    if isinstance(partition_by, str):
        partition_by = [partition_by]
    app = (app_id, app_version) if app_id is not None else None
    return WriteOptions(
        mode=key, partition_by=tuple(partition_by) if partition_by is not None else None,
        replace_where=replace_where, merge_schema=auto_merge(spark, merge_schema),
        overwrite_schema=overwrite_schema,
        commit=CommitProperties(user_metadata=user_metadata, app_transaction=app), **rest)
