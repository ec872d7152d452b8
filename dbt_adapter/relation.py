"""Relations of ``type: sqlext``: dbt-spark's (``schema.identifier``, backquoted)."""

from __future__ import annotations

from dataclasses import dataclass

from dbt.adapters.spark.relation import SparkRelation


@dataclass(frozen=True, eq=False, repr=False)
class SqlextRelation(SparkRelation):
    """A dbt relation on sqlext; tables sqlext lists carry ``is_delta=True``."""
