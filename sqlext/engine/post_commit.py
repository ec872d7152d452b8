"""What runs after a commit: it must never turn a committed operation into an error.

Once ``N.json`` exists the change is in the table, whatever happens next. Result rows, catalog
registration and other follow-up work that fails is logged (``logging`` logger ``sqlext``, a
warning naming the table and the version) and the caller gets the committed result.
"""

from __future__ import annotations

import logging
from typing import Callable, TypeVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from sqlext.engine.io.scan import local_frame

log = logging.getLogger("sqlext")
R = TypeVar("R")


def after_commit(table: str, version: int | None, what: str, step: Callable[[], R],
                 fallback: Callable[[], R] | None = None) -> R | None:
    """Run ``step``; when it fails, log a warning and return ``fallback()`` (None without one)."""
    try:
        return step()
    except Exception as exc:  # noqa: BLE001 - the commit stands whatever failed after it
        log.warning("table %s: version %s is committed, but %s failed afterwards: %s: %s",
                    table, version, what, type(exc).__name__, exc)
        return fallback() if fallback is not None else None


def result_row(spark: SparkSession, row: tuple | list, schema: T.StructType, *,
               table: str = "", version: int | None = None) -> DataFrame:
    """A one-row result DataFrame (a local relation: collecting it runs no Spark job); when
    building it through Arrow fails, the same row built by ``createDataFrame``."""
    return after_commit(table, version, "building the result row",
                        lambda: local_frame(spark, [tuple(row)], schema),
                        lambda: spark.createDataFrame([tuple(row)], schema))
