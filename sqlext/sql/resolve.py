"""Table references -> what they name: a sqlext table, a sqlext view, or something of Spark's.

A reference resolves through sqlext's catalog first, then Spark's. A name is a sqlext table when
the location sqlext's catalog gives for it (its registered location, or the managed location under
the warehouse) holds a ``_delta_log``; ``delta.`/path``` always names a sqlext table (Spark cannot
read it without Delta's jars). Temporary views shadow tables, as in Spark. ``db.t.changes`` (and
``t.changes``) names the change feed of ``db.t`` when no table of that name exists.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pyspark.sql import SparkSession
from sqlglot import exp

from sqlext.catalog import (Catalog, TableRef, ViewDef, ViewStore, has_delta_log,
                            split_name)
from sqlext.engine.session import TempViews
from sqlext.errors import AnalysisException
from sqlext.log.storage import normalize_location
from sqlext.sql.nodes import delta_path

_SPARK_CATALOG = "spark_catalog"
CHANGES = "changes"


class Kind(enum.Enum):
    TABLE = "table"        # a sqlext (Delta) table
    CHANGES = "changes"    # the change feed of a sqlext table (``db.t.changes``)
    VIEW = "view"          # a view sqlext stores (its query reads sqlext tables)
    SPARK = "spark"        # anything else: Spark resolves it (or reports it missing)


@dataclass(frozen=True)
class Target:
    """What a table reference names."""

    kind: Kind
    ref: TableRef | None = None
    view: ViewDef | None = None

    @property
    def is_sqlext(self) -> bool:
        return self.kind is not Kind.SPARK


SPARK = Target(Kind.SPARK)


def label(table: exp.Table) -> str:
    """How the user wrote a reference (its name parts), for messages."""
    return ".".join(part.sql(dialect="spark") for part in table.parts)


class Resolver:
    """Resolves table references of the statements of one ``sqlext.sql`` call.

    Lookups are cached until :meth:`invalidate` (called after every statement, since DDL changes
    what names mean).
    """

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self.catalog = Catalog(spark)
        self.views = ViewStore(spark, self.catalog)
        self._schema: str | None = None
        self._cache: dict[tuple, Target] = {}
        self._session_catalog = None

    def invalidate(self) -> None:
        self._schema = None
        self._cache.clear()

    def current_schema(self) -> str:
        if self._schema is None:
            self._schema = self.catalog.current_schema().lower()
        return self._schema

    # --- names ----------------------------------------------------------------------------------

    def schema_and_name(self, table: exp.Table) -> tuple[str, str] | None:
        """``(schema, name)`` of a name reference (lower-cased as Spark does), or None for a path,
        a table function, or a name in a catalog other than Spark's session catalog."""
        if not isinstance(table.this, exp.Identifier) or delta_path(table):
            return None
        parts = [p.name for p in table.parts]
        if len(parts) == 3:
            if parts[0].lower() != _SPARK_CATALOG:
                return None
            parts = parts[1:]
        if len(parts) > 2:
            return None
        quoted = ".".join("`" + p.replace("`", "``") + "`" for p in parts)
        try:
            schema, name = split_name(quoted)
        except AnalysisException:
            return None
        return schema or self.current_schema(), name

    def ref_for(self, table: exp.Table) -> TableRef:
        """The TableRef a path or name means (registered, or the managed location for a name);
        raises :class:`AnalysisException` for names sqlext cannot hold."""
        path = delta_path(table)
        if path is not None:
            return TableRef(normalize_location(path))
        names = self.schema_and_name(table)
        if names is None:
            raise AnalysisException(
                f"{label(table)} is not a name sqlext can hold a table under: use [schema.]table "
                "or delta.`/path`", table=label(table))
        return self.catalog.ref_for_name(*names)

    # --- resolution -----------------------------------------------------------------------------

    def resolve(self, table: exp.Table) -> Target:
        """What ``table`` names (a name or path reference; table functions are Spark's)."""
        path = delta_path(table)
        if path is not None:
            return Target(Kind.TABLE, TableRef(normalize_location(path)))
        if not isinstance(table.this, exp.Identifier):
            return SPARK
        key = tuple(p.name.lower() for p in table.parts)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._resolve(table)
        return found

    def _resolve(self, table: exp.Table) -> Target:
        names = self.schema_and_name(table)
        if names is not None:
            found = self._named(table, *names)
            if found is not None:
                return found
        # `db.t.changes` / `t.changes`: the change feed of db.t / t, if no table is so named
        if table.name.lower() == CHANGES and table.args.get("db"):
            parent = exp.Table(this=table.args["db"].copy(),
                               db=table.args["catalog"].copy() if table.args.get("catalog") else None)
            names = self.schema_and_name(parent)
            if names is not None:
                found = self._named(parent, *names)
                if found is not None and found.kind is Kind.TABLE:
                    return Target(Kind.CHANGES, found.ref)
        return SPARK

    def _named(self, table: exp.Table, schema: str, name: str) -> Target | None:
        single = not table.args.get("db")
        if single:
            view = self.views.temporary(name)
            if view is not None:
                return Target(Kind.VIEW, view=view)
        view = self.views.persistent(schema, name)
        ref = None
        if view is None:
            ref = self.catalog.ref_for_name(schema, name)
            if not has_delta_log(ref.location):
                return None
        if single and self.spark_temp_view(name):
            return SPARK
        return Target(Kind.VIEW, view=view) if view else Target(Kind.TABLE, ref)

    def spark_temp_view(self, name: str) -> bool:
        """Whether Spark has a temporary view ``name`` (it shadows tables, as in Spark)."""
        if self._session_catalog is None:
            self._session_catalog = TempViews(self.spark)
        return self._session_catalog.exists(name)
