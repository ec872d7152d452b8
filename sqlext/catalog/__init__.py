"""sqlext's catalog: what names mean on a warehouse.

- :mod:`sqlext.catalog.registry`: table names -> locations (``<warehouse>/_sqlext_catalog``),
  schemas, and the managed layout under ``spark.sql.warehouse.dir``;
- :mod:`sqlext.catalog.views`: the views sqlext stores (persistent ones beside the registry's
  entries, temporary ones per SparkSession in :data:`TEMPORARY_VIEWS`).

The SQL front, the engine, ``DeltaTable`` and the dbt adapter all resolve and list names here.
"""

from sqlext.catalog.registry import (CATALOG_DIR, DEFAULT_SCHEMA, Catalog, TableRef,
                                     has_delta_log, looks_like_path, spark_name,
                                     split_name)
from sqlext.catalog.views import TEMPORARY_VIEWS, VIEWS_DIR, TemporaryViews, ViewDef, ViewStore

__all__ = ["CATALOG_DIR", "DEFAULT_SCHEMA", "Catalog", "TableRef", "has_delta_log",
           "looks_like_path", "spark_name", "split_name", "TEMPORARY_VIEWS", "VIEWS_DIR",
           "TemporaryViews", "ViewDef", "ViewStore"]
