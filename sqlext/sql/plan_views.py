"""CREATE [OR REPLACE] [TEMPORARY] VIEW and DROP VIEW.

A view whose query reads sqlext tables (or sqlext views) is kept by sqlext (see
:mod:`sqlext.catalog.views`) and expanded wherever it is referenced, so it always shows the tables'
current data. Any other view is Spark's. Unqualified table names in a persistent view's query are
qualified with the current schema when the view is created, as Spark resolves them.
"""

from __future__ import annotations

from sqlglot import exp

from sqlext.engine.session import native_table_exists, spark_temp_view_exists
from sqlext.errors import AnalysisException, TableAlreadyExistsError, UnsupportedOperationError
from sqlext.sql import plan as P
from sqlext.sql import splice
from sqlext.sql.plan_read import ReadRewriter, is_cte, plan_reads
from sqlext.sql.resolve import Kind, Resolver, label
from sqlext.catalog import ViewDef, has_delta_log, spark_name


def _existing(resolver: Resolver, table: exp.Table, temporary: bool | None) -> ViewDef | None:
    """The sqlext view a name means: temporary, persistent, or (None) either, temporary first."""
    names = resolver.schema_and_name(table)
    if names is None:
        return None
    if temporary is not False and not table.args.get("db"):
        view = resolver.views.temporary(names[1])
        if view is not None or temporary:
            return view
    return None if temporary else resolver.views.persistent(*names)


def plan_create_view(resolver: Resolver, stmt: exp.Create) -> P.Plan | None:
    schema_node = stmt.this if isinstance(stmt.this, exp.Schema) else None
    table = schema_node.this if schema_node is not None else stmt.this
    props = stmt.args["properties"].expressions if stmt.args.get("properties") else []
    temporary = any(isinstance(p, exp.TemporaryProperty) for p in props)
    is_global = any(isinstance(p, exp.GlobalProperty) for p in props)
    query = stmt.expression
    if stmt.args.get("with_") is not None:
        query = query.copy()
        query.set("with_", stmt.args["with_"].copy())
    replace, if_not_exists = bool(stmt.args.get("replace")), bool(stmt.args.get("exists"))
    existing = _existing(resolver, table, temporary)
    spark = resolver.spark
    if not ReadRewriter(resolver).touches_sqlext(query):
        if existing is None:
            return None
        # a Spark view replaces sqlext's view of the same name
        if not replace:
            return P.Plan(lambda: _exists(existing, if_not_exists))
        sql = stmt.meta.get("sql") or stmt.sql(dialect="spark")

        def run_spark():
            result = P.spark_sql(spark, sql)
            resolver.views.drop(existing)
            return result

        return P.Plan(run_spark, sql)
    text = label(table)
    if is_global:
        raise UnsupportedOperationError(f"CREATE GLOBAL TEMPORARY VIEW {text}: global temporary "
                                        "views over sqlext tables are not supported; use CREATE "
                                        "[TEMPORARY] VIEW", table=text)
    names = resolver.schema_and_name(table)
    if names is None or (temporary and table.args.get("db")):
        raise AnalysisException(f"CREATE VIEW {text}: not a valid view name", table=text)
    schema, name = names
    columns = tuple(c.name for c in schema_node.expressions) if schema_node is not None else None
    column_comments = _column_comments(schema_node)
    comment = next((p.this.name for p in props if isinstance(p, exp.SchemaCommentProperty)), None)
    stored = query.copy()
    if not temporary:
        _qualify(resolver, stored, schema, text)
    view = ViewDef(name, splice.render(stored).text, None if temporary else schema, columns,
                   comment, column_comments)
    check = plan_reads(resolver, query)

    def run():
        if existing is not None and not replace:
            return _exists(existing, if_not_exists)
        if not temporary:
            if resolver.catalog.lookup(schema, name) or has_delta_log(
                    resolver.catalog.managed_location(schema, name)):
                raise TableAlreadyExistsError(f"CREATE VIEW {text}: a table {schema}.{name} "
                                              "exists", error_class="TABLE_OR_VIEW_ALREADY_EXISTS",
                                              table=f"{schema}.{name}")
            if not resolver.catalog.schema_exists(schema):
                raise AnalysisException(f"CREATE VIEW {text}: schema `{schema}` not found",
                                        table=text)
        fields = check.schema(spark).fields   # analyses the query: errors now, not later
        if columns is not None and len(columns) != len(fields):
            raise AnalysisException(f"CREATE VIEW {text}: {len(columns)} column name(s) for a "
                                    f"query of {len(fields)} column(s)", table=text)
        if _spark_view_exists(spark, table, temporary):
            if not replace:
                raise TableAlreadyExistsError(f"CREATE VIEW {text}: a Spark view of that name "
                                              "exists; use CREATE OR REPLACE VIEW",
                                              error_class="TABLE_OR_VIEW_ALREADY_EXISTS",
                                              table=text)
            P.spark_sql(spark, exp.Drop(this=None, kind="VIEW", exists=True,
                                        tables=[table.copy()]).sql(dialect="spark"))
        resolver.views.put(view)
        return None

    return P.Plan(run, check.sql(), check.labels)


def _column_comments(schema_node: exp.Schema | None) -> tuple[str | None, ...] | None:
    """The ``COMMENT`` of each column in ``CREATE VIEW v (c COMMENT '...', d)``, if any has one."""
    if schema_node is None:
        return None
    comments = []
    for column in schema_node.expressions:
        found = None
        for constraint in column.args.get("constraints") or []:
            if isinstance(constraint.args.get("kind"), exp.CommentColumnConstraint):
                found = constraint.args["kind"].this.name
        comments.append(found)
    return tuple(comments) if any(c is not None for c in comments) else None


def _exists(view: ViewDef, if_not_exists: bool):
    if if_not_exists:
        return None
    raise TableAlreadyExistsError(f"view {view.display} already exists; use CREATE OR REPLACE "
                                  "VIEW", error_class="TABLE_OR_VIEW_ALREADY_EXISTS",
                                  table=view.display)


def _spark_view_exists(spark, table: exp.Table, temporary: bool) -> bool:
    try:
        if temporary or not table.args.get("db"):
            if spark_temp_view_exists(spark, table.name):
                return True
        if temporary:
            return False
        db = table.text("db") or spark.catalog.currentDatabase()
        return native_table_exists(spark, spark_name(db, table.name))
    except Exception:  # noqa: BLE001
        return False


def _qualify(resolver: Resolver, query: exp.Expression, schema: str, text: str) -> None:
    """Qualify the persistent view's one-part table names with the current schema."""
    for table in query.find_all(exp.Table):
        if table.args.get("db") or not isinstance(table.this, exp.Identifier) or is_cte(table):
            continue
        if resolver.views.temporary(table.name) is not None:
            raise AnalysisException(f"CREATE VIEW {text}: a persistent view cannot refer to the "
                                    f"temporary view {table.name}", table=text)
        if resolver.resolve(table).kind is Kind.SPARK and resolver.spark_temp_view(table.name):
            continue
        found = splice.region(table.this)
        if found is not None:
            splice.splice(table, found[0], found[0],
                          exp.to_identifier(schema).sql(dialect="spark") + ".")
        table.set("db", exp.to_identifier(schema))


def plan_drop_view(resolver: Resolver, stmt: exp.Drop) -> P.Plan | None:
    tables = stmt.args.get("tables") or []
    if len(tables) != 1:
        return None
    table = tables[0]
    view = _existing(resolver, table, None)
    if view is None:
        names = resolver.schema_and_name(table)
        target = resolver.resolve(table) if names else None
        if target is not None and target.kind is Kind.TABLE:
            raise AnalysisException(f"DROP VIEW {label(table)}: it is a table; use DROP TABLE",
                                    table=label(table))
        return None
    return P.Plan(lambda: resolver.views.drop(view))
