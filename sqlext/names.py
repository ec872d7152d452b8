"""Table names around engine commands: resolve a name before a command, register it after.

Engine commands take a resolved table (:class:`~sqlext.log.table_ref.TableRef`) and never look
at the catalog; the Python API, ``DeltaTable``, the SQL front and the drop-in start from names
and come through here (delta-rs's model: operations take a log store and a snapshot, catalogs
live apart).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from sqlext.catalog import DEFAULT_SCHEMA, Catalog, ViewStore, has_delta_log, spark_name
from sqlext.engine import ddl
from sqlext.engine import write as table_writes
from sqlext.engine.ddl import TableDefinition
from sqlext.engine.io.storage_bridge import move_file, remove_tree
from sqlext.engine.maintenance.clone import CloneSource, shallow_clone
from sqlext.engine.post_commit import after_commit
from sqlext.engine.session import native_table_exists, prepare
from sqlext.errors import AnalysisException, TableAlreadyExistsError, UnsupportedOperationError
from sqlext.log.table import DeltaLog
from sqlext.log.table_ref import TableRef


def resolve(spark: SparkSession, table: str | TableRef) -> TableRef:
    """The table ``table`` names (a path or URI, ``delta.`/path```, or a name); a
    :class:`TableRef` is already resolved."""
    prepare(spark)
    return table if isinstance(table, TableRef) else Catalog(spark).resolve(table)


def write(spark: SparkSession, df: DataFrame, table: str | TableRef, *args,
          table_ref: TableRef | None = None, **options) -> int:
    """:func:`sqlext.engine.write.write` to the table ``table`` names (or to ``table_ref``): a
    new named table's schema must exist before any file is written, and the name is registered
    after the commit that created the table (a managed table's after every commit)."""
    ref = resolve(spark, table_ref or table)
    catalog = Catalog(spark)
    require_schema_of_new_table(catalog, ref)
    version = table_writes.write(spark, df, ref, *args, **options)
    register_written(catalog, ref, version)
    return version


def require_schema_of_new_table(catalog: Catalog, ref: TableRef) -> None:
    """Refuse to create a named table in a schema that does not exist (a table already at the
    location is written whatever its schema)."""
    if ref.name and ref.schema not in (None, DEFAULT_SCHEMA) \
            and not catalog.schema_exists(ref.schema) and not has_delta_log(ref.location):
        catalog.require_schema(ref.schema)


def register_written(catalog: Catalog, ref: TableRef, version: int) -> None:
    """Register a named table after a write committed ``version``: when the write created it
    (version 0), and a managed table always (its entry is the name's only record)."""
    if ref.name and (version == 0 or ref.managed):
        after_commit(ref.display, version, "registering the table's name in the catalog",
                     lambda: catalog.register(ref))


def clone_table(spark: SparkSession, source: CloneSource, target: TableRef,
                replace: bool = False, if_not_exists: bool = False,
                properties: dict[str, str] | None = None,
                explicit_location: bool = False) -> int | None:
    """:func:`~sqlext.engine.maintenance.clone.shallow_clone` into a name or a path: a name
    already registered clones into its table (an ``explicit_location`` elsewhere is an error),
    a new name is registered after the commit; its schema must exist."""
    catalog = Catalog(spark)
    registered = catalog.lookup(target.schema, target.name) if target.name else None
    if registered is not None:
        if explicit_location and registered.location != target.location:
            if if_not_exists:
                return None
            raise TableAlreadyExistsError(f"CLONE {source.label}: table {registered.display} "
                                          f"already exists at {registered.location}")
        target = registered
    if target.name and not catalog.schema_exists(target.schema):
        raise AnalysisException(f"CLONE {source.label} into {target.display}: schema "
                                f"`{target.schema}` not found; create it first (CREATE SCHEMA "
                                f"{target.schema})")
    version = shallow_clone(spark, source, target, replace, if_not_exists, properties)
    if target.name and registered is None:
        catalog.register(target)
    return version


def create_table(spark: SparkSession, ref: TableRef, definition: TableDefinition, *,
                 replace: bool = False, if_not_exists: bool = False,
                 display: str | None = None) -> int | None:
    """:func:`sqlext.engine.ddl.create_table` for a name or a path: a registered name creates
    (or replaces) its table; a name given with an external location that already holds a table
    (and no query) is registered for it, its columns checked; a new name is registered after
    the commit, its schema must exist. Returns the version, or None when nothing was
    committed."""
    display = display or ref.display
    catalog = Catalog(spark)
    registered = catalog.lookup(ref.schema, ref.name) if ref.name else None
    if registered is not None and definition.external \
            and registered.location != ref.location and not if_not_exists:
        raise TableAlreadyExistsError(f"table {registered.display} already exists at "
                                      f"{registered.location}", table=registered.display,
                                      error_class="TABLE_OR_VIEW_ALREADY_EXISTS")
    target = registered or ref
    if target.name and not catalog.schema_exists(target.schema):
        raise AnalysisException(f"CREATE TABLE {display}: schema `{target.schema}` not found; "
                                f"create it first (CREATE SCHEMA {target.schema})")
    exists = DeltaLog(target.location, name=target.display).exists()
    if exists and if_not_exists:
        return None
    if not exists and target.name and not registered and _spark_has_table(spark, target):
        if if_not_exists:
            return None
        raise TableAlreadyExistsError(f"table {target.display} already exists in Spark's catalog "
                                      "(not a sqlext table); drop it first or use another name",
                                      table=target.display,
                                      error_class="TABLE_OR_VIEW_ALREADY_EXISTS")
    if exists and not replace and definition.external and registered is None \
            and definition.query is None:
        ddl.check_existing_columns(spark, ref, definition, display)
        catalog.register(ref)
        return None
    version = ddl.create_table(spark, target, definition, replace=replace,
                               if_not_exists=if_not_exists, display=display)
    if target.name:
        after_commit(target.display, None, "registering the table's name in the catalog",
                     lambda: catalog.register(target))
    return version


def _spark_has_table(spark: SparkSession, ref: TableRef) -> bool:
    try:
        return native_table_exists(spark, spark_name(ref.schema, ref.name))
    except Exception:  # noqa: BLE001 - schema unknown to Spark
        return False


def drop_table(spark: SparkSession, ref: TableRef) -> None:
    """Forget a named table; delete its data when it is managed."""
    if ref.managed:
        remove_tree(spark, ref.location)
    Catalog(spark).unregister(ref.schema, ref.name)


def rename_table(spark: SparkSession, ref: TableRef, name: str) -> TableRef:
    """Give the named table ``ref`` the new ``name`` in its schema (a managed table's directory
    moves with it); return the renamed reference."""
    statement = f"ALTER TABLE {ref.display} RENAME TO {ref.schema}.{name}"
    if not ref.name:
        raise UnsupportedOperationError(f"{statement}: a path table has no name to change")
    catalog = Catalog(spark)
    target = catalog.managed_location(ref.schema, name)
    if catalog.lookup(ref.schema, name) or ViewStore(spark, catalog).persistent(ref.schema, name) \
            or has_delta_log(target):
        raise TableAlreadyExistsError(f"{statement}: {ref.schema}.{name} already exists",
                                      error_class="TABLE_OR_VIEW_ALREADY_EXISTS")
    if ref.managed:
        move_file(spark, ref.location, target)
        renamed = TableRef(target, ref.schema, name, managed=True)
    else:
        renamed = TableRef(ref.location, ref.schema, name, managed=False)
    catalog.register(renamed)
    catalog.unregister(ref.schema, ref.name)
    return renamed
