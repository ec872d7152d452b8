"""DROP TABLE, ALTER TABLE (ADD COLUMNS, SET TBLPROPERTIES, RENAME TO, column comments, RENAME /
DROP COLUMN (column mapping), ADD / DROP CONSTRAINT, SET / DROP NOT NULL), CREATE / DROP SCHEMA and USE, for sqlext tables and the
warehouse's schemas.

``DROP TABLE`` of a managed table deletes its directory; of an external table, only the name.
Schema changes and property changes are one metadata commit each (``ADD COLUMNS``, ``SET
TBLPROPERTIES``), so they take part in conflict detection like any other commit. This module
translates the statements; :mod:`sqlext.engine.ddl` changes the tables.
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from sqlglot import exp

from sqlext.catalog import CATALOG_DIR, DEFAULT_SCHEMA, TableRef, has_delta_log
from sqlext import names as table_names
from sqlext.engine import ddl
from sqlext.engine.conditions import with_sql_text
from sqlext.engine.io.storage_bridge import remove_tree
from sqlext.engine.type_changes import change_column
from sqlext.errors import (AnalysisException, ParseError, TableNotFoundError,
                           UnsupportedOperationError)
from sqlext.sql import plan as P
from sqlext.sql import splice
from sqlext.sql.nodes import ChangeColumn, SyncIdentity, delta_path, property_map
from sqlext.sql.resolve import Kind, Resolver, label
from sqlext.sql.sqltypes import struct_from_columns

ALTER_SUPPORTED = ("ALTER TABLE t ADD COLUMNS (c type, ...), ALTER TABLE t SET TBLPROPERTIES "
                   "(k = v, ...), ALTER TABLE t RENAME TO u, ALTER TABLE t CHANGE COLUMN c "
                   "COMMENT '...', ALTER TABLE t ALTER COLUMN c COMMENT '...', ALTER TABLE t "
                   "ADD CONSTRAINT name CHECK (expr), ALTER TABLE t DROP CONSTRAINT [IF EXISTS] "
                   "name, ALTER TABLE t ALTER|CHANGE COLUMN c SET|DROP NOT NULL, ALTER TABLE t "
                   "ALTER|CHANGE COLUMN c SYNC IDENTITY, ALTER|CHANGE COLUMN c TYPE t "
                   "(type widening; nested fields too: s.x, a.element, m.key, m.value), "
                   "CHANGE COLUMN s.x x type [COMMENT '...'] [FIRST | AFTER y], and "
                   "with "
                   "delta.columnMapping.mode = 'name': ALTER TABLE t RENAME COLUMN a TO b, "
                   "ALTER TABLE t DROP COLUMN[S] [IF EXISTS] c | (c, d)")
# the arguments of an ALTER COLUMN that only sets or drops NOT NULL
_NULLABILITY_ARGS = {"this", "allow_null", "drop", "exists"}


# --- DROP TABLE -------------------------------------------------------------------------------


def plan_drop_table(resolver: Resolver, stmt: exp.Drop) -> P.Plan | None:
    tables = stmt.args.get("tables") or []
    if len(tables) != 1:
        return None
    table = tables[0]
    if delta_path(table) is not None:
        raise UnsupportedOperationError(
            f"DROP TABLE {label(table)}: a path table has no name to drop; DROP TABLE works on "
            "tables registered by name (delete the directory to remove a path table)",
            table=label(table))
    names = resolver.schema_and_name(table)
    if names is None:
        return None
    schema, name = names
    ref = resolver.catalog.lookup(schema, name)
    if ref is None:
        managed = resolver.catalog.ref_for_name(schema, name)
        if has_delta_log(managed.location):
            ref = managed
        elif resolver.views.persistent(schema, name) is not None:
            raise AnalysisException(f"DROP TABLE {label(table)}: {schema}.{name} is a view; use "
                                    "DROP VIEW", table=label(table))
        else:
            return None
    spark = resolver.spark
    return P.Plan(lambda: table_names.drop_table(spark, ref))


# --- ALTER TABLE ------------------------------------------------------------------------------


def _refuse_hive_change(stmt: exp.Alter) -> None:
    """Refuse, as Spark's parser does (before any table is looked up), a Hive-style ``CHANGE
    COLUMN`` that renames the column or declares it NOT NULL."""
    for action in stmt.args.get("actions") or []:
        if not isinstance(action, exp.AlterColumn) or action.args.get("dtype") is None:
            continue
        new_name = action.args.get("rename_to")
        if new_name is not None and new_name.name.lower() != action.this.name.lower():
            operation, instead = "Renaming column", "RENAME COLUMN"
        elif isinstance(action, ChangeColumn) and action.args.get("allow_null") is False:
            operation, instead = "NOT NULL", "ALTER COLUMN ... SET/DROP NOT NULL"
        else:
            continue
        text = label(stmt.this)
        error = ParseError(
            f"[_LEGACY_ERROR_TEMP_0034] ALTER TABLE {text}: {operation} is not supported in "
            f"Hive-style ALTER COLUMN, please run {instead} instead. Nothing was changed.",
            error_class="_LEGACY_ERROR_TEMP_0034", table=text,
            message_parameters={"operation": operation, "command": "ALTER COLUMN",
                                "msg": f", please run {instead} instead"})
        error.sqlstate = None       # Spark's legacy condition has no SQLSTATE
        raise error


def plan_alter(resolver: Resolver, stmt: exp.Alter) -> P.Plan | None:
    if str(stmt.args.get("kind") or "").upper() != "TABLE":
        return None
    _refuse_hive_change(stmt)
    table = stmt.this
    target = resolver.resolve(table)
    if target.kind is Kind.SPARK:
        return None
    text = label(table)
    if target.kind is not Kind.TABLE:
        raise AnalysisException(f"ALTER TABLE {text}: {text} is not a table", table=text)
    ref = target.ref
    actions = stmt.args.get("actions") or []
    if len(actions) != 1:
        raise UnsupportedOperationError(f"ALTER TABLE {text}: one action at a time; supported: "
                                        f"{ALTER_SUPPORTED}", table=text)
    action = actions[0]
    spark = resolver.spark
    if isinstance(action, (exp.Schema, exp.ColumnDef)):
        columns = action.expressions if isinstance(action, exp.Schema) else [action]
        return _plan(lambda: ddl.add_columns(spark, ref,
                                             struct_from_columns(spark, columns, ref.display)))
    if isinstance(action, exp.AlterSet) and action.expressions \
            and isinstance(action.expressions[0], exp.Properties):
        props = property_map(action.expressions[0])
        return _plan(lambda: ddl.set_properties(spark, ref, props))
    if isinstance(action, exp.AlterRename):
        return _plan(lambda: _rename(resolver, table, ref, action.this))
    if isinstance(action, exp.AlterColumn) and action.args.get("dtype") is not None:
        if stmt.args.get("options"):      # sqlglot takes `TYPE t COMMENT '...'` as a table option
            raise ParseError(f"ALTER TABLE {text} ALTER COLUMN ... TYPE ... COMMENT: syntax error "
                             "at or near 'COMMENT' (Spark's grammar has no such form; use CHANGE "
                             "COLUMN c c type COMMENT '...'). The table is unchanged.", table=text)
        path, dtype = _type_change(spark, ref, action)
        comment = action.args.get("comment")       # CHANGE COLUMN c c BIGINT COMMENT '...'
        return _plan(lambda: change_column(spark, ref, path, dtype,
                                           comment.name if comment else None,
                                           _position(action)))
    if isinstance(action, exp.AlterColumn) and action.args.get("comment") is not None \
            and len(_field_path(action.this, ref)) > 1:       # CHANGE COLUMN s.x COMMENT '...'
        return _plan(lambda: change_column(spark, ref, _field_path(action.this, ref),
                                           comment=action.args["comment"].name))
    if isinstance(action, exp.AlterColumn) and action.args.get("comment") is not None:
        return _plan(lambda: _set_comment(spark, ref, action))
    if isinstance(action, exp.AlterColumn) and action.args.get("allow_null") is not None \
            and all(v is None for k, v in action.args.items() if k not in _NULLABILITY_ARGS):
        not_null = not action.args["allow_null"]
        return _plan(lambda: ddl.set_not_null(spark, ref, _column_name(action.this, ref),
                                              not_null))
    if isinstance(action, SyncIdentity):
        return _plan(lambda: ddl.sync_identity(spark, ref, _column_name(action.this, ref)))
    if isinstance(action, exp.RenameColumn):
        path, new = _field_path(action.this, ref), action.args.get("to")
        return _plan(lambda: ddl.rename_column(spark, ref, path, _field_path(new, ref)[-1]))
    if isinstance(action, exp.Drop) and str(action.args.get("kind") or "").upper() in (
            "COLUMN", "COLUMNS"):
        items = []
        for node in action.args.get("tables") or []:
            items += node.expressions if isinstance(node, exp.Schema) else [node]
        paths = [_field_path(node, ref) for node in items]
        return _plan(lambda: ddl.drop_columns(spark, ref, paths, bool(action.args.get("exists"))))
    if isinstance(action, exp.AddConstraint):
        name, check = _check_constraint(action, ref)
        return _plan(lambda: ddl.add_check_constraint(spark, ref, name, check))
    if isinstance(action, exp.Drop) and str(action.args.get("kind") or "").upper() == "CONSTRAINT":
        names = action.args.get("tables") or []
        if len(names) == 1:
            return _plan(lambda: ddl.drop_check_constraint(spark, ref, names[0].name,
                                                           bool(action.args.get("exists"))))
    raise UnsupportedOperationError(f"ALTER TABLE {text}: {action.sql(dialect='spark')} is not "
                                    f"supported; supported: {ALTER_SUPPORTED}", table=text)


def _plan(change) -> P.Plan:
    """A plan running a table change (the statement returns no rows)."""
    def run():
        change()
        return None
    return P.Plan(run)


def _column_name(node: exp.Expression, ref: TableRef) -> str:
    """The top-level column an ALTER COLUMN names (a nested field is refused)."""
    if isinstance(node, exp.Identifier) or (isinstance(node, exp.Column)
                                            and not node.args.get("table")):
        return node.name
    raise UnsupportedOperationError(f"ALTER TABLE {ref.display} ALTER COLUMN "
                                    f"{node.sql(dialect='spark')}: SET / DROP NOT NULL and SYNC "
                                    "IDENTITY apply to top-level columns only; the table is "
                                    "unchanged", table=ref.display)


def _field_path(node: exp.Expression, ref: TableRef) -> list[str]:
    """The names of a column or nested field reference (``s.a`` -> ``["s", "a"]``)."""
    if isinstance(node, exp.Identifier):
        return [node.name]
    if isinstance(node, (exp.Column, exp.Dot)):
        return [p.name for p in node.parts]
    raise UnsupportedOperationError(f"ALTER TABLE {ref.display}: {node.sql(dialect='spark')} is "
                                    "not a column name; the table is unchanged", table=ref.display)


def _check_constraint(action: exp.AddConstraint, ref: TableRef) -> tuple[str, exp.Expression]:
    """The name and the expression (carrying the user's text) of ``ADD CONSTRAINT name CHECK
    (expr)``; PRIMARY KEY, FOREIGN KEY, UNIQUE are refused (Delta does not enforce them)."""
    items = action.expressions
    constraint = items[0] if len(items) == 1 else None
    kinds = constraint.expressions if isinstance(constraint, exp.Constraint) else []
    if len(kinds) != 1 or not isinstance(kinds[0], exp.CheckColumnConstraint):
        raise UnsupportedOperationError(
            f"ALTER TABLE {ref.display} {action.sql(dialect='spark')}: only CHECK constraints "
            "can be added to a Delta table (ADD CONSTRAINT name CHECK (expr)); PRIMARY KEY, "
            "FOREIGN KEY and UNIQUE are not supported (Delta does not enforce them)",
            table=ref.display)
    check = kinds[0].this
    return constraint.name, with_sql_text(check, splice.render(check).text)


def _type_change(spark: SparkSession, ref: TableRef, action: exp.AlterColumn):
    """The field path and Spark type of ``ALTER COLUMN c TYPE t`` / ``CHANGE [COLUMN] c c t``
    (a new name in CHANGE was refused by :func:`_refuse_hive_change`)."""
    path = _field_path(action.this, ref)
    dtype = struct_from_columns(spark, [exp.ColumnDef(this=exp.to_identifier(path[-1]),
                                                      kind=action.args["dtype"].copy())],
                                ref.display).fields[0].dataType
    return path, dtype


def _position(action: exp.AlterColumn) -> tuple[str, str | None] | None:
    """``FIRST`` / ``AFTER c`` of ``CHANGE COLUMN ... FIRST|AFTER c`` as ``(kind, c)``."""
    position = action.args.get("position")
    if position is None:
        return None
    anchor = position.this
    return position.text("position").upper(), anchor.name if anchor is not None else None


def _set_comment(spark: SparkSession, ref: TableRef, action: exp.AlterColumn) -> int:
    """``CHANGE [COLUMN] c [c type] COMMENT '...'`` / ``ALTER COLUMN c COMMENT '...'``: only the
    comment may change (a type that differs is refused, the table left as it was; a new name
    was refused by :func:`_refuse_hive_change`)."""
    column = action.this.name
    dtype = action.args.get("dtype")
    expected = None
    if dtype is not None:
        expected = struct_from_columns(spark, [exp.ColumnDef(this=exp.to_identifier(column),
                                                             kind=dtype.copy())],
                                       ref.display).fields[0].dataType
    return ddl.set_column_comment(spark, ref, column, action.args["comment"].name, expected)


def _rename(resolver: Resolver, table: exp.Table, ref: TableRef, new: exp.Table) -> TableRef:
    text = label(table)
    if not ref.name:
        raise UnsupportedOperationError(f"ALTER TABLE {text} RENAME TO: a path table has no name "
                                        "to change", table=text)
    names = resolver.schema_and_name(new)
    if names is None:
        raise AnalysisException(f"ALTER TABLE {text} RENAME TO {label(new)}: not a valid name",
                                table=text)
    schema = names[0] if new.args.get("db") else ref.schema
    if schema != ref.schema:
        raise UnsupportedOperationError(f"ALTER TABLE {text} RENAME TO {label(new)}: a table "
                                        f"cannot move from schema {ref.schema} to {schema}",
                                        table=text)
    return table_names.rename_table(resolver.spark, ref, names[1])


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
                                    "SCHEMA IF NOT EXISTS", error_class="SCHEMA_ALREADY_EXISTS",
                                    sqlstate="42P06")
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
            raise AnalysisException(f"DROP SCHEMA: schema `{name}` not found",
                                    error_class="SCHEMA_NOT_FOUND", sqlstate="42704")
        owned = catalog.list_tables(name)
        views = resolver.views.persistent_views(name)
        if (owned or views) and not stmt.args.get("cascade"):
            raise AnalysisException(
                f"DROP SCHEMA: schema `{name}` is not empty (tables {owned + views}); drop them "
                f"first or use DROP SCHEMA {name} CASCADE", error_class="SCHEMA_NOT_EMPTY",
                sqlstate="2BP01")
        if spark.catalog.databaseExists(name):
            P.spark_sql(spark, rendered)
        for table in owned:
            ref = catalog.lookup(name, table)
            if ref is not None:
                table_names.drop_table(spark, ref)
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
                                 "table", table=label(table))
    return target.ref
