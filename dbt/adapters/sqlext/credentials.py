"""Profile of ``type: sqlext``: dbt-spark's credentials, with two methods.

- ``method: session`` (the default): Spark runs in the dbt process (dbt-spark's session method).
- ``method: connect``: a running Spark Connect server (``sqlext-connect-server``) at ``host``
  (default ``localhost``) and ``port`` (default 15002), dbt-spark's own keys for a server as its
  ``thrift`` and ``http`` methods have them; ``use_ssl``, ``token`` and ``user`` go into the
  Connect URL (``sc://host:port/;use_ssl=true;token=...;user_id=...``). No JVM starts in dbt.

Profile keys: ``schema`` (required), ``warehouse`` (``spark.sql.warehouse.dir`` of a Spark
session the adapter starts; an already running session or server keeps its own),
``location_root`` (the default ``location_root`` of models that do not set one),
``server_side_parameters`` (Spark settings, applied to the connection's session), ``threads``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple
from urllib.parse import quote

from dbt.adapters.spark.connections import SparkCredentials
from dbt_common.dataclass_schema import StrEnum
from dbt_common.exceptions import DbtRuntimeError

#: dbt-spark forces ANSI mode off for every profile; sqlext keeps the session's own setting
#: unless the profile asks for one.
_SPARK_FORCED = "spark.sql.ansi.enabled"
#: sqlext-connect-server's (and Spark's) default Connect port; dbt-spark's default is 443
CONNECT_PORT = 15002


class SqlextConnectionMethod(StrEnum):
    SESSION = "session"
    CONNECT = "connect"


@dataclass
class SqlextCredentials(SparkCredentials):
    method: SqlextConnectionMethod = SqlextConnectionMethod.SESSION  # type: ignore[assignment]
    host: Optional[str] = None
    port: Optional[int] = None  # type: ignore[assignment]
    warehouse: Optional[str] = None
    location_root: Optional[str] = None

    def __post_init__(self) -> None:
        asked_ansi = _SPARK_FORCED in (self.server_side_parameters or {})
        if self.method == SqlextConnectionMethod.CONNECT:
            if self.host and "://" in self.host:
                raise DbtRuntimeError(
                    f"sqlext: `host` is a host name ({self.host!r} is a URL): for "
                    f"sc://HOST:PORT give `host: HOST` and `port: PORT`")
            self.port = self.port or CONNECT_PORT
        self.host = self.host or "localhost"
        super().__post_init__()
        if not asked_ansi:
            self.server_side_parameters.pop(_SPARK_FORCED, None)

    @property
    def type(self) -> str:
        return "sqlext"

    @property
    def is_connect(self) -> bool:
        return self.method == SqlextConnectionMethod.CONNECT

    @property
    def connect_url(self) -> str:
        """The Spark Connect URL of ``method: connect``."""
        params = [("use_ssl", "true")] if self.use_ssl else []
        params += [(key, quote(value, safe="")) for key, value in
                   (("token", self.token), ("user_id", self.user)) if value]
        return f"sc://{self.host}:{self.port}/" + "".join(f";{k}={v}" for k, v in params)

    @property
    def unique_field(self) -> str:
        if self.is_connect:
            return f"{self.host}:{self.port}"
        return self.warehouse or self.schema  # type: ignore[return-value]

    def _connection_keys(self) -> Tuple[str, ...]:
        if self.is_connect:
            return "method", "host", "port", "schema", "location_root", "server_side_parameters"
        return "schema", "warehouse", "location_root", "server_side_parameters"
