"""What the dbt adapter knows about a schema's relations, read from sqlext's catalog.

dbt-spark learns a schema's relations, their types and their columns by running ``SHOW TABLE
EXTENDED`` and parsing its ``information`` text. The adapter asks sqlext's catalog instead: the
tables it registers (Delta tables), the views it keeps, and what Spark's own catalog holds in the
schema (tables of other formats, Spark views); a name sqlext knows wins over Spark's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import SparkSession

from sqlext.catalog import Catalog, ViewStore
from sqlext.engine.constraints import check_constraints
from sqlext.engine.schemas import spark_schema
from sqlext.errors import SqlextError
from sqlext.log.table import DeltaLog


@dataclass(frozen=True)
class ListedRelation:
    """One relation of a schema: its name, whether it is a view, whether it is a Delta table."""

    schema: str
    name: str
    is_view: bool
    is_delta: bool


@dataclass(frozen=True)
class TableColumn:
    """A column of a Delta table: name, SQL type (as DESCRIBE shows it) and comment."""

    name: str
    data_type: str
    comment: str | None


@dataclass(frozen=True)
class DeltaTableFacts:
    """A Delta table's columns (top level, in order), its comment and its CHECK constraints
    (``{name: expression}``)."""

    columns: tuple[TableColumn, ...]
    comment: str | None
    checks: dict[str, str] = field(default_factory=dict)


def list_relations(spark: SparkSession, schema: str) -> list[ListedRelation]:
    """The relations of ``schema`` (lower-cased as Spark names it), sorted by name; [] when
    neither sqlext nor Spark knows the schema."""
    catalog = Catalog(spark)
    schema = schema.lower()
    found = {r.name: r for r in _spark_relations(spark, schema)}
    for name in catalog.list_tables(schema):
        ref = catalog.lookup(schema, name)
        if ref is not None and _has_snapshot(ref.location, ref.display):
            found[name] = ListedRelation(schema, name, is_view=False, is_delta=True)
    for name in ViewStore(spark, catalog).persistent_views(schema):
        found[name] = ListedRelation(schema, name, is_view=True, is_delta=False)
    return [found[name] for name in sorted(found)]


def delta_table_facts(spark: SparkSession, schema: str, name: str) -> DeltaTableFacts | None:
    """The columns, comment and constraints of the Delta table sqlext registers as ``schema.name``; None when
    the name is a sqlext view or not a registered table (the caller asks Spark instead).

    Raises :class:`TableNotFoundError` when the registered table's log is gone, and the log's
    own :class:`SqlextError` when it cannot be read.
    """
    catalog = Catalog(spark)
    schema, name = schema.lower(), name.lower()
    if ViewStore(spark, catalog).persistent(schema, name) is not None:
        return None
    ref = catalog.lookup(schema, name)
    if ref is None:
        return None
    metadata = DeltaLog(ref.location, name=ref.display).snapshot().metadata
    columns = tuple(TableColumn(f.name, f.dataType.simpleString(), (f.metadata or {}).get("comment"))
                    for f in spark_schema(metadata.schema_string).fields)
    return DeltaTableFacts(columns, metadata.description or None,
                           check_constraints(metadata.configuration))


def _has_snapshot(location: str, display: str) -> bool:
    try:
        DeltaLog(location, name=display).snapshot()
    except SqlextError:      # a registered table whose log is gone or unreadable is not listed
        return False
    return True


def _spark_relations(spark: SparkSession, schema: str) -> list[ListedRelation]:
    """The non-temporary tables and views Spark's catalog holds in ``schema``."""
    try:
        if not spark.catalog.databaseExists(schema):
            return []
        tables = spark.catalog.listTables(schema)
    except Exception:  # noqa: BLE001 - Spark's catalog is optional beside sqlext's
        return []
    return [ListedRelation(schema, t.name.lower(), is_view=t.tableType == "VIEW", is_delta=False)
            for t in tables if not t.isTemporary]

