"""``userMetadata`` for commits that were not given one explicitly.

Every command that commits (writes, DELETE, UPDATE, MERGE, DDL) asks :func:`user_metadata` for the
``userMetadata`` of its commit. The first of these wins:

1. the value the caller passed (``sqlext.write(..., userMetadata=...)``);
2. the innermost :func:`commit_metadata_scope` around the call in this thread / task — how the dbt
   adapter tags every commit of a model with the invocation id and the model's unique id without
   touching settings that other threads share;
3. the Spark setting ``spark.sqlext.commitInfo.userMetadata`` of the session, or delta-spark's
   ``spark.databricks.delta.commitInfo.userMetadata`` (``SET spark.sqlext.commitInfo.userMetadata
   = 'nightly load'`` in SQL).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from pyspark.sql import SparkSession

CONF_KEYS = ("spark.sqlext.commitInfo.userMetadata",
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
    for key in CONF_KEYS:
        try:
            value = spark.conf.get(key, None)
        except Exception:  # noqa: BLE001 - a stopped session has no settings to offer
            return None
        if value:
            return value
    return None
