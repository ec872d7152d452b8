"""sqlext's catalog: table names to locations.

Managed tables live under ``spark.sql.warehouse.dir`` as Spark lays them out: ``<table>`` for the
``default`` schema, ``<schema>.db/<table>`` for the others. Every table created by name is
registered in ``<warehouse>/_sqlext_catalog/<schema>/<table>.json`` (its location, managed or not),
so a name resolves to the same place from any new SparkSession on the same warehouse.
"""

from __future__ import annotations

import json
import os
import re
from pyspark.sql import SparkSession

from sqlext.engine.session import native_sql, session_constant
from sqlext.errors import AnalysisException, TableNotFoundError
from sqlext.log.storage import is_local, normalize_location, store_for
from sqlext.log.table_ref import TableRef

DEFAULT_SCHEMA = "default"
CATALOG_DIR = "_sqlext_catalog"
_SPARK_CATALOGS = ("spark_catalog",)
_VALID_PART = re.compile(r"^[^/\\\x00]+$")


def looks_like_path(identifier: str) -> bool:
    """Whether an identifier is a path or URI rather than a table name.

    A backquoted identifier is always a name (``delta.`/path``` is recognised before this), so
    that ```a/b``` is refused as a name instead of being written as a relative path.
    """
    if "`" in identifier:
        return False
    return ("/" in identifier or "\\" in identifier or "://" in identifier
            or identifier.startswith((".", "~")))


def split_name(identifier: str) -> tuple[str, str]:
    """``[catalog.]schema.table`` or ``table`` -> (schema, table), lower-cased as Spark does.

    Backquoted parts may hold dots. Names that could escape the warehouse (``..``, path
    separators) are refused.
    """
    parts = _split_identifier(identifier)
    if len(parts) == 3 and parts[0].lower() in _SPARK_CATALOGS:
        parts = parts[1:]
    if len(parts) == 1:
        parts = [None, parts[0]]
    if len(parts) != 2:
        raise AnalysisException(f"invalid table name {identifier!r}: expected [schema.]table")
    schema, table = parts
    for part in (p for p in (schema, table) if p is not None):
        if not _VALID_PART.match(part) or part in (".", "..") or part.strip() != part or not part:
            raise AnalysisException(
                f"invalid table name {identifier!r}: a name part may not be empty, '.' or '..', "
                "or contain path separators")
    return (schema or "").lower() or None, table.lower()


def _split_identifier(identifier: str) -> list[str]:
    parts, buf, quoted, i = [], [], False, 0
    while i < len(identifier):
        ch = identifier[i]
        if ch == "`":
            if quoted and i + 1 < len(identifier) and identifier[i + 1] == "`":
                buf.append("`")
                i += 2
                continue
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    if quoted:
        raise AnalysisException(f"invalid table name {identifier!r}: unbalanced backquote")
    parts.append("".join(buf))
    return parts


class Catalog:
    """Name resolution and registration against one SparkSession's warehouse."""

    def __init__(self, spark: SparkSession, warehouse: str | None = None):
        """``warehouse``: another warehouse than the session's ``spark.sql.warehouse.dir``
        (``sqlext-thriftserver`` serves one its Spark session does not manage)."""
        self.spark = spark
        # a static setting: read once per session
        self.warehouse = normalize_location(warehouse) if warehouse is not None else \
            session_constant(spark, "warehouse", lambda: normalize_location(
                spark.conf.get("spark.sql.warehouse.dir")))
        self.store = store_for(self.warehouse)

    def current_schema(self) -> str:
        try:
            return self.spark.catalog.currentDatabase() or DEFAULT_SCHEMA
        except Exception:  # noqa: BLE001
            return DEFAULT_SCHEMA

    # --- locations ----------------------------------------------------------------------------

    def schema_location(self, schema: str) -> str:
        if schema == DEFAULT_SCHEMA:
            return self.warehouse
        return self.store.join(self.warehouse, f"{schema}.db")

    def managed_location(self, schema: str, table: str) -> str:
        if schema == DEFAULT_SCHEMA and (table == CATALOG_DIR or table.endswith(".db")):
            # the default schema's tables sit in the warehouse root, beside the catalog and the
            # other schemas' <schema>.db directories: such a name would write into one of those
            raise AnalysisException(
                f"invalid table name `{table}`: in the default schema it would share its "
                f"directory with sqlext's catalog ({CATALOG_DIR}) or with a schema's directory "
                "(<schema>.db); choose another name")
        return self.store.join(self.schema_location(schema), table)

    def _entry_path(self, schema: str, table: str) -> str:
        return self.store.join(self.warehouse, CATALOG_DIR, schema, f"{table}.json")

    # --- schemas ------------------------------------------------------------------------------

    def schema_exists(self, schema: str) -> bool:
        if schema == DEFAULT_SCHEMA:
            return True
        if self.store.exists(self.store.join(self.warehouse, CATALOG_DIR, schema)):
            return True
        try:
            return bool(self.spark.catalog.databaseExists(schema))
        except Exception:  # noqa: BLE001
            return False

    def create_schema(self, schema: str, if_not_exists: bool = True) -> None:
        """Register a schema (and create Spark's database of the same name for passthrough SQL)."""
        schema, _ = split_name(f"{schema}.x")
        if self.schema_exists(schema) and schema != DEFAULT_SCHEMA:
            if not if_not_exists:
                raise AnalysisException(f"schema `{schema}` already exists")
        self.store.mkdirs(self.store.join(self.warehouse, CATALOG_DIR, schema))
        self.store.mkdirs(self.schema_location(schema))
        try:
            native_sql(self.spark, f"CREATE DATABASE IF NOT EXISTS `{schema.replace('`', '``')}`")
        except Exception:  # noqa: BLE001 - Spark's catalog is optional for sqlext tables
            pass

    def list_schemas(self) -> list[str]:
        root = self.store.join(self.warehouse, CATALOG_DIR)
        try:
            found = {s.name for s in self.store.list_dir(root) if s.is_dir}
        except FileNotFoundError:
            found = set()
        return sorted(found | {DEFAULT_SCHEMA})

    # --- tables -------------------------------------------------------------------------------

    def resolve(self, identifier: str, must_exist: bool = False) -> TableRef:
        """The table an identifier names: a path/URI, ``delta.`/path```, or a table name."""
        identifier = identifier.strip()
        m = re.fullmatch(r"delta\.`(.+)`", identifier, flags=re.IGNORECASE)
        if m:
            return TableRef(normalize_location(m.group(1)))
        if looks_like_path(identifier):
            return TableRef(normalize_location(os.path.expanduser(identifier)
                                               if is_local(identifier) else identifier))
        schema, table = split_name(identifier)
        schema = schema or self.current_schema()
        entry = self.lookup(schema, table)
        if entry is not None:
            return entry
        if must_exist:
            raise TableNotFoundError(f"table or view `{schema}`.`{table}` not found in sqlext's "
                                     f"catalog (warehouse {self.warehouse})")
        return TableRef(self.managed_location(schema, table), schema, table, managed=True)

    def lookup(self, schema: str, table: str) -> TableRef | None:
        """The registered table, or None."""
        try:
            entry = json.loads(self.store.read(self._entry_path(schema, table)))
        except FileNotFoundError:
            return None
        return TableRef(entry["location"], schema, table, bool(entry.get("managed")))

    def ref_for_name(self, schema: str, table: str) -> TableRef:
        """The registered table, else the managed location the name would have."""
        return self.lookup(schema, table) or TableRef(self.managed_location(schema, table),
                                                      schema, table, managed=True)

    def require_schema(self, schema: str | None) -> None:
        """Raise :class:`AnalysisException` when a named table's schema does not exist."""
        if schema and schema != DEFAULT_SCHEMA and not self.schema_exists(schema):
            raise AnalysisException(f"schema `{schema}` not found: create it first "
                                    f"(CREATE SCHEMA {schema})")

    def register(self, ref: TableRef) -> None:
        """Record a named table's location so any later session resolves the name to it."""
        if not ref.name:
            return
        self.require_schema(ref.schema)
        self.store.mkdirs(self.store.join(self.warehouse, CATALOG_DIR, ref.schema))
        self.store.write(self._entry_path(ref.schema, ref.name), json.dumps(
            {"location": ref.location, "managed": ref.managed}).encode())

    def unregister(self, schema: str, table: str) -> None:
        self.store.delete(self._entry_path(schema, table))

    def list_tables(self, schema: str) -> list[str]:
        try:
            entries = self.store.list_dir(self.store.join(self.warehouse, CATALOG_DIR, schema))
        except FileNotFoundError:
            return []
        return sorted(e.name[:-5] for e in entries if e.name.endswith(".json") and not e.is_dir)


def spark_name(*parts: str) -> str:
    """A multi-part name for Spark's catalog API (``spark.catalog.tableExists``), backquoted."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in parts)


def has_delta_log(location: str) -> bool:
    """Whether a location holds a Delta table."""
    if is_local(location):
        return os.path.isdir(os.path.join(location, "_delta_log"))
    store = store_for(location)
    return store.exists(store.join(location, "_delta_log"))

