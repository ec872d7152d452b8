"""``CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t SHALLOW CLONE source [VERSION AS OF n |
TIMESTAMP AS OF ts] [TBLPROPERTIES (...)] [LOCATION 'path']``: Delta's shallow clone
(:mod:`sqlext.engine.maintenance.clone`). The source is a sqlext table (a name or ``delta.`/path```); the
target a name (managed, or at ``LOCATION``) or ``delta.`/path```.
"""

from __future__ import annotations

from sqlglot import exp

from sqlext.catalog import TableRef
from sqlext.engine.maintenance.clone import CloneSource, require_shallow
from sqlext.names import clone_table
from sqlext.errors import AnalysisException, UnsupportedOperationError
from sqlext.log.storage import normalize_location
from sqlext.sql import plan as P
from sqlext.sql.nodes import delta_path, property_map
from sqlext.sql.plan_catalog import require_table
from sqlext.sql.resolve import Resolver, label

SUPPORTED = ("CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t SHALLOW CLONE source "
             "[VERSION AS OF n | TIMESTAMP AS OF ts] [TBLPROPERTIES (k = v, ...)] "
             "[LOCATION 'path']")


def plan_clone(resolver: Resolver, stmt: exp.Create) -> P.Plan:
    """The plan of a ``... CLONE`` statement."""
    clone = stmt.args["clone"]
    source_table = clone.this.copy()
    version = source_table.args.get("version")
    source_table.set("version", None)
    source_text = label(source_table)
    require_shallow(bool(clone.args.get("shallow")), source_text)
    target = stmt.this
    items = stmt.args["properties"].expressions if stmt.args.get("properties") else []
    location = None
    for item in items:
        if isinstance(item, exp.LocationProperty):
            location = item.this.name
        elif type(item) is not exp.Property:
            raise UnsupportedOperationError(f"CLONE into {label(target)}: "
                                            f"{item.sql(dialect='spark')} is not supported; "
                                            f"supported: {SUPPORTED}", table=label(target))
    properties = property_map([i for i in items if type(i) is exp.Property])
    source_ref = require_table(resolver, source_table, "SHALLOW CLONE")
    target_ref = _target_ref(resolver, target, location)
    spark = resolver.spark
    at = _time_travel(resolver, version)
    source = CloneSource(source_ref, source_ref.qualified_name or f"delta.`{source_ref.location}`",
                         *at)
    replace, if_not_exists = bool(stmt.args.get("replace")), bool(stmt.args.get("exists"))
    return P.Plan(lambda: clone_table(spark, source, target_ref, replace, if_not_exists,
                                      properties, location is not None) and None)


def _target_ref(resolver: Resolver, target: exp.Table, location: str | None) -> TableRef:
    if location is None:
        return resolver.ref_for(target)
    if delta_path(target) is not None:
        raise AnalysisException(f"CLONE into {label(target)}: a path table cannot have a "
                                "LOCATION", table=label(target))
    names = resolver.schema_and_name(target)
    if names is None:
        raise AnalysisException(f"CLONE into {label(target)}: not a valid table name",
                                table=label(target))
    return TableRef(normalize_location(location), names[0], names[1], managed=False)


def _time_travel(resolver: Resolver, version: exp.Version | None) -> tuple:
    """(version, timestamp) of ``VERSION AS OF n`` / ``TIMESTAMP AS OF ts``."""
    if version is None:
        return None, None
    kind = str(version.this).upper()
    if kind == "VERSION":
        return P.integer(resolver.spark, version.expression, "VERSION AS OF"), None
    return None, P.timestamp(resolver.spark, version.expression)
