"""The WHEN clauses of a MERGE, as the engine takes them (:func:`sqlext.engine.merge.command.merge`).

Built by :class:`sqlext.tables.DeltaMergeBuilder` (delta-spark's ``whenMatchedUpdate`` and
friends) and by the SQL planner (``MERGE INTO ... WHEN ...``). Conditions and values are SQL
strings, sqlglot expressions or pyspark Columns over the target's and the source's aliases.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column
from sqlglot import exp

from sqlext.errors import AnalysisException

MATCHED = "matched"
NOT_MATCHED = "notMatched"
NOT_MATCHED_BY_SOURCE = "notMatchedBySource"

#: the clause kinds in the order delta-spark lists them, with their names in messages
KIND_NAMES = {MATCHED: "WHEN MATCHED", NOT_MATCHED: "WHEN NOT MATCHED",
              NOT_MATCHED_BY_SOURCE: "WHEN NOT MATCHED BY SOURCE"}

#: what a condition or a value may be
EXPRESSION_TYPES = (str, Column, exp.Expression)


def omits_condition_early(kinds: list[tuple[str, bool]]) -> str | None:
    """The first clause kind that has a clause without a condition before another clause of the
    same kind (only the last clause of a kind may omit its condition), or None.
    ``kinds``: each clause's kind and whether it has a condition, in the statement's order."""
    seen_unconditional: set[str] = set()
    for kind, has_condition in kinds:
        if kind in seen_unconditional:
            return kind
        if not has_condition:
            seen_unconditional.add(kind)
    return None


@dataclass(frozen=True)
class Clause:
    """One WHEN clause. ``assignments`` is None for ``UPDATE SET *`` / ``INSERT *`` (and DELETE)."""

    kind: str                       # MATCHED | NOT_MATCHED | NOT_MATCHED_BY_SOURCE
    action: str                     # "update" | "delete" | "insert"
    condition: str | Column | exp.Expression | None = None
    assignments: tuple[tuple[str, object], ...] | None = None

    @property
    def star(self) -> bool:
        return self.action != "delete" and self.assignments is None

    def describe(self) -> str:
        what = {"update": "UPDATE SET *" if self.star else "UPDATE", "delete": "DELETE",
                "insert": "INSERT *" if self.star else "INSERT"}[self.action]
        return f"{KIND_NAMES[self.kind]}{' AND <condition>' if self.condition is not None else ''}" \
               f" THEN {what}"


def checked_assignments(value, what: str) -> tuple[tuple[str, object], ...]:
    """``{column: value}`` as a clause's assignments; refuses anything else naming ``what``."""
    if not isinstance(value, dict) or not value:
        raise AnalysisException(f"MERGE: {what} needs a non-empty dict mapping column names to SQL "
                                f"strings or Columns, not {value!r}")
    for key, v in value.items():
        if not isinstance(key, str):
            raise AnalysisException(f"MERGE: {what} keys must be column names, not {key!r}")
        if not isinstance(v, EXPRESSION_TYPES):
            raise AnalysisException(f"MERGE: the value for {key!r} in {what} must be a SQL string "
                                    f"or a Column, not {type(v).__name__}")
    return tuple(value.items())


def checked_condition(value):
    """A clause or ON condition as given (None allowed); refuses what is not an expression."""
    if value is not None and not isinstance(value, EXPRESSION_TYPES):
        raise AnalysisException(f"MERGE: a condition must be a SQL string or a Column, not "
                                f"{type(value).__name__}")
    return value
