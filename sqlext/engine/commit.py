"""The one place a commit is assembled: every command that commits (writes, CREATE / REPLACE,
ALTER, DELETE, UPDATE, MERGE, OPTIMIZE, RESTORE, VACUUM, CLONE, CONVERT) calls :func:`commit`, or
hands :func:`commit_fields` to a kernel function that commits itself.

The ``commitInfo`` of each commit carries ``operation``, ``operationParameters`` and
``operationMetrics`` from the command, and from here:

- ``engineInfo``: ``sqlext/<version> Apache-Spark/<version>``, always;
- ``userMetadata``, when one is set. The first of these wins:

  1. the value the caller passed (:class:`CommitProperties`: ``sqlext.write(...,
     userMetadata=...)``, the ``userMetadata`` write option);
  2. the innermost :func:`commit_metadata_scope` around the call in this thread / task — how the
     dbt adapter tags every commit of a model (its post-hook OPTIMIZE too) with the invocation id
     and the model's unique id without touching settings that other threads share;
  3. the Spark setting ``spark.sqlext.commitInfo.userMetadata`` of the session, or delta-spark's
     ``spark.databricks.delta.commitInfo.userMetadata`` (``SET
     spark.databricks.delta.commitInfo.userMetadata = 'nightly load'`` in SQL).

The kernel transaction (:meth:`sqlext.log.transaction.Transaction.commit`) adds what only it
knows: ``timestamp``, ``readVersion``, ``isolationLevel``, ``isBlindAppend`` and ``txnId``.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pyspark.sql import SparkSession

from sqlext import errors
from sqlext.engine.post_commit import engine_hooks
from sqlext.engine.session import conf_flag
from sqlext.log.actions import Action, SetTransaction
from sqlext.log.operations import Operation
from sqlext.log.transaction import Transaction, now_ms
from sqlext.version import VERSION

#: delta-spark's setting (default true): a WRITE, DELETE, UPDATE or MERGE whose commit would hold
#: nothing but its commitInfo (no file, metadata, protocol or transaction action) makes no commit
SKIP_EMPTY_COMMITS_CONF = "spark.databricks.delta.skipRecordingEmptyCommits"

USER_METADATA_CONF_KEYS = ("spark.sqlext.commitInfo.userMetadata",
                           "spark.databricks.delta.commitInfo.userMetadata")


@dataclass(frozen=True)
class CommitProperties:
    """What a caller adds to a commit besides its actions, operation, parameters and metrics
    (delta-rs ``CommitProperties``): ``user_metadata`` (wins over the scope and the session
    setting, see the module docstring) and ``app_transaction``, an ``(appId, version)`` pair
    recorded as the commit's first action, a ``txn`` (an idempotent write)."""
    user_metadata: str | None = None
    app_transaction: tuple[str, int] | None = None


_scope: contextvars.ContextVar[str | None] = contextvars.ContextVar("sqlext_user_metadata",
                                                                   default=None)


@contextlib.contextmanager
def commit_metadata_scope(text: str | None) -> Iterator[None]:
    """Commits made inside the block (in this thread) carry ``text`` as their userMetadata."""
    token = _scope.set(text)
    try:
        yield
    finally:
        _scope.reset(token)


def user_metadata(spark: SparkSession | None, explicit: str | None = None) -> str | None:
    """The userMetadata a commit should record (see the module docstring for the order)."""
    if explicit is not None:
        return explicit
    scoped = _scope.get()
    if scoped is not None:
        return scoped
    if spark is None:
        return None
    for key in USER_METADATA_CONF_KEYS:
        try:
            value = spark.conf.get(key, None)
        except Exception:  # noqa: BLE001 - a stopped session has no settings to offer
            return None
        if value:
            return value
    return None


def skips_empty_commit(spark: SparkSession, txn: Transaction, actions: list,
                       properties: CommitProperties | None = None) -> bool:
    """Whether a command that commits only if needed (delta-spark's ``commitIfNeeded``: WRITE,
    DELETE, UPDATE, MERGE) makes no commit: ``actions`` is empty, ``txn`` stages no metadata or
    protocol, no application transaction is recorded (``txn``'s or ``properties``'), and
    ``spark.databricks.delta.skipRecordingEmptyCommits`` is not ``false``."""
    if actions or txn.new_metadata is not None or txn.new_protocol is not None \
            or txn.app_transaction is not None \
            or (properties is not None and properties.app_transaction is not None):
        return False
    try:
        value = spark.conf.get(SKIP_EMPTY_COMMITS_CONF, None)
    except Exception:  # noqa: BLE001 - a stopped session: delta-spark's default
        value = None
    return str(value).strip().lower() != "false"


#: delta-spark's session settings making a WRITE, DELETE, UPDATE or MERGE idempotent: its commit
#: records ``txn(appId, version)``, and a command run when the table's log already has this
#: ``appId`` at ``version`` or later commits nothing (the idempotent MERGE in foreachBatch)
TXN_APP_ID_CONF = "spark.databricks.delta.write.txnAppId"
TXN_VERSION_CONF = "spark.databricks.delta.write.txnVersion"
TXN_AUTO_RESET_CONF = "spark.databricks.delta.write.txnVersion.autoReset.enabled"


def _conf(spark: SparkSession, key: str) -> str | None:
    try:
        value = spark.conf.get(key, None)
    except Exception:  # noqa: BLE001 - a stopped session has no settings to offer
        return None
    return None if value is None or str(value).strip() == "" else str(value).strip()


AUTO_MERGE_CONF = "spark.databricks.delta.schema.autoMerge.enabled"


def auto_merge(spark: SparkSession, explicit: bool | None = None) -> bool:
    """Whether a write or MERGE evolves the table's schema: ``explicit`` (a write's
    ``mergeSchema``, a MERGE's WITH SCHEMA EVOLUTION) when given, else delta-spark's session
    setting ``spark.databricks.delta.schema.autoMerge.enabled`` (default false)."""
    if explicit is not None:
        return bool(explicit)
    return conf_flag(spark, AUTO_MERGE_CONF)


def session_transaction(spark: SparkSession) -> tuple[str, int] | None:
    """``(appId, version)`` from the session's ``spark.databricks.delta.write.txnAppId`` and
    ``...txnVersion`` (None when neither is set), read once per command as delta-spark does:
    with ``spark.databricks.delta.write.txnVersion.autoReset.enabled`` the version setting is
    unset once read, so the next command needs a new one. One without the other is refused with
    delta-spark's ``DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS``."""
    app_id, version = _conf(spark, TXN_APP_ID_CONF), _conf(spark, TXN_VERSION_CONF)
    if app_id is None and version is None:
        return None
    if app_id is None or version is None:
        reason = (f"Both {TXN_APP_ID_CONF} and {TXN_VERSION_CONF} must be specified for "
                  "idempotent Delta writes")
        raise errors.IllegalArgumentError(
            "[DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS] Invalid options for idempotent Dataframe "
            f"writes: {reason}", error_class="DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS",
            message_parameters={"reason": reason})
    try:
        number = int(version)
    except ValueError:
        raise errors.IllegalArgumentError(
            f"{TXN_VERSION_CONF} must be a number (the application's transaction version), "
            f"got {version!r}") from None
    if str(_conf(spark, TXN_AUTO_RESET_CONF)).lower() == "true":
        spark.conf.unset(TXN_VERSION_CONF)
    return app_id, number


def begin_idempotent(spark: SparkSession, txn: Transaction) -> bool:
    """For a DELETE, UPDATE or MERGE about to run in ``txn``: False when the session's
    transaction (:func:`session_transaction`) is already in the table's log at its version or a
    later one (the command is then a no-op, as in delta-spark); otherwise True, the pair kept on
    ``txn`` (``app_transaction``) for :func:`commit` to record as a ``txn`` action."""
    pair = session_transaction(spark)
    if pair is None:
        return True
    done = txn.snapshot.txn_version(pair[0]) if txn.snapshot is not None else None
    if done is not None and done >= pair[1]:
        return False
    txn.app_transaction = pair
    return True


def engine_info(spark: SparkSession) -> str:
    """``engineInfo`` for commitInfo: sqlext's version and Spark's."""
    return f"sqlext/{VERSION} Apache-Spark/{spark.version}"


def commit_fields(spark: SparkSession, explicit_user_metadata: str | None = None) -> dict:
    """``engine_info`` and ``user_metadata`` keyword arguments for a kernel function that makes
    its own commits (RESTORE, VACUUM) — the same values :func:`commit` records."""
    return {"engine_info": engine_info(spark),
            "user_metadata": user_metadata(spark, explicit_user_metadata)}


def commit(spark: SparkSession, txn: Transaction, actions: Iterable[Action],
           operation: Operation | str, parameters: dict | None = None,
           metrics: dict | None = None, *,
           properties: CommitProperties = CommitProperties()) -> int:
    """Commit ``actions`` through the kernel transaction ``txn`` with the commitInfo assembled
    as the module docstring says (``properties``: :class:`CommitProperties`); returns the new
    version. ``operation``: an :class:`~sqlext.log.operations.Operation` (``parameters`` None),
    or a name with its ``parameters``, as :meth:`Transaction.commit` takes them. After it, the transaction runs the kernel's post-commit hooks and the engine's
    (:mod:`sqlext.engine.post_commit`: the symlink manifest of a table with
    ``delta.compatibility.symlinkFormatManifest.enabled``)."""
    actions = list(actions)
    if properties.app_transaction is not None:
        app_id, app_version = properties.app_transaction
        actions.insert(0, SetTransaction(app_id, int(app_version), now_ms()))
    pair, txn.app_transaction = txn.app_transaction, None
    if pair is not None and not any(isinstance(a, SetTransaction) for a in actions):
        actions.append(SetTransaction(pair[0], pair[1], now_ms()))
    txn.post_commit.extend(h for h in engine_hooks() if h not in txn.post_commit)
    return txn.commit(actions, operation, parameters, metrics,
                      **commit_fields(spark, properties.user_metadata))
