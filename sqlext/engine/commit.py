"""The one place a commit is assembled: every command that commits (writes, CREATE / REPLACE,
ALTER, DELETE, UPDATE, MERGE, OPTIMIZE, RESTORE, VACUUM, CLONE, CONVERT) calls :func:`commit`, or
hands :func:`commit_fields` to a kernel function that commits itself.

The ``commitInfo`` of each commit carries ``operation``, ``operationParameters`` and
``operationMetrics`` from the command, and from here:

- ``engineInfo``: ``sqlext/<version> Apache-Spark/<version>``, always;
- ``userMetadata``, when one is set. The first of these wins:

  1. the value the caller passed (``sqlext.write(..., userMetadata=...)``, the ``userMetadata``
     write option);
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

from pyspark.sql import SparkSession

from sqlext.log.actions import Action
from sqlext.log.manifest import MANIFEST_PROPERTY, generate_symlink_manifest
from sqlext.log.transaction import Transaction
from sqlext.version import VERSION

#: delta-spark's setting (default true): a WRITE, DELETE, UPDATE or MERGE whose commit would hold
#: nothing but its commitInfo (no file, metadata, protocol or transaction action) makes no commit
SKIP_EMPTY_COMMITS_CONF = "spark.databricks.delta.skipRecordingEmptyCommits"

USER_METADATA_CONF_KEYS = ("spark.sqlext.commitInfo.userMetadata",
                           "spark.databricks.delta.commitInfo.userMetadata")

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


def skips_empty_commit(spark: SparkSession, txn: Transaction, actions: list) -> bool:
    """Whether a command that commits only if needed (delta-spark's ``commitIfNeeded``: WRITE,
    DELETE, UPDATE, MERGE) makes no commit: ``actions`` is empty, ``txn`` stages no metadata or
    protocol, and ``spark.databricks.delta.skipRecordingEmptyCommits`` is not ``false``."""
    if actions or txn.new_metadata is not None or txn.new_protocol is not None:
        return False
    try:
        value = spark.conf.get(SKIP_EMPTY_COMMITS_CONF, None)
    except Exception:  # noqa: BLE001 - a stopped session: delta-spark's default
        value = None
    return str(value).strip().lower() != "false"


def engine_info(spark: SparkSession) -> str:
    """``engineInfo`` for commitInfo: sqlext's version and Spark's."""
    return f"sqlext/{VERSION} Apache-Spark/{spark.version}"


def commit_fields(spark: SparkSession, explicit_user_metadata: str | None = None) -> dict:
    """``engine_info`` and ``user_metadata`` keyword arguments for a kernel function that makes
    its own commits (RESTORE, VACUUM) — the same values :func:`commit` records."""
    return {"engine_info": engine_info(spark),
            "user_metadata": user_metadata(spark, explicit_user_metadata)}


def commit(spark: SparkSession, txn: Transaction, actions: Iterable[Action], operation: str,
           parameters: dict | None = None, metrics: dict | None = None, *,
           explicit_user_metadata: str | None = None) -> int:
    """Commit ``actions`` through the kernel transaction ``txn`` with the commitInfo assembled
    as the module docstring says; returns the new version. A table with
    ``delta.compatibility.symlinkFormatManifest.enabled`` gets its symlink manifests regenerated
    after the commit, as delta-spark does (a failure there is logged; the commit stands)."""
    version = txn.commit(actions, operation, parameters, metrics,
                         **commit_fields(spark, explicit_user_metadata))
    metadata = txn.new_metadata or (txn.snapshot.metadata if txn.snapshot else None)
    if metadata is not None and str(metadata.configuration.get(MANIFEST_PROPERTY, "")).lower() \
            == "true":
        from sqlext.engine.post_commit import after_commit
        after_commit(txn.log.name, version, "regenerating the symlink manifest",
                     lambda: generate_symlink_manifest(txn.log, txn.log.snapshot(version)))
    return version
