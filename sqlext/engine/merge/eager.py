"""Which clause acts on a joined MERGE row, with every clause condition evaluated on the rows
delta-spark 4.4 evaluates it on, so that a condition failing there (ANSI division by zero, an
overflowing cast, ``raise_error``) fails the MERGE in sqlext too.

delta-spark computes the conditions as columns of its joined rows, whatever clause then takes
the row (measured, tests/deltaspark/test_deltaspark_lazy_clause_values.py):

- a WHEN MATCHED condition on every matched row, also after an earlier clause took it; on the
  unmatched target rows when the MERGE has WHEN NOT MATCHED BY SOURCE clauses (its join is full);
  on the unmatched source rows when the MERGE has WHEN NOT MATCHED [BY SOURCE] clauses or the
  table uses deletion vectors, and some target row matched (with no match it only inserts);
- a WHEN NOT MATCHED BY SOURCE condition on every joined row (the unmatched source rows too,
  where the target's columns are NULL; an unqualified name both sides have is the target's),
  except on a table with deletion vectors in a MERGE of such clauses only (no unmatched source
  row is joined then);
- a WHEN NOT MATCHED condition on every source row (computed on the source before the join).

A MERGE of WHEN MATCHED clauses only whose first join touches no file (no condition holds for
a matched pair) makes no second join: its conditions are not evaluated on unmatched source rows.
With NOT MATCHED BY SOURCE clauses delta-spark joins every file of the table.

The first clause of the row's kind whose condition holds is the least index among the clauses
that act: ``least`` evaluates every argument, a ``CASE`` stops at the first branch that holds.
"""

from __future__ import annotations

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from sqlglot import exp

from sqlext.engine.conditions import Condition
from sqlext.engine.merge.clauses import MATCHED, NOT_MATCHED, NOT_MATCHED_BY_SOURCE


def target_scoped(condition: Condition, alias: str | None, columns: set[str]) -> Column | None:
    """A WHEN NOT MATCHED BY SOURCE ``condition`` with its unqualified names of target
    ``columns`` (lower case) qualified by the target's ``alias``, so that it analyses over the
    joined rows, where delta-spark evaluates it (an unqualified name both sides have would be
    ambiguous there; in the clause's scope it is the target's). When no name needs it (a
    pyspark Column: its tree is Spark's analysed SQL, its names qualified already), that SQL.
    None without an alias or a sqlglot tree."""
    if alias is None or condition.predicate is None:
        return None
    tree = condition.predicate.copy()
    names = [c for c in tree.find_all(exp.Column) if not c.table and c.name.lower() in columns
             and c.find_ancestor(exp.Lambda) is None]
    if not names:
        try:
            return F.expr(condition.sql)
        except PySparkException:    # Spark's SQL of an expression does not always parse
            return None
    for name in names:
        name.set("table", exp.to_identifier(alias))
    return F.expr(tree.sql(dialect="spark"))


def source_rows_evaluated(plan, deletion_vectors: bool) -> bool:
    """Whether delta-spark evaluates a condition of ``plan`` on unmatched source rows (once a
    target row matched): then the join must keep them."""
    matched = any(c.condition is not None for c in plan.of(MATCHED))
    by_source = plan.of(NOT_MATCHED_BY_SOURCE)
    # measured: with deletion vectors, a MERGE of NOT MATCHED BY SOURCE clauses only keeps no
    # unmatched source row
    by_source_only = deletion_vectors and not plan.has_insert and not plan.of(MATCHED)
    return (matched and (plan.has_insert or bool(by_source) or deletion_vectors)) \
        or (any(c.condition_joined for c in by_source) and not by_source_only)


def touching(plan) -> Column:
    """Whether delta-spark's first join of a MERGE of WHEN MATCHED clauses only touches the file
    of a matched pair: one of the clauses' conditions holds for it (an OR, evaluated left to
    right). With no file touched, it makes no second join, where conditions are evaluated on
    unmatched source rows too."""
    holds = [c.condition.column if c.condition is not None else F.lit(True)
             for c in plan.of(MATCHED)]
    out = holds[0]
    for h in holds[1:]:
        out = out | h
    return F.coalesce(out, F.lit(False))


def clause_index(plan, present_target: Column, present_source: Column, target: DataFrame,
                 source: DataFrame, source_rows: bool) -> Column:
    """The index of the clause acting on a joined row (NULL: none); ``source_rows``: WHEN
    MATCHED conditions are evaluated on unmatched source rows too."""
    both = present_target & present_source
    acting = {MATCHED: both, NOT_MATCHED_BY_SOURCE: present_target & ~present_source,
              NOT_MATCHED: present_source & ~present_target}
    seen = both
    if plan.of(NOT_MATCHED_BY_SOURCE):
        seen = seen | acting[NOT_MATCHED_BY_SOURCE]
    if source_rows:
        seen = seen | acting[NOT_MATCHED]
    picks = []
    for c in plan.clauses:
        if c.condition is None:
            takes = acting[c.kind]
        elif c.kind == MATCHED:
            # the condition first (an AND evaluates its right side only when the left holds)
            takes = (seen & plan.condition_column(c, target, source)) & both
        else:
            takes = plan.condition_column(c, target, source) & acting[c.kind]
        picks.append(F.when(takes, F.lit(c.index)))
    return picks[0] if len(picks) == 1 else F.least(*picks)


def conditions_after_join(plan) -> bool:
    """Whether delta-spark evaluates the WHEN NOT MATCHED conditions of an insert-only MERGE on
    the unmatched source rows only (with several clauses; one clause's condition filters every
    source row before its anti join)."""
    return len(plan.of(NOT_MATCHED)) > 1 and any(c.condition is not None
                                                 for c in plan.of(NOT_MATCHED))


def insert_index(plan, rows: DataFrame, unmatched: Column | None = None) -> Column:
    """The WHEN NOT MATCHED clause inserting a source row of ``rows`` (NULL: none). With one
    clause, its condition computed on the source before the join; with several (see
    :func:`conditions_after_join`), every condition evaluated over ``rows``, where ``unmatched``
    holds (the caller keeps the CASE above its join: a filter on the source's columns alone
    would be pushed below it, to every source row)."""
    if not conditions_after_join(plan):
        return plan.first(NOT_MATCHED, None, rows)
    picks = [F.when(c.condition.column if c.condition is not None else F.lit(True),
                    F.lit(c.index)) for c in plan.of(NOT_MATCHED)]
    index = F.least(*picks)
    return index if unmatched is None else F.when(unmatched, index)
