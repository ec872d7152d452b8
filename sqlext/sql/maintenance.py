"""VACUUM, RESTORE and OPTIMIZE: routed to :class:`sqlext.DeltaTable`'s methods of the same
names (``vacuum``, ``restoreToVersion`` / ``restoreToTimestamp``, ``optimize``) where sqlext has
them; otherwise an :class:`UnsupportedOperationError` that says what is supported.
"""

from __future__ import annotations

import inspect

from sqlext.tables import DeltaTable
from sqlext.errors import UnsupportedOperationError
from sqlext.sql import nodes
from sqlext.sql import plan as P
from sqlext.sql.plan_catalog import require_table
from sqlext.sql.resolve import Resolver, label

SUPPORTED_STATEMENTS = (
    "SELECT (time travel, change feeds), INSERT, DELETE, UPDATE, MERGE, CREATE/DROP/ALTER TABLE, "
    "CREATE/DROP VIEW, CREATE/DROP SCHEMA, DESCRIBE [HISTORY|DETAIL], SHOW TABLES|TBLPROPERTIES|"
    "CREATE TABLE")


def _method(name: str, statement: str):
    method = getattr(DeltaTable, name, None)
    if method is None:
        raise UnsupportedOperationError(
            f"{statement} is not supported by this version of sqlext; supported statements on "
            f"sqlext tables: {SUPPORTED_STATEMENTS}")
    return method


def _accepts(method, parameter: str) -> bool:
    return parameter in inspect.signature(method).parameters


def plan_vacuum(resolver: Resolver, stmt: nodes.Vacuum) -> P.Plan:
    ref = require_table(resolver, stmt.this, "VACUUM")
    method = _method("vacuum", "VACUUM")
    kwargs = {}
    if stmt.args.get("dry_run"):
        if not _accepts(method, "dryRun"):
            raise UnsupportedOperationError("VACUUM ... DRY RUN is not supported; use VACUUM t "
                                            "[RETAIN n HOURS]", table=ref.display)
        kwargs["dryRun"] = True
    if stmt.args.get("mode"):
        if not _accepts(method, "mode"):
            raise UnsupportedOperationError(f"VACUUM ... {stmt.args['mode']} is not supported; "
                                            "use VACUUM t [RETAIN n HOURS]", table=ref.display)
        kwargs["mode"] = stmt.args["mode"]
    retain = stmt.args.get("retain")
    spark = resolver.spark

    def run():
        from sqlext.engine.maintenance.vacuum import sql_result_frame, vacuum
        hours = float(P.evaluate(spark, retain)) if retain is not None else None
        # delta-spark's SQL answer (the table's path; a dry run: the files), where
        # DeltaTable.vacuum answers the files deleted
        return sql_result_frame(spark, vacuum(spark, DeltaTable(spark, ref)._log, hours,
                                              kwargs.get("dryRun", False), kwargs.get("mode")))

    return P.Plan(run)


def plan_restore(resolver: Resolver, stmt: nodes.Restore) -> P.Plan:
    ref = require_table(resolver, stmt.this, "RESTORE")
    version = stmt.args["version"]
    by_version = version.name.upper() == "VERSION"
    method = _method("restoreToVersion" if by_version else "restoreToTimestamp", "RESTORE")
    spark = resolver.spark

    def run():
        table = DeltaTable(spark, ref)
        if by_version:
            return method(table, P.integer(spark, version.expression,
                                           f"RESTORE {label(stmt.this)} VERSION AS OF"))
        return method(table, P.timestamp(spark, version.expression))

    return P.Plan(run)


def plan_optimize(resolver: Resolver, stmt: nodes.Optimize) -> P.Plan:
    ref = require_table(resolver, stmt.this, "OPTIMIZE")
    _method("optimize", "OPTIMIZE")
    where = stmt.args.get("where")
    predicate = where.this.sql(dialect="spark") if where is not None else None
    zorder = [c.sql(dialect="spark") for c in stmt.args.get("zorder") or []]
    spark = resolver.spark

    def run():
        builder = DeltaTable(spark, ref).optimize()
        if predicate is not None:
            builder = builder.where(predicate)
        return builder.executeZOrderBy(*zorder) if zorder else builder.executeCompaction()

    return P.Plan(run)


def plan_reorg(resolver: Resolver, stmt: nodes.Reorg) -> P.Plan:
    """``REORG TABLE t [WHERE partition predicate] APPLY (PURGE)``: rewrite the files with
    deletion vectors without their deleted rows (delta-spark's operation ``REORG``)."""
    ref = require_table(resolver, stmt.this, "REORG TABLE")
    where = stmt.args.get("where")
    predicate = where.this.sql(dialect="spark") if where is not None else None
    spark = resolver.spark

    def run():
        from sqlext.engine.maintenance.optimize import optimize, result_frame
        from sqlext.log.table import DeltaLog

        log = DeltaLog(ref.location, name=ref.display)
        return result_frame(spark, optimize(spark, log, predicate, purge=True))

    return P.Plan(run)


def plan_convert(resolver: Resolver, stmt: nodes.ConvertToDelta) -> P.Plan:
    """``CONVERT TO DELTA parquet.`/dir` [NO STATISTICS] [PARTITIONED BY (col type, ...)]``."""
    table = stmt.this
    if table.text("db").lower() != "parquet" or table.args.get("catalog"):
        raise UnsupportedOperationError(
            f"CONVERT TO DELTA {label(table)}: only directories of parquet files can be "
            "converted; write CONVERT TO DELTA parquet.`/path/to/dir`", table=label(table))
    location = table.name
    partitions = stmt.args.get("partitions") or []
    schema = ", ".join(f"{c.this.sql(dialect='spark')} {c.args['kind'].sql(dialect='spark')}"
                       for c in partitions) or None
    stats = not stmt.args.get("no_statistics")
    spark = resolver.spark

    def run():
        from sqlext.engine.maintenance.convert import convert_to_delta
        convert_to_delta(spark, location, schema, collect_stats=stats)
        return None

    return P.Plan(run)


def plan_generate(resolver: Resolver, stmt: nodes.Generate) -> P.Plan:
    """``GENERATE symlink_format_manifest FOR TABLE t``: :meth:`DeltaTable.generate`."""
    ref = require_table(resolver, stmt.this, "GENERATE")
    mode = stmt.text("mode")
    spark = resolver.spark
    return P.Plan(lambda: DeltaTable(spark, ref).generate(mode))
