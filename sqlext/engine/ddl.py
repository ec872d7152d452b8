"""Table definition commands of the engine: create / replace, add columns, set / unset
properties, column comments, drop and rename.

The SQL front (``CREATE TABLE``, ``ALTER TABLE``, ``DROP TABLE``) translates its statements into
these calls, and Python callers reach the same code. Each change of a table's definition is one
metadata commit (version 0 for a new table), so it takes part in conflict detection like any
other commit; a refused change leaves the table as it was.

Column comments: Delta keeps a column's comment in its schema field's metadata under
``"comment"`` (as delta-spark's ``ALTER TABLE ... CHANGE COLUMN`` and ``CREATE TABLE (c INT
COMMENT '...')`` write it), so delta-rs, DuckDB and Spark see it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from sqlext.catalog import Catalog, TableRef, ViewStore, has_delta_log, spark_name
from sqlext.engine.commit import commit
from sqlext.engine.maintenance.convert import require_empty_location
from sqlext.engine.post_commit import after_commit
from sqlext.engine.schemas import same_type, spark_schema
from sqlext.engine.io.storage_bridge import move_file, remove_tree
from sqlext.engine.table_metadata import new_table_metadata, stage_metadata
from sqlext.engine.write import write
from sqlext.errors import (AnalysisException, ConcurrentModificationException,
                           TableAlreadyExistsError, UnsupportedOperationError)
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import now_ms

COMMENT_KEY = "comment"


# --- CREATE / REPLACE -------------------------------------------------------------------------


@dataclasses.dataclass
class TableDefinition:
    """What a CREATE [OR REPLACE] TABLE asks for.

    ``schema`` gives the columns of a table created empty; ``query`` (a DataFrame, or a function
    returning one, called only once the table is known to be written) gives its rows and columns
    instead. ``external`` is true when the caller chose the location (SQL ``LOCATION``): an
    existing table there is then registered under the name rather than refused.
    """

    schema: T.StructType | None = None
    query: DataFrame | Callable[[], DataFrame] | None = None
    partition_by: list[str] = dataclasses.field(default_factory=list)
    properties: dict[str, str] = dataclasses.field(default_factory=dict)
    comment: str | None = None
    external: bool = False


def create_table(spark: SparkSession, ref: TableRef, definition: TableDefinition, *,
                 replace: bool = False, if_not_exists: bool = False,
                 display: str | None = None) -> int | None:
    """Create (or with ``replace``, replace) the table at ``ref``; return the version committed,
    or None when nothing was committed (``if_not_exists`` and the table exists, or an existing
    table registered under a name).

    Replacing commits the next version of the same table (same id, history kept) with the new
    schema, partitioning, data and properties (properties not restated are kept). ``display``
    names the table in messages (default: its name, else its location).
    """
    display = display or ref.display
    catalog = Catalog(spark)
    registered = catalog.lookup(ref.schema, ref.name) if ref.name else None
    if registered is not None and definition.external \
            and registered.location != ref.location and not if_not_exists:
        raise TableAlreadyExistsError(f"table {registered.display} already exists at "
                                      f"{registered.location}")
    target = registered or ref
    if target.name and not catalog.schema_exists(target.schema):
        raise AnalysisException(f"CREATE TABLE {display}: schema `{target.schema}` not found; "
                                f"create it first (CREATE SCHEMA {target.schema})")
    log = DeltaLog(target.location, name=target.display)
    exists = log.exists()
    if exists and if_not_exists:
        return None
    if not exists and target.name and not registered and _spark_has_table(spark, target):
        if if_not_exists:
            return None
        raise TableAlreadyExistsError(f"table {target.display} already exists in Spark's catalog "
                                      "(not a sqlext table); drop it first or use another name")
    if exists and not replace:
        if definition.external and registered is None and definition.query is None:
            _register_existing(catalog, ref, definition, log, display)
            return None
        raise TableAlreadyExistsError(
            f"table {target.display} already exists (version {log.snapshot().version}); use "
            "CREATE TABLE IF NOT EXISTS, CREATE OR REPLACE TABLE, or another name")
    operation = ("CREATE OR REPLACE TABLE" if replace else "CREATE TABLE") + (
        " AS SELECT" if definition.query is not None else "")
    params = {"isManaged": str(bool(target.managed and target.name)).lower(),
              "description": definition.comment,
              "partitionBy": json.dumps(definition.partition_by),
              "properties": json.dumps(definition.properties)}
    try:
        if definition.query is not None:
            query = definition.query
            df = query() if callable(query) else query
            version = write(spark, df, target.display, "overwrite" if exists else "errorifexists",
                            partitionBy=definition.partition_by, overwriteSchema=exists,
                            configuration=definition.properties, operation=operation,
                            operationParameters=params, tableRef=target,
                            description=definition.comment)
        else:
            version = _commit_schema(spark, log, target, definition, operation, params, display)
    except ConcurrentModificationException as exc:
        if not exists:
            raise TableAlreadyExistsError(f"table {target.display} was created by a concurrent "
                                          "writer") from exc
        raise
    if target.name:
        after_commit(target.display, None, "registering the table's name in the catalog",
                     lambda: catalog.register(target))
    return version


def _spark_has_table(spark: SparkSession, ref: TableRef) -> bool:
    try:
        return bool(spark.catalog.tableExists(spark_name(ref.schema, ref.name)))
    except Exception:  # noqa: BLE001 - schema unknown to Spark
        return False


def _partition_columns(definition: TableDefinition, schema: T.StructType,
                       display: str) -> list[str]:
    names = {f.name.lower(): f.name for f in schema.fields}
    missing = [c for c in definition.partition_by if c.lower() not in names]
    if missing:
        raise AnalysisException(f"table {display}: partition column(s) {missing} are not "
                                f"columns of the table ({', '.join(names.values())})")
    if len(definition.partition_by) == len(schema.fields) and schema.fields:
        raise AnalysisException(f"table {display}: cannot partition by every column")
    return [names[c.lower()] for c in definition.partition_by]


def _commit_schema(spark: SparkSession, log: DeltaLog, ref: TableRef, definition: TableDefinition,
                   operation: str, params: dict, display: str) -> int:
    """Commit a table with the definition's schema and no rows: version 0, or a replacing
    version that removes every file."""
    if not definition.schema:
        raise AnalysisException(f"CREATE TABLE {display}: give the columns, e.g. "
                                "(id BIGINT, name STRING), or AS SELECT ...")
    schema = definition.schema
    pcols = _partition_columns(definition, schema, display)
    snapshot = log.snapshot() if log.exists() else None
    if snapshot is None:
        require_empty_location(log)            # never a table over someone's files
    txn = log.start_transaction(snapshot)
    if snapshot is None:
        stage_metadata(txn, new_table_metadata(schema.json(), pcols, definition.properties,
                                               ref.name, definition.comment))
        return commit(spark, txn, [], operation, params, {})
    old = snapshot.metadata
    stage_metadata(txn, dataclasses.replace(
        old, schema_string=schema.json(), partition_columns=pcols,
        configuration={**old.configuration, **definition.properties},
        description=definition.comment))
    txn.read_whole_table()
    ts = now_ms()
    removes = [f.remove(ts) for f in snapshot.files]
    return commit(spark, txn, removes, operation, params, {"numRemovedFiles": len(removes)})


def _register_existing(catalog: Catalog, ref: TableRef, definition: TableDefinition,
                       log: DeltaLog, display: str) -> None:
    """A name for the existing table at an external location (its columns, when given, must
    be the table's)."""
    if definition.schema:
        wanted = definition.schema
        actual = spark_schema(log.snapshot().metadata.schema_string)
        same = len(wanted.fields) == len(actual.fields) and all(
            w.name.lower() == a.name.lower() and same_type(w.dataType, a.dataType)
            for w, a in zip(wanted.fields, actual.fields))
        if not same:
            raise AnalysisException(
                f"CREATE TABLE {display}: the columns given ({wanted.simpleString()}) do not "
                f"match the existing table at {ref.location} ({actual.simpleString()}); "
                "omit the columns to register the table as it is")
    catalog.register(ref)


# --- columns ----------------------------------------------------------------------------------


def add_columns(spark: SparkSession, ref: TableRef, columns: T.StructType) -> int:
    """Append nullable top-level ``columns`` to the table's schema; return the version."""
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    current = spark_schema(snapshot.metadata.schema_string)
    existing = {f.name.lower() for f in current.fields}
    clash = [f.name for f in columns.fields if f.name.lower() in existing]
    if clash:
        raise AnalysisException(f"ALTER TABLE {ref.display} ADD COLUMNS: column(s) {clash} "
                                "already exist")
    required = [f.name for f in columns.fields if not f.nullable]
    if required:
        raise AnalysisException(f"ALTER TABLE {ref.display} ADD COLUMNS: new column(s) "
                                f"{required} cannot be NOT NULL (existing rows have no value)")
    schema = T.StructType(current.fields + columns.fields)
    txn = log.start_transaction(snapshot)
    txn.update_metadata(dataclasses.replace(snapshot.metadata, schema_string=schema.json()))
    params = {"columns": json.dumps([{"column": f.jsonValue()} for f in columns.fields])}
    return commit(spark, txn, [], "ADD COLUMNS", params, {})


def with_column_comment(schema_string: str, column: str, comment: str | None,
                        table: str, case_sensitive: bool = False) -> tuple[str, dict]:
    """``schema_string`` with top-level ``column``'s comment set (None removes it), and the
    changed field (a dict in the schema's JSON form). Raises :class:`AnalysisException` naming
    the table's columns when there is no such column."""
    schema = json.loads(schema_string)
    fields = schema.get("fields") or []
    wanted = column if case_sensitive else column.lower()
    for field in fields:
        if (field["name"] if case_sensitive else field["name"].lower()) == wanted:
            metadata = dict(field.get("metadata") or {})
            if comment is None:
                metadata.pop(COMMENT_KEY, None)
            else:
                metadata[COMMENT_KEY] = comment
            field["metadata"] = metadata
            return json.dumps(schema, separators=(",", ":")), field
    names = ", ".join(f["name"] for f in fields)
    raise AnalysisException(f"ALTER TABLE {table} CHANGE COLUMN {column}: the table has no column "
                            f"{column} (columns: {names}); the table is unchanged")


def set_column_comment(spark: SparkSession, ref: TableRef, column: str, comment: str | None,
                       expected_type: T.DataType | None = None) -> int:
    """Commit ``column``'s new comment (None removes it) as delta-spark's ``CHANGE COLUMN``;
    return the new version. ``expected_type`` (the type restated by ``CHANGE COLUMN c c type
    COMMENT ...``) must be the column's type: only the comment changes."""
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    if expected_type is not None:
        current = {f.name.lower(): f for f in spark_schema(snapshot.metadata.schema_string).fields}
        field = current.get(column.lower())
        if field is not None and field.dataType != expected_type:
            raise UnsupportedOperationError(
                f"ALTER TABLE {ref.display} CHANGE COLUMN {column}: changing the type "
                f"({field.dataType.simpleString()} to {expected_type.simpleString()}) is not "
                "supported; only its COMMENT can change (rewrite the table with CREATE OR "
                "REPLACE TABLE ... AS SELECT to change a type)")
    case_sensitive = spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true"
    schema_string, field = with_column_comment(snapshot.metadata.schema_string, column, comment,
                                               ref.display, case_sensitive)
    txn = log.start_transaction(snapshot)
    txn.update_metadata(dataclasses.replace(snapshot.metadata, schema_string=schema_string))
    params = {"column": json.dumps(field, separators=(",", ":"))}
    return commit(spark, txn, [], "CHANGE COLUMN", params, {})


# --- properties -------------------------------------------------------------------------------


def set_properties(spark: SparkSession, ref: TableRef, properties: dict[str, str]) -> int:
    """Set table properties (upgrading the protocol when one needs it); return the version."""
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    txn = log.start_transaction(snapshot)
    conf = {**snapshot.configuration, **{k: str(v) for k, v in properties.items()}}
    stage_metadata(txn, dataclasses.replace(snapshot.metadata, configuration=conf))
    return commit(spark, txn, [], "SET TBLPROPERTIES", {"properties": json.dumps(properties)},
                  {})


def unset_properties(spark: SparkSession, ref: TableRef, keys: list[str],
                     if_exists: bool = False) -> int:
    """Remove table properties; return the version. A key the table lacks is an error unless
    ``if_exists`` (delta-spark's ``UNSET TBLPROPERTIES IF EXISTS``)."""
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    missing = [k for k in keys if k not in snapshot.configuration]
    if missing and not if_exists:
        raise AnalysisException(f"table {ref.display}: cannot unset propert(ies) {missing} that "
                                f"the table does not have (version {snapshot.version}); the "
                                "table is unchanged (use IF EXISTS to ignore them)")
    conf = {k: v for k, v in snapshot.configuration.items() if k not in keys}
    txn = log.start_transaction(snapshot)
    stage_metadata(txn, dataclasses.replace(snapshot.metadata, configuration=conf))
    return commit(spark, txn, [], "UNSET TBLPROPERTIES",
                  {"properties": json.dumps(keys), "ifExists": str(if_exists).lower()}, {})


# --- names ------------------------------------------------------------------------------------


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
        raise TableAlreadyExistsError(f"{statement}: {ref.schema}.{name} already exists")
    if ref.managed:
        move_file(spark, ref.location, target)
        renamed = TableRef(target, ref.schema, name, managed=True)
    else:
        renamed = TableRef(ref.location, ref.schema, name, managed=False)
    catalog.register(renamed)
    catalog.unregister(ref.schema, ref.name)
    return renamed
