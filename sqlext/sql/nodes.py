"""Expression nodes for the statements and clauses sqlglot's Spark dialect lacks.

Each node is an ordinary :class:`sqlglot.exp.Expression`: its parts are child expressions (tables,
predicates, literals) or plain Python values, never SQL text to be parsed again. Each node has a
renderer here, registered in :data:`GENERATORS`, which the ``sqlext`` dialect's generator uses, so
``node.sql(dialect="sqlext")`` gives SQL that parses back to an equal tree.

Table references in these nodes are :class:`sqlglot.exp.Table`; a path written as a string
(``VACUUM '/data/t'``) is normalised to ``delta.`/data/t``` (``db="delta"``, ``this`` the path,
quoted), the same tree as the identifier form.
"""

from __future__ import annotations

import re
import typing as t

from sqlglot import exp
from sqlglot.dialects.spark import Spark

if t.TYPE_CHECKING:
    from sqlglot.generator import Generator

_ABSOLUTE_PATH = re.compile(r"/|[A-Za-z][A-Za-z0-9+.-]*:")


class ChangesClause(exp.Expression):
    """Spark 4's ``CHANGES FROM VERSION a [TO VERSION b] [WITH (k = v, ...)]`` after a table name.

    Stored in the ``changes`` arg of the :class:`sqlglot.exp.Table` it follows.

    Args:
        kind: ``"VERSION"`` or ``"TIMESTAMP"`` (both bounds are of this kind).
        start: the first version / timestamp, an expression (usually a literal).
        end: the last version / timestamp, or absent for "up to the latest".
        options: list of :class:`sqlglot.exp.Property`, ``this`` the key (``exp.Var`` for a bare
            or dotted name, ``exp.Literal`` for a string or backticked one) and ``value`` a
            literal (``exp.Literal``, ``exp.Boolean`` or ``exp.Neg``); see :meth:`options_dict`.
    """

    arg_types = {"kind": True, "start": True, "end": False, "options": False}

    def options_dict(self) -> dict[str, str]:
        """The options as ``{key: value}``, values as the strings Spark would see."""
        return property_map(self.args.get("options") or [])


class DescribeHistory(exp.Expression):
    """``DESCRIBE HISTORY t [LIMIT n]``: ``this`` the table, ``limit`` an integer literal."""

    arg_types = {"this": True, "limit": False}


class DescribeDetail(exp.Expression):
    """``DESCRIBE DETAIL t``: ``this`` the table."""


class SyncIdentity(exp.Expression):
    """Delta's ``ALTER COLUMN c SYNC IDENTITY`` (an ``ALTER TABLE`` action): ``this`` the column."""


class ChangeColumn(exp.AlterColumn):
    """Hive's ``CHANGE [COLUMN] path [name type] [COMMENT '...'] [FIRST | AFTER c]`` where sqlglot
    reads only ``CHANGE c c type [COMMENT '...']``: a nested field's path (``s.x``), a position,
    or ``CHANGE s.x COMMENT '...'``. ``this`` the path (a column), ``position`` an
    :class:`sqlglot.exp.ColumnPosition`; the other arguments as :class:`sqlglot.exp.AlterColumn`'s."""

    arg_types = {**exp.AlterColumn.arg_types, "position": False}


class ShowTables(exp.Expression):
    """``SHOW TABLES [IN|FROM db] [[LIKE] 'pattern']``.

    Args:
        db: the namespace as an :class:`sqlglot.exp.Table` whose ``db`` (and ``catalog``) parts are
            set and ``this`` is empty (sqlglot's form for schema names), or absent.
        like: the pattern, a string literal, or absent.
    """

    arg_types = {"db": False, "like": False}


class ShowTblProperties(exp.Expression):
    """``SHOW TBLPROPERTIES t [(key)]``: ``this`` the table, ``key`` a string literal or absent."""

    arg_types = {"this": True, "key": False}


class ShowCreateTable(exp.Expression):
    """``SHOW CREATE TABLE t [AS SERDE]``: ``this`` the table, ``as_serde`` a bool."""

    arg_types = {"this": True, "as_serde": False}


class Vacuum(exp.Expression):
    """``VACUUM t [LITE|FULL] [RETAIN n HOURS] [DRY RUN]`` (modifiers in any order).

    Args:
        this: the table.
        mode: ``"LITE"``, ``"FULL"`` or absent.
        retain: the retention in hours, an expression (a number literal, maybe negated), or absent.
        dry_run: bool.
    """

    arg_types = {"this": True, "mode": False, "retain": False, "dry_run": False}


class Optimize(exp.Expression):
    """``OPTIMIZE t [WHERE pred] [ZORDER BY (a, b)]``.

    Args:
        this: the table.
        where: an :class:`sqlglot.exp.Where` (as in ``exp.Delete``), or absent.
        zorder: list of :class:`sqlglot.exp.Column`, or absent.
    """

    arg_types = {"this": True, "where": False, "zorder": False}


class Reorg(exp.Expression):
    """``REORG TABLE t [WHERE pred] APPLY (PURGE)``.

    Args:
        this: the table.
        where: an :class:`sqlglot.exp.Where` on partition columns, or absent.
    """

    arg_types = {"this": True, "where": False}


class Restore(exp.Expression):
    """``RESTORE [TABLE] t [TO] VERSION AS OF n | TIMESTAMP AS OF ts``.

    Args:
        this: the table.
        version: an :class:`sqlglot.exp.Version`, as sqlglot builds for ``t VERSION AS OF n``:
            ``this`` is ``"VERSION"`` or ``"TIMESTAMP"``, ``kind`` is ``"AS OF"``, ``expression``
            the version or timestamp expression.
    """

    arg_types = {"this": True, "version": True}


class ConvertToDelta(exp.Expression):
    """``CONVERT TO DELTA parquet.`/dir` [NO STATISTICS] [PARTITIONED BY (col type, ...)]``.

    Args:
        this: the table, ``parquet.`/dir``` (``db`` is ``parquet``, ``this`` the path).
        partitions: list of :class:`sqlglot.exp.ColumnDef` (name and type), or absent.
        no_statistics: bool.
    """

    arg_types = {"this": True, "partitions": False, "no_statistics": False}


class Generate(exp.Expression):
    """``GENERATE mode FOR TABLE t`` (delta-spark: ``symlink_format_manifest``).

    Args:
        this: the table.
        mode: the mode's name, as written.
    """

    arg_types = {"this": True, "mode": True}


class MergeInto(exp.Merge):
    """sqlglot's ``exp.Merge`` plus ``schema_evolution`` (``MERGE WITH SCHEMA EVOLUTION INTO``).

    Every MERGE the ``sqlext`` dialect parses is a ``MergeInto``; all of ``exp.Merge``'s args
    (``this``, ``using``, ``on``, ``whens``, ...) keep their meaning.
    """

    arg_types = {**exp.Merge.arg_types, "schema_evolution": False}


def property_map(properties: exp.Properties | t.Iterable[exp.Expr]) -> dict[str, str]:
    """``{key: value}`` of the plain ``exp.Property`` items of a property list.

    Works for ``TBLPROPERTIES`` / ``OPTIONS`` (in ``exp.Properties`` of ``CREATE``, or of an
    ``ALTER ... SET TBLPROPERTIES`` action) and ``CHANGES ... WITH (...)``. A key is its text as
    written, dotted names joined (``delta.appendOnly``), whether it was quoted or not; a value is
    the string Spark would see (``'true'`` / ``'false'`` for booleans). Typed properties such as
    ``LocationProperty`` are skipped.
    """
    items = properties.expressions if isinstance(properties, exp.Properties) else properties
    return {
        _property_key(prop.this): _property_value(prop.args["value"])
        for prop in items
        if type(prop) is exp.Property
    }


def delta_path(table: exp.Expr) -> str | None:
    """The path of a path-addressed table (``delta.`/data/t```), or ``None``.

    As Delta decides: the table's ``db`` part is ``delta`` (any case), it has no catalog part,
    and its name is an absolute path (``/...``) or a URI (``s3://...``, ``file:/...``).
    """
    if not isinstance(table, exp.Table) or table.args.get("catalog"):
        return None
    if table.text("db").lower() != "delta" or not _ABSOLUTE_PATH.match(table.name):
        return None
    return table.name


def _property_key(key: exp.Expr) -> str:
    if isinstance(key, exp.Dot):
        return ".".join(part.name for part in key.flatten())
    return key.name


def _property_value(value: exp.Expr) -> str:
    if isinstance(value, exp.Boolean):
        return "true" if value.this else "false"
    if isinstance(value, exp.Literal):
        return value.name
    return value.sql(dialect="spark")


def _property_sql(gen: Generator, e: exp.Property) -> str:
    """``key=value``; a bare-word key stays bare (Spark's generator would quote it)."""
    if type(e) is exp.Property and isinstance(e.this, exp.Var):
        return f"{e.name}={gen.sql(e, 'value')}"
    return _SPARK_PROPERTY_SQL(gen, e)


# --- rendering -------------------------------------------------------------------------------

_SPARK_PROPERTY_SQL = Spark.Generator.TRANSFORMS[exp.Property]


def _changes_sql(gen: Generator, e: ChangesClause) -> str:
    kind = e.text("kind")
    sql = f"CHANGES FROM {kind} {gen.sql(e, 'start')}"
    if e.args.get("end"):
        sql += f" TO {kind} {gen.sql(e, 'end')}"
    options = e.args.get("options")
    if options:
        pairs = ", ".join(f"{gen.sql(p, 'this')} = {gen.sql(p, 'value')}" for p in options)
        sql += f" WITH ({pairs})"
    return sql


def _describe_history_sql(gen: Generator, e: DescribeHistory) -> str:
    limit = gen.sql(e, "limit")
    return f"DESCRIBE HISTORY {gen.sql(e, 'this')}" + (f" LIMIT {limit}" if limit else "")


def _sync_identity_sql(gen: Generator, e: SyncIdentity) -> str:
    return f"ALTER COLUMN {gen.sql(e, 'this')} SYNC IDENTITY"


def _change_column_sql(gen: Generator, e: ChangeColumn) -> str:
    parts = ["CHANGE COLUMN", gen.sql(e, "this")]
    if e.args.get("dtype") is not None:
        parts += [gen.sql(e, "rename_to"), gen.sql(e, "dtype")]
    if e.args.get("comment") is not None:
        parts += ["COMMENT", gen.sql(e, "comment")]
    if e.args.get("position") is not None:
        parts.append(gen.sql(e, "position"))
    return " ".join(parts)


def _describe_detail_sql(gen: Generator, e: DescribeDetail) -> str:
    return f"DESCRIBE DETAIL {gen.sql(e, 'this')}"


def _show_tables_sql(gen: Generator, e: ShowTables) -> str:
    db = e.args.get("db")
    sql = "SHOW TABLES"
    if db:
        sql += " IN " + ".".join(
            gen.sql(p) for p in (db.args.get("catalog"), db.args.get("db")) if p
        )
    like = gen.sql(e, "like")
    return sql + (f" LIKE {like}" if like else "")


def _show_tblproperties_sql(gen: Generator, e: ShowTblProperties) -> str:
    key = gen.sql(e, "key")
    return f"SHOW TBLPROPERTIES {gen.sql(e, 'this')}" + (f" ({key})" if key else "")


def _show_create_table_sql(gen: Generator, e: ShowCreateTable) -> str:
    serde = " AS SERDE" if e.args.get("as_serde") else ""
    return f"SHOW CREATE TABLE {gen.sql(e, 'this')}{serde}"


def _vacuum_sql(gen: Generator, e: Vacuum) -> str:
    sql = f"VACUUM {gen.sql(e, 'this')}"
    if e.args.get("mode"):
        sql += f" {e.text('mode')}"
    if e.args.get("retain") is not None:
        sql += f" RETAIN {gen.sql(e, 'retain')} HOURS"
    return sql + (" DRY RUN" if e.args.get("dry_run") else "")


def _optimize_sql(gen: Generator, e: Optimize) -> str:
    sql = f"OPTIMIZE {gen.sql(e, 'this')}{gen.sql(e, 'where')}"
    zorder = e.args.get("zorder")
    if zorder:
        sql += f" ZORDER BY ({', '.join(gen.sql(c) for c in zorder)})"
    return sql


def _reorg_sql(gen: Generator, e: Reorg) -> str:
    return f"REORG TABLE {gen.sql(e, 'this')}{gen.sql(e, 'where')} APPLY (PURGE)"


def _restore_sql(gen: Generator, e: Restore) -> str:
    return f"RESTORE TABLE {gen.sql(e, 'this')} TO {gen.sql(e, 'version')}"


def _convert_sql(gen: Generator, e: ConvertToDelta) -> str:
    sql = f"CONVERT TO DELTA {gen.sql(e, 'this')}"
    if e.args.get("no_statistics"):
        sql += " NO STATISTICS"
    partitions = e.args.get("partitions")
    if partitions:
        sql += f" PARTITIONED BY ({', '.join(gen.sql(c) for c in partitions)})"
    return sql


def _generate_sql(gen: Generator, e: Generate) -> str:
    return f"GENERATE {e.text('mode')} FOR TABLE {gen.sql(e, 'this')}"


def _merge_into_sql(gen: Generator, e: MergeInto) -> str:
    if not e.args.get("schema_evolution"):
        return gen.merge_sql(e)
    bare = e.copy()
    bare.set("with_", None)
    body = gen.merge_sql(bare)
    prefix = "MERGE INTO"
    assert body.startswith(prefix), body
    return gen.prepend_ctes(e, "MERGE WITH SCHEMA EVOLUTION INTO" + body[len(prefix) :])


#: node class -> renderer, merged into the ``sqlext`` generator's ``TRANSFORMS``.
GENERATORS: dict[type[exp.Expr], t.Callable[..., str]] = {
    ChangesClause: _changes_sql,
    DescribeHistory: _describe_history_sql,
    DescribeDetail: _describe_detail_sql,
    SyncIdentity: _sync_identity_sql,
    ChangeColumn: _change_column_sql,
    ShowTables: _show_tables_sql,
    ShowTblProperties: _show_tblproperties_sql,
    ShowCreateTable: _show_create_table_sql,
    Vacuum: _vacuum_sql,
    Optimize: _optimize_sql,
    Reorg: _reorg_sql,
    Restore: _restore_sql,
    ConvertToDelta: _convert_sql,
    Generate: _generate_sql,
    MergeInto: _merge_into_sql,
    exp.Property: _property_sql,
}
