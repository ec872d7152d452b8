"""Helpers for the maintenance tests (commit actions and cross-reader checks are in
``tests.engine.helpers``)."""

from __future__ import annotations

import contextlib

NO_RETENTION_CHECK = {"spark.databricks.delta.retentionDurationCheck.enabled": "false"}


@contextlib.contextmanager
def spark_conf(spark, settings: dict[str, str]):
    """Set Spark SQL settings for a block and restore the previous values (shared session)."""
    previous = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in previous.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)

