"""Profile of ``type: sqlext``: dbt-spark's credentials, session method only, no host.

Profile keys: ``schema`` (required), ``warehouse`` (``spark.sql.warehouse.dir`` of a Spark
session the adapter starts; an already running session keeps its own), ``location_root`` (the
default ``location_root`` of models that do not set one), ``server_side_parameters`` (Spark
settings, applied to the connection's session), ``threads``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from dbt.adapters.spark.connections import SparkConnectionMethod, SparkCredentials
from dbt_common.exceptions import DbtRuntimeError

#: dbt-spark forces ANSI mode off for every profile; sqlext keeps the session's own setting
#: unless the profile asks for one.
_SPARK_FORCED = "spark.sql.ansi.enabled"


@dataclass
class SqlextCredentials(SparkCredentials):
    method: SparkConnectionMethod = SparkConnectionMethod.SESSION  # type: ignore[assignment]
    host: Optional[str] = None
    warehouse: Optional[str] = None
    location_root: Optional[str] = None

    def __post_init__(self) -> None:
        if self.method != SparkConnectionMethod.SESSION:
            raise DbtRuntimeError(
                f"type sqlext runs Spark in the dbt process: `method` must be 'session' (or "
                f"omitted), not {self.method!r}")
        asked_ansi = _SPARK_FORCED in (self.server_side_parameters or {})
        self.host = self.host or "localhost"
        super().__post_init__()
        if not asked_ansi:
            self.server_side_parameters.pop(_SPARK_FORCED, None)

    @property
    def type(self) -> str:
        return "sqlext"

    @property
    def unique_field(self) -> str:
        return self.warehouse or self.schema  # type: ignore[return-value]

    def _connection_keys(self) -> Tuple[str, ...]:
        return "schema", "warehouse", "location_root", "server_side_parameters"
