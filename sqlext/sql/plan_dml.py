"""INSERT, DELETE, UPDATE, MERGE and TRUNCATE on sqlext tables.

INSERT goes to :func:`sqlext.engine.write.write` (append, overwrite, static and dynamic partition
overwrite, ``REPLACE WHERE``) with Spark's store-assignment casts applied to the source; DELETE,
UPDATE and MERGE go to :class:`sqlext.DeltaTable`'s methods. Conditions and expressions are
rendered from the statement's tree (their sqlext reads bound to views while the statement runs).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.tables import DeltaTable
from sqlext.catalog import TableRef
from sqlext.engine.delete import delete
from sqlext.engine.post_commit import result_row
from sqlext.engine.read import resolve_snapshot
from sqlext.engine.schemas import spark_schema
from sqlext.engine.update import update
from sqlext.engine.write import write
from sqlext.errors import AnalysisException, TableNotFoundError, UnsupportedOperationError
from sqlext.log.table import DeltaLog
from sqlext.sql import plan as P
from sqlext.sql import splice
from sqlext.sql.assign import assign, check_not_null
from sqlext.sql.nodes import MergeInto, delta_path
from sqlext.sql.plan_read import ReadRewriter, drop_db_qualifier, plan_query
from sqlext.sql.resolve import Kind, Resolver, label


def _target(resolver: Resolver, table: exp.Table, verb: str) -> TableRef | None:
    """The sqlext table a statement writes, None when the target is Spark's."""
    if not isinstance(table, exp.Table):
        return None
    target = resolver.resolve(table)
    if target.kind is Kind.SPARK:
        return None
    if target.kind is not Kind.TABLE:
        what = "a view" if target.kind is Kind.VIEW else "a change feed"
        raise AnalysisException(f"{verb} {label(table)}: {label(table)} is {what}; "
                                f"{verb} needs a table")
    return target.ref


def _alias(table: exp.Table) -> str | None:
    """The name conditions qualify the target's columns with."""
    if table.alias:
        return table.alias
    return None if delta_path(table) is not None else table.name


class _Expressions:
    """Renders a statement's expressions to SQL, binding the sqlext reads of their subqueries."""

    def __init__(self, resolver: Resolver, table: exp.Table):
        self.rewriter = ReadRewriter(resolver)
        self.texts: list[splice.Rendered] = []
        self.db_qualifier = (table.text("db").lower(), table.name.lower()) \
            if table.args.get("db") and delta_path(table) is None else None

    def sql(self, node: exp.Expression | None) -> str | None:
        if node is None:
            return None
        node = node.copy()
        if self.rewriter.touches_sqlext(node):
            node = self.rewriter.rewrite(node)
        if self.db_qualifier:  # db.t.col -> t.col (the target is aliased t)
            for column in node.find_all(exp.Column):
                if (column.text("db").lower(), column.text("table").lower()) == self.db_qualifier:
                    drop_db_qualifier(column)
        rendered = splice.render(node)   # the user's text, only the rewritten names replaced
        self.texts.append(rendered)
        return rendered.text

    @property
    def labels(self) -> dict[str, str]:
        return {b.name: b.label for b in self.rewriter.bindings}

    def bound(self, spark: SparkSession):
        return P.bound(spark, self.rewriter.bindings)


def _affected(spark: SparkSession, metrics: dict, names: dict[str, str]) -> DataFrame:
    """delta-spark's result row for DML: ``num_affected_rows`` and friends, from the metrics the
    statement's own command returned (zeros when it committed nothing). Never read back from the
    log: by then another writer may have committed a newer version."""
    row = [sum(int(metrics.get(m, 0) or 0) for m in metric.split("+")) for metric in names.values()]
    return result_row(spark, row, T.StructType([T.StructField(n, T.LongType()) for n in names]))


# --- INSERT -----------------------------------------------------------------------------------


def plan_insert(resolver: Resolver, stmt: exp.Insert) -> P.Plan | None:
    schema_node = stmt.this if isinstance(stmt.this, exp.Schema) else None
    table = schema_node.this if schema_node is not None else stmt.this
    ref = _target(resolver, table, "INSERT INTO")
    if ref is None:
        return None
    text = label(table)
    if stmt.args.get("exists"):
        raise UnsupportedOperationError(f"INSERT OVERWRITE {text} ... IF NOT EXISTS is not "
                                        "supported for sqlext tables")
    if stmt.args.get("where") is not None and stmt.args.get("overwrite"):
        raise AnalysisException(f"INSERT {text}: REPLACE WHERE goes with INSERT INTO, not "
                                "INSERT OVERWRITE")
    columns = [c.name for c in schema_node.expressions] if schema_node is not None else None
    spec = table.args.get("partition")
    static: dict[str, exp.Expression] = {}
    dynamic: list[str] = []
    for item in spec.expressions if spec is not None else []:
        if isinstance(item, exp.EQ):
            static[item.this.name] = item.expression
        else:
            dynamic.append(item.name)
    query = stmt.expression
    if stmt.args.get("with_") is not None:
        query = query.copy()
        query.set("with_", stmt.args["with_"].copy())
    source = plan_query(resolver, query)
    where = stmt.args.get("where")
    replace_where = splice.render(where).text if where is not None else None
    spark = resolver.spark

    def run():
        log, snapshot = resolve_snapshot(spark, ref)
        schema = spark_schema(snapshot.metadata.schema_string)
        pcols = {c.lower(): c for c in snapshot.partition_columns}
        names = {f.name.lower(): f.name for f in schema.fields}
        for name in list(static) + dynamic:
            if name.lower() not in pcols:
                raise AnalysisException(
                    f"INSERT INTO {text}: {name} in PARTITION (...) is not a partition column "
                    f"(the table is partitioned by {list(pcols.values()) or 'nothing'})")
        static_names = {n.lower() for n in static}
        df = source.dataframe(spark)
        if stmt.args.get("by_name"):
            targets = list(df.columns)
        elif columns is not None:
            targets = columns
        else:
            targets = [f.name for f in schema.fields if f.name.lower() not in static_names]
        unknown = [c for c in targets if c.lower() not in names]
        if unknown:
            raise AnalysisException(f"INSERT INTO {text}: unknown column(s) {unknown}; the "
                                    f"table's columns are {list(names.values())}")
        lowered = [c.lower() for c in targets]
        dupes = sorted({c for c in lowered if lowered.count(c) > 1} | (set(lowered) & static_names))
        if dupes:
            raise AnalysisException(f"INSERT INTO {text}: column(s) {dupes} are given twice")
        constants = {pcols[n.lower()]: _constant(v) for n, v in static.items()}
        data = assign(spark, df, schema, targets, constants, ref.display)
        check_not_null(data, schema, ref.display)
        overwrite = bool(stmt.args.get("overwrite")) or replace_where is not None
        predicate, mode = replace_where, None
        if stmt.args.get("overwrite") and static:
            if _dynamic(spark):
                mode = "dynamic"
            else:
                predicate = splice.render(exp.and_(*[
                    exp.EQ(this=exp.column(pcols[n.lower()], quoted=True), expression=v.copy())
                    for n, v in static.items()])).text
        write(spark, data, ref.display, "overwrite" if overwrite else "append",
              replaceWhere=predicate, partitionOverwriteMode=mode, tableRef=ref)
        return None

    return P.Plan(run, source.sql(), source.labels, [source.rendered])


def _constant(value: exp.Expression):
    try:
        return F.lit(P.literal(value))
    except ValueError:
        return F.expr(splice.render(value).text)


def _dynamic(spark: SparkSession) -> bool:
    mode = spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static")
    return str(mode).lower() == "dynamic"


# --- DELETE / UPDATE / TRUNCATE ---------------------------------------------------------------


def _dml_target(resolver: Resolver, stmt: exp.Expression, verb: str, usage: str,
                clauses: tuple[str, ...]) -> TableRef | None:
    """The sqlext table a DELETE / UPDATE writes (None: Spark's); refuses clauses not supported."""
    ref = _target(resolver, stmt.this, verb)
    if ref is not None:
        for arg in clauses:
            if stmt.args.get(arg):
                raise UnsupportedOperationError(
                    f"{verb} {label(stmt.this)}: {arg.strip('_').upper()} is not supported; use "
                    f"{usage}")
    return ref


def _condition(stmt: exp.Expression, exprs: "_Expressions") -> str | None:
    where = stmt.args.get("where")
    return exprs.sql(where.this) if where is not None else None


def plan_delete(resolver: Resolver, stmt: exp.Delete) -> P.Plan | None:
    ref = _dml_target(resolver, stmt, "DELETE FROM", "DELETE FROM t [AS a] [WHERE condition]",
                      ("using", "limit", "returning", "order"))
    if ref is None:
        return None
    table = stmt.this
    exprs = _Expressions(resolver, table)
    condition = _condition(stmt, exprs)
    spark, alias = resolver.spark, _alias(table)

    def run():
        with exprs.bound(spark):
            result = delete(spark, _log(ref), condition, alias=alias)
        return _affected(spark, result.metrics, {"num_affected_rows": "numDeletedRows"})

    return P.Plan(run, condition, exprs.labels, exprs.texts)


def plan_update(resolver: Resolver, stmt: exp.Update) -> P.Plan | None:
    ref = _dml_target(resolver, stmt, "UPDATE",
                      "UPDATE t [AS a] SET col = value, ... [WHERE condition]",
                      ("from_", "limit", "returning", "order"))
    if ref is None:
        return None
    table = stmt.this
    exprs = _Expressions(resolver, table)
    alias = _alias(table)
    assignments = _assignments(stmt.expressions, exprs, alias)
    condition = _condition(stmt, exprs)
    spark = resolver.spark

    def run():
        with exprs.bound(spark):
            result = update(spark, _log(ref), condition, assignments, alias=alias)
        return _affected(spark, result.metrics, {"num_affected_rows": "numUpdatedRows"})

    return P.Plan(run, condition, exprs.labels, exprs.texts)


def plan_truncate(resolver: Resolver, stmt: exp.TruncateTable) -> P.Plan | None:
    tables = stmt.expressions
    refs = [_target(resolver, t, "TRUNCATE TABLE") for t in tables]
    if not any(refs):
        return None
    if len(tables) != 1 or stmt.args.get("partition"):
        raise UnsupportedOperationError("TRUNCATE TABLE on sqlext tables takes one table and no "
                                        "PARTITION; use DELETE FROM t WHERE ... for partitions")
    spark = resolver.spark

    def run():
        DeltaTable(spark, refs[0]).delete()
        return None

    return P.Plan(run)


def _log(ref: TableRef) -> DeltaLog:
    """The log of an existing table (TableNotFoundError when there is none)."""
    log = DeltaLog(ref.location, name=ref.display)
    if not log.exists():
        raise TableNotFoundError(f"{ref.display} is not a Delta table (no _delta_log at "
                                 f"{ref.location})")
    return log


def _table(spark: SparkSession, ref: TableRef, alias: str | None) -> DeltaTable:
    table = DeltaTable(spark, ref).require()
    return table.alias(alias) if alias else table


def _assignments(items: list[exp.Expression], exprs: _Expressions,
                 alias: str | None) -> dict[str, str]:
    """``{column: value SQL}`` of ``SET col = value, ...`` (a target qualifier dropped)."""
    out: dict[str, str] = {}
    for item in items:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise AnalysisException(f"expected column = value, not {item.sql(dialect='spark')}")
        out[_column_key(item.this, alias, exprs)] = exprs.sql(item.expression)
    return out


def _column_key(column: exp.Column, alias: str | None, exprs: _Expressions) -> str:
    parts = [p.name for p in column.parts]
    qualifiers = {alias.lower()} if alias else set()
    if exprs.db_qualifier:
        qualifiers.add(exprs.db_qualifier[1])
        if len(parts) > 2 and parts[0].lower() == exprs.db_qualifier[0]:
            parts = parts[1:]
    if len(parts) > 1 and parts[0].lower() in qualifiers:
        parts = parts[1:]
    return ".".join(parts)


# --- MERGE ------------------------------------------------------------------------------------


def plan_merge(resolver: Resolver, stmt: MergeInto) -> P.Plan | None:
    table = stmt.this
    ref = _target(resolver, table, "MERGE INTO")
    if ref is None:
        return None
    spark = resolver.spark
    using = stmt.args["using"]
    if isinstance(using, exp.Subquery):
        query, source_alias = using.this, using.alias or None
    elif isinstance(using, exp.Table):
        bare = using.copy()   # its alias (kept, as in the user's text) is harmless here
        query, source_alias = exp.select("*").from_(bare), using.alias or (
            None if delta_path(using) is not None else using.name)
    else:
        raise UnsupportedOperationError(f"MERGE INTO {label(table)}: USING must be a table or a "
                                        "(query)")
    if stmt.args.get("with_") is not None:
        query = query.copy()
        query.set("with_", stmt.args["with_"].copy())
    source = plan_query(resolver, query)
    exprs = _Expressions(resolver, table)
    alias = _alias(table)
    on = exprs.sql(stmt.args["on"])
    clauses = [_when(w, exprs, alias, label(table)) for w in stmt.args["whens"].expressions]
    evolve = bool(stmt.args.get("schema_evolution"))

    def run():
        df = source.dataframe(spark)
        if source_alias:
            df = df.alias(source_alias)
        with exprs.bound(spark):
            builder = _table(spark, ref, alias).merge(df, on)
            for method, kwargs in clauses:
                builder = getattr(builder, method)(**kwargs)
            if evolve:
                builder = builder.withSchemaEvolution()
            return builder.execute()

    return P.Plan(run, source.sql(), {**source.labels, **exprs.labels},
                  [source.rendered, *exprs.texts])


def _when(when: exp.When, exprs: _Expressions, alias: str | None, text: str):
    """(DeltaMergeBuilder method name, its keyword arguments) of one WHEN clause."""
    condition = exprs.sql(when.args.get("condition"))
    then = when.args["then"]
    by_source = bool(when.args.get("source"))
    if when.args.get("matched"):
        prefix = "whenMatched"
    else:
        prefix = "whenNotMatchedBySource" if by_source else "whenNotMatched"
    if isinstance(then, exp.Var) and then.name.upper() == "DELETE" and prefix != "whenNotMatched":
        return f"{prefix}Delete", {"condition": condition}
    if isinstance(then, exp.Update) and prefix != "whenNotMatched":
        items = then.expressions
        if len(items) == 1 and isinstance(items[0], exp.Star):
            if prefix == "whenMatched":
                return "whenMatchedUpdateAll", {"condition": condition}
        else:
            return f"{prefix}Update", {"condition": condition,
                                       "set": _assignments(items, exprs, alias)}
    if isinstance(then, exp.Insert) and prefix == "whenNotMatched":
        if isinstance(then.this, exp.Star):
            return "whenNotMatchedInsertAll", {"condition": condition}
        columns = [_column_key(c if isinstance(c, exp.Column) else exp.column(c.name), alias, exprs)
                   for c in then.this.expressions]
        values = [exprs.sql(v) for v in then.expression.expressions]
        if len(columns) != len(values):
            raise AnalysisException(f"MERGE INTO {text}: INSERT has {len(columns)} column(s) but "
                                    f"{len(values)} value(s)")
        return "whenNotMatchedInsert", {"condition": condition, "values": dict(zip(columns, values))}
    raise UnsupportedOperationError(
        f"MERGE INTO {text}: {when.sql(dialect='spark')} is not supported; supported: WHEN "
        "MATCHED [AND c] THEN UPDATE SET ... | UPDATE SET * | DELETE; WHEN NOT MATCHED [BY TARGET] "
        "[AND c] THEN INSERT (...) VALUES (...) | INSERT *; WHEN NOT MATCHED BY SOURCE [AND c] "
        "THEN UPDATE SET ... | DELETE")
