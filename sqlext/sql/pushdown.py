"""Which files a bound read must scan: the WHERE conjuncts that only the table's own columns decide.

The conjuncts are used to skip files (by partition values and min/max statistics, through
:class:`sqlext.log.pruning.Pruner`); the query keeps its WHERE, so pruning only has to be
conservative. It is used only where skipping rows cannot change the result: the table is read in
the FROM or an inner join of the query whose WHERE it is (never on the side of an outer join that
may be NULL-extended), and the conjunct has no subquery, aggregate or window.
"""

from __future__ import annotations

from sqlglot import exp

from sqlext.log.pruning import conjuncts

_OPAQUE = (exp.Subquery, exp.Select, exp.AggFunc, exp.Window, exp.Exists)


def file_filter(table: exp.Table) -> exp.Expression | None:
    """The part of the enclosing WHERE that decides rows of ``table`` alone, its columns
    unqualified; None when there is none or when pruning could change the result."""
    select = table.parent_select
    if select is None or select.args.get("where") is None:
        return None
    joins = select.args.get("joins") or []
    in_from = table.parent is select.args.get("from_")
    in_join = isinstance(table.parent, exp.Join) and any(j is table.parent for j in joins)
    if not (in_from or in_join):
        return None
    for join in joins:
        kind = (join.text("kind") or "").upper()
        if join.text("side") or kind not in ("", "INNER", "CROSS"):
            return None
    qualifier = table.alias or (table.name if isinstance(table.this, exp.Identifier) else "")
    alone = in_from and not joins
    kept = []
    for part in conjuncts(select.args["where"].this):
        columns = list(part.find_all(exp.Column))
        if not columns or part.find(*_OPAQUE):
            continue
        if all(_own(c, qualifier, alone) for c in columns):
            part = part.copy()
            for column in part.find_all(exp.Column):
                for arg in ("table", "db", "catalog"):
                    column.set(arg, None)
            kept.append(part)
    return exp.and_(*kept) if kept else None


def _own(column: exp.Column, qualifier: str, alone: bool) -> bool:
    if column.args.get("db") or column.args.get("catalog"):
        return False
    if column.table:
        return bool(qualifier) and column.table.lower() == qualifier.lower()
    return alone
