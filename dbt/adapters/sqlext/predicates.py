"""``incremental_predicates`` qualified with the target's alias, by sqlglot.

In a MERGE both the target and the new rows are in scope, so an unqualified column is ambiguous.
dbt users write delete+insert predicates against the target with bare column names
(``id != 2``); each bare column outside subqueries becomes ``DBT_INTERNAL_DEST.<column>``.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from sqlext.sql.dialect import Sqlext

_DIALECT = Sqlext()


def qualify(predicates, alias: str) -> list[str]:
    """Each predicate with its unqualified top-level columns qualified by ``alias``."""
    if predicates is None:
        return []
    if isinstance(predicates, str):
        predicates = [predicates]
    out = []
    for text in predicates:
        tree = sqlglot.parse_one(text, dialect=_DIALECT)
        for column in list(tree.find_all(exp.Column)):
            if column.table or column.find_ancestor(exp.Subquery, exp.Select) is not None:
                continue
            column.set("table", exp.to_identifier(alias))
        out.append(tree.sql(dialect=_DIALECT))
    return out
