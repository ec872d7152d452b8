"""DROP TABLE, ALTER TABLE (ADD COLUMNS, SET TBLPROPERTIES, RENAME TO), CREATE / DROP SCHEMA and
USE, for sqlext tables and the warehouse's schemas.

``DROP TABLE`` of a managed table deletes its directory; of an external table, only the name.
Schema changes and property changes are one metadata commit each (``ADD COLUMNS``, ``SET
TBLPROPERTIES``), so they take part in conflict detection like any other commit.
"""

from __future__ import annotations

import dataclasses
import json

from pyspark.sql import SparkSession
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.catalog import CATALOG_DIR, DEFAULT_SCHEMA, TableRef, has_delta_log
from sqlext.engine.column_comments import set_column_comment
from sqlext.engine.commit import commit
from sqlext.engine.schemas import spark_schema
from sqlext.engine.storage_bridge import move_file, remove_tree
from sqlext.errors import (AnalysisException, TableAlreadyExistsError, TableNotFoundError,
                           UnsupportedOperationError)
from sqlext.log.protocol import upgrade_for_configuration
from sqlext.log.table import DeltaLog
from sqlext.sql import plan as P
from sqlext.sql.nodes import delta_path, property_map
from sqlext.sql.resolve import Kind, Resolver, label
from sqlext.sql.sqltypes import struct_from_columns

ALTER_SUPPORTED = ("ALTER TABLE t ADD COLUMNS (c type, ...), ALTER TABLE t SET TBLPROPERTIES "
                   "(k = v, ...), ALTER TABLE t RENAME TO u, ALTER TABLE t CHANGE COLUMN c "
                   "COMMENT '...', ALTER TABLE t ALTER COLUMN c COMMENT '...'")


# --- DROP TABLE -------------------------------------------------------------------------------


def plan_drop_table(resolver: Resolver, stmt: exp.Drop) -> P.Plan | None:
    tables = stmt.args.get("tables") or []
    if len(tables) != 1:
        return None
    table = tables[0]
    if delta_path(table) is not None:
        raise UnsupportedOperationError(
            f"DROP TABLE {label(table)}: a path table has no name to drop; DROP TABLE works on "
            "tables registered by name (delete the directory to remove a path table)")
    names = resolver.schema_and_name(table)
    if names is None:
        return None
    schema, name = names
    ref = resolver.catalog.lookup(schema, name)
    if ref is None:
        managed = TableRef(resolver.catalog.managed_location(schema, name), schema, name, True)
        if has_delta_log(managed.location):
            ref = managed
        elif resolver.views.persistent(schema, name) is not None:
            raise AnalysisException(f"DROP TABLE {label(table)}: {schema}.{name} is a view; use "
                                    "DROP VIEW")
        else:
            return None
    spark = resolver.spark
    return P.Plan(lambda: drop_table(spark, resolver, ref))


def drop_table(spark: SparkSession, resolver: Resolver, ref: TableRef) -> None:
    """Forget a named table; delete its data when it is managed."""
    if ref.managed:
        remove_tree(spark, ref.location)
    resolver.catalog.unregister(ref.schema, ref.name)


# --- ALTER TABLE ------------------------------------------------------------------------------


def plan_alter(resolver: Resolver, stmt: exp.Alter) -> P.Plan | None:
    if str(stmt.args.get("kind") or "").upper() != "TABLE":
        return None
    table = stmt.this
    target = resolver.resolve(table)
    if target.kind is Kind.SPARK:
        return None
    text = label(table)
    if target.kind is not Kind.TABLE:
        raise AnalysisException(f"ALTER TABLE {text}: {text} is not a table")
    ref = target.ref
    actions = stmt.args.get("actions") or []
    if len(actions) != 1:
        raise UnsupportedOperationError(f"ALTER TABLE {text}: one action at a time; supported: "
                                        f"{ALTER_SUPPORTED}")
    action = actions[0]
    spark = resolver.spark
    if isinstance(action, (exp.Schema, exp.ColumnDef)):
        columns = action.expressions if isinstance(action, exp.Schema) else [action]
        return P.Plan(lambda: _add_columns(spark, ref, columns))
    if isinstance(action, exp.AlterSet) and action.expressions \
            and isinstance(action.expressions[0], exp.Properties):
        props = property_map(action.expressions[0])
        return P.Plan(lambda: _set_properties(spark, ref, props))
    if isinstance(action, exp.AlterRename):
        return P.Plan(lambda: _rename(resolver, table, ref, action.this))
    if isinstance(action, exp.AlterColumn) and action.args.get("comment") is not None:
        return P.Plan(lambda: _set_comment(spark, ref, action))
    raise UnsupportedOperationError(f"ALTER TABLE {text}: {action.sql(dialect='spark')} is not "
                                    f"supported; supported: {ALTER_SUPPORTED}")


def _add_columns(spark: SparkSession, ref: TableRef, columns: list[exp.Expression]) -> None:
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    current = spark_schema(snapshot.metadata.schema_string)
    added = struct_from_columns(spark, columns, ref.display)
    existing = {f.name.lower() for f in current.fields}
    clash = [f.name for f in added.fields if f.name.lower() in existing]
    if clash:
        raise AnalysisException(f"ALTER TABLE {ref.display} ADD COLUMNS: column(s) {clash} "
                                "already exist")
    required = [f.name for f in added.fields if not f.nullable]
    if required:
        raise AnalysisException(f"ALTER TABLE {ref.display} ADD COLUMNS: new column(s) "
                                f"{required} cannot be NOT NULL (existing rows have no value)")
    schema = T.StructType(current.fields + added.fields)
    txn = log.start_transaction(snapshot)
    txn.update_metadata(dataclasses.replace(snapshot.metadata, schema_string=schema.json()))
    params = {"columns": json.dumps([{"column": f.jsonValue()} for f in added.fields])}
    commit(spark, txn, [], "ADD COLUMNS", params, {})


def _set_comment(spark: SparkSession, ref: TableRef, action: exp.AlterColumn) -> None:
    """``CHANGE [COLUMN] c [c type] COMMENT '...'`` / ``ALTER COLUMN c COMMENT '...'``: only the
    comment may change (a type or name that differs is refused, the table left as it was)."""
    column = action.this.name
    new_name, dtype = action.args.get("rename_to"), action.args.get("dtype")
    statement = f"ALTER TABLE {ref.display} CHANGE COLUMN {column}"
    if new_name is not None and new_name.name.lower() != column.lower():
        raise UnsupportedOperationError(f"{statement}: renaming a column ({column} to "
                                        f"{new_name.name}) is not supported; only its COMMENT "
                                        "can change")
    if dtype is not None:
        wanted = struct_from_columns(spark, [exp.ColumnDef(this=exp.to_identifier(column),
                                                           kind=dtype.copy())], ref.display)
        current = {f.name.lower(): f for f in spark_schema(
            DeltaLog(ref.location, name=ref.display).snapshot().metadata.schema_string).fields}
        field = current.get(column.lower())
        if field is not None and field.dataType != wanted.fields[0].dataType:
            raise UnsupportedOperationError(
                f"{statement}: changing the type ({field.dataType.simpleString()} to "
                f"{wanted.fields[0].dataType.simpleString()}) is not supported; only its "
                "COMMENT can change (rewrite the table with CREATE OR REPLACE TABLE ... AS "
                "SELECT to change a type)")
    set_column_comment(spark, ref, column, action.args["comment"].name)


def _set_properties(spark: SparkSession, ref: TableRef, props: dict[str, str]) -> None:
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    conf = {**snapshot.configuration, **props}
    txn = log.start_transaction(snapshot)
    txn.update_metadata(dataclasses.replace(snapshot.metadata, configuration=conf))
    upgraded = upgrade_for_configuration(snapshot.protocol, conf)
    if upgraded is not None:
        txn.update_protocol(upgraded)
    commit(spark, txn, [], "SET TBLPROPERTIES", {"properties": json.dumps(props)}, {})


def _rename(resolver: Resolver, table: exp.Table, ref: TableRef, new: exp.Table) -> None:
    text = label(table)
    if not ref.name:
        raise UnsupportedOperationError(f"ALTER TABLE {text} RENAME TO: a path table has no name "
                                        "to change")
    names = resolver.schema_and_name(new)
    if names is None:
        raise AnalysisException(f"ALTER TABLE {text} RENAME TO {label(new)}: not a valid name")
    schema = names[0] if new.args.get("db") else ref.schema
    name = names[1]
    if schema != ref.schema:
        raise UnsupportedOperationError(f"ALTER TABLE {text} RENAME TO {label(new)}: a table "
                                        f"cannot move from schema {ref.schema} to {schema}")
    catalog = resolver.catalog
    managed_target = catalog.managed_location(schema, name)
    if catalog.lookup(schema, name) or resolver.views.persistent(schema, name) \
            or has_delta_log(managed_target):
        raise TableAlreadyExistsError(f"ALTER TABLE {text} RENAME TO {label(new)}: "
                                      f"{schema}.{name} already exists")
    if ref.managed:
        move_file(resolver.spark, ref.location, managed_target)
        renamed = TableRef(managed_target, schema, name, managed=True)
    else:
        renamed = TableRef(ref.location, schema, name, managed=False)
    catalog.register(renamed)
    catalog.unregister(ref.schema, ref.name)


# --- schemas ----------------------------------------------------------------------------------


def _schema_name(table: exp.Table) -> str | None:
    if table.args.get("catalog") and table.text("catalog").lower() != "spark_catalog":
        return None
    return (table.text("db") or table.name).lower() or None


def _if_exists_sql(stmt: exp.Expression) -> str:
    """The statement for Spark with IF [NOT] EXISTS (sqlext decides about existence itself)."""
    tree = stmt.copy()
    tree.set("exists", True)
    return tree.sql(dialect="spark")


def plan_create_schema(resolver: Resolver, stmt: exp.Create) -> P.Plan | None:
    name = _schema_name(stmt.this)
    if name is None:
        return None
    spark, catalog = resolver.spark, resolver.catalog
    rendered = _if_exists_sql(stmt)

    def run():
        if catalog.schema_exists(name):
            if stmt.args.get("exists"):
                return None
            raise AnalysisException(f"CREATE SCHEMA: schema `{name}` already exists; use CREATE "
                                    "SCHEMA IF NOT EXISTS")
        P.spark_sql(spark, rendered)
        catalog.create_schema(name, True)
        return None

    return P.Plan(run, rendered)


def plan_drop_schema(resolver: Resolver, stmt: exp.Drop) -> P.Plan | None:
    tables = stmt.args.get("tables") or []
    name = _schema_name(tables[0]) if len(tables) == 1 else None
    if name is None:
        return None
    spark, catalog = resolver.spark, resolver.catalog
    rendered = _if_exists_sql(stmt)

    def run():
        if name == DEFAULT_SCHEMA:
            raise AnalysisException("DROP SCHEMA: the default schema cannot be dropped")
        if not catalog.schema_exists(name):
            if stmt.args.get("exists"):
                return None
            raise AnalysisException(f"DROP SCHEMA: schema `{name}` not found")
        owned = catalog.list_tables(name)
        views = resolver.views.persistent_views(name)
        if (owned or views) and not stmt.args.get("cascade"):
            raise AnalysisException(
                f"DROP SCHEMA: schema `{name}` is not empty (tables {owned + views}); drop them "
                f"first or use DROP SCHEMA {name} CASCADE")
        if spark.catalog.databaseExists(name):
            P.spark_sql(spark, rendered)
        for table in owned:
            ref = catalog.lookup(name, table)
            if ref is not None:
                drop_table(spark, resolver, ref)
        for view in views:
            resolver.views.drop(resolver.views.persistent(name, view))
        remove_tree(spark, catalog.store.join(catalog.warehouse, CATALOG_DIR, name))
        return None

    return P.Plan(run, rendered)


def plan_use(resolver: Resolver, stmt: exp.Use) -> P.Plan | None:
    """USE s: a schema sqlext knows is made known to Spark (a new session's catalog may lack it)."""
    table = stmt.this
    name = _schema_name(table) if isinstance(table, exp.Table) else None
    if name is None:
        return None
    spark, catalog = resolver.spark, resolver.catalog
    sql = stmt.meta.get("sql") or stmt.sql(dialect="spark")

    def run():
        if name in catalog.list_schemas() and not spark.catalog.databaseExists(name):
            catalog.create_schema(name, True)
        return P.spark_sql(spark, sql)

    return P.Plan(run, sql)


def require_table(resolver: Resolver, table: exp.Table, verb: str) -> TableRef:
    """The sqlext table ``table`` names, or raise :class:`TableNotFoundError`."""
    target = resolver.resolve(table)
    if target.kind is not Kind.TABLE:
        raise TableNotFoundError(f"{verb} {label(table)}: {label(table)} is not a sqlext (Delta) "
                                 "table")
    return target.ref
