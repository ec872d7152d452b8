"""``delta.pip_utils.configure_spark_with_delta_pip`` on sqlext: no jars to fetch; the session the
builder makes is a sqlext one (:func:`sqlext.install`), and the Delta settings a delta-spark
script gives the same builder (the session extension, the ``spark_catalog`` implementation,
whose classes are in delta-spark's jars) are left out of it."""

from __future__ import annotations

import functools
import logging
from typing import List, Optional

from pyspark.sql import SparkSession

log = logging.getLogger("sqlext")

EXTENSIONS_CONF = "spark.sql.extensions"
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
CATALOG_CONF = "spark.sql.catalog.spark_catalog"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
PACKAGES_CONF = "spark.jars.packages"

#: set on a builder this function configured (a second call changes nothing)
CONFIGURED = "_sqlext_delta_configured"


def configure_spark_with_delta_pip(
    spark_session_builder: SparkSession.Builder,
    extra_packages: Optional[List[str]] = None,
) -> SparkSession.Builder:
    """delta-spark's function, for sqlext: returns ``spark_session_builder``, whose
    ``getOrCreate()`` (and ``create()``) then

    - leave out ``spark.sql.extensions``' ``io.delta.sql.DeltaSparkSessionExtension`` (other
      extensions stay) and a ``spark.sql.catalog.spark_catalog`` of
      ``org.apache.spark.sql.delta.catalog.DeltaCatalog``, set on the builder before or after
      this call (one line at INFO on the ``sqlext`` logger says so): those classes live in
      delta-spark's jars, which sqlext does not use;
    - return the session with :func:`sqlext.install` applied, so ``format("delta")``,
      ``DeltaTable`` and Delta SQL work on it.

    ``extra_packages`` (Maven coordinates) become ``spark.jars.packages``, as delta-spark sets
    them beside its own jar; without them the builder's setting is left as it is. As in
    delta-spark, anything but a ``SparkSession.Builder`` raises ``TypeError``.
    """
    if type(spark_session_builder) is not SparkSession.Builder:
        raise TypeError(
            "This function must be called with a SparkSession builder as the argument. The "
            f"argument found is of type {type(spark_session_builder)}. See the online "
            "documentation for the correct usage of this function.")
    builder = spark_session_builder
    if extra_packages:
        builder.config(PACKAGES_CONF, ",".join(extra_packages))
    if not getattr(builder, CONFIGURED, False):
        for method in ("getOrCreate", "create"):
            original = getattr(builder, method, None)
            if original is not None:
                setattr(builder, method, functools.partial(_sqlext_session, builder, original))
        setattr(builder, CONFIGURED, True)
    return builder


def _sqlext_session(builder: SparkSession.Builder, make) -> SparkSession:
    options = getattr(builder, "_options", None)    # pyspark's Builder keeps its settings here
    if isinstance(options, dict):
        dropped = drop_delta_settings(options)
        if dropped:
            log.info("sqlext: left out %s (classes of delta-spark's jars; sqlext needs none: "
                     "sqlext.install(spark) serves delta-spark's API on this session)",
                     ", ".join(f"{k}={v}" for k, v in dropped.items()))
    spark = make()
    import sqlext
    return sqlext.install(spark)


def drop_delta_settings(options: dict) -> dict:
    """Remove Delta's extension and catalog from ``options`` (a builder's settings, changed in
    place); returns what was removed, ``{key: value}``."""
    dropped = {}
    extensions = options.get(EXTENSIONS_CONF)
    if extensions is not None:
        names = [n.strip() for n in str(extensions).split(",") if n.strip()]
        kept = [n for n in names if n != DELTA_EXTENSION]
        if len(kept) != len(names):
            dropped[EXTENSIONS_CONF] = DELTA_EXTENSION
            if kept:
                options[EXTENSIONS_CONF] = ",".join(kept)
            else:
                del options[EXTENSIONS_CONF]
    if str(options.get(CATALOG_CONF, "")).strip() == DELTA_CATALOG:
        dropped[CATALOG_CONF] = options.pop(CATALOG_CONF)
    return dropped
