"""``DeltaMergeBuilder``: delta-spark's MERGE builder (``DeltaTable.merge(source, condition)``).

Each ``when...`` method returns a new builder with one more clause; :meth:`execute` runs the
MERGE (see :mod:`sqlext.engine.merge`) and returns delta-spark's one-row result DataFrame.
Conditions and values are SQL strings or pyspark Columns that may refer to the target's alias
(``DeltaTable.alias``) and the source's (``DataFrame.alias``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame

from sqlext.errors import AnalysisException

if TYPE_CHECKING:
    from sqlext.delta_table import DeltaTable

MATCHED = "matched"
NOT_MATCHED = "notMatched"
NOT_MATCHED_BY_SOURCE = "notMatchedBySource"

#: the clause kinds in the order delta-spark lists them, with their names in messages
KIND_NAMES = {MATCHED: "WHEN MATCHED", NOT_MATCHED: "WHEN NOT MATCHED",
              NOT_MATCHED_BY_SOURCE: "WHEN NOT MATCHED BY SOURCE"}


@dataclass(frozen=True)
class Clause:
    """One WHEN clause. ``assignments`` is None for ``UPDATE SET *`` / ``INSERT *`` (and DELETE)."""

    kind: str                       # MATCHED | NOT_MATCHED | NOT_MATCHED_BY_SOURCE
    action: str                     # "update" | "delete" | "insert"
    condition: str | Column | None = None
    assignments: tuple[tuple[str, object], ...] | None = None

    @property
    def star(self) -> bool:
        return self.action != "delete" and self.assignments is None

    def describe(self) -> str:
        what = {"update": "UPDATE SET *" if self.star else "UPDATE", "delete": "DELETE",
                "insert": "INSERT *" if self.star else "INSERT"}[self.action]
        return f"{KIND_NAMES[self.kind]}{' AND <condition>' if self.condition is not None else ''}" \
               f" THEN {what}"


def _assignments(value, what: str) -> tuple[tuple[str, object], ...]:
    if not isinstance(value, dict) or not value:
        raise AnalysisException(f"MERGE: {what} needs a non-empty dict mapping column names to SQL "
                                f"strings or Columns, not {value!r}")
    for key, v in value.items():
        if not isinstance(key, str):
            raise AnalysisException(f"MERGE: {what} keys must be column names, not {key!r}")
        if not isinstance(v, (str, Column)):
            raise AnalysisException(f"MERGE: the value for {key!r} in {what} must be a SQL string "
                                    f"or a Column, not {type(v).__name__}")
    return tuple(value.items())


def _condition(value):
    if value is not None and not isinstance(value, (str, Column)):
        raise AnalysisException(f"MERGE: a condition must be a SQL string or a Column, not "
                                f"{type(value).__name__}")
    return value


class DeltaMergeBuilder:
    """Builds a MERGE of ``source`` into a Delta table; see delta-spark's ``DeltaMergeBuilder``."""

    def __init__(self, table: "DeltaTable", source: DataFrame, condition,
                 clauses: tuple[Clause, ...] = (), schema_evolution: bool = False):
        if not isinstance(source, DataFrame):
            raise AnalysisException(f"MERGE: the source must be a DataFrame, not "
                                    f"{type(source).__name__}")
        if condition is None:
            raise AnalysisException("MERGE needs a condition (SQL string or Column) matching "
                                    "source rows to target rows")
        self._table = table
        self._source = source
        self._condition = _condition(condition)
        self._clauses = clauses
        self._schema_evolution = schema_evolution

    def _with(self, clause: Clause) -> "DeltaMergeBuilder":
        return DeltaMergeBuilder(self._table, self._source, self._condition,
                                 self._clauses + (clause,), self._schema_evolution)

    # --- WHEN MATCHED -------------------------------------------------------------------------

    def whenMatchedUpdate(self, condition=None, set=None) -> "DeltaMergeBuilder":  # noqa: A002
        """Update matched target rows (where ``condition`` holds) with ``set``:
        ``{target column: value over target and source}``."""
        return self._with(Clause(MATCHED, "update", _condition(condition),
                                 _assignments(set, "whenMatchedUpdate(set=...)")))

    def whenMatchedUpdateAll(self, condition=None) -> "DeltaMergeBuilder":
        """``UPDATE SET *``: every target column takes the source column of the same name."""
        return self._with(Clause(MATCHED, "update", _condition(condition)))

    def whenMatchedDelete(self, condition=None) -> "DeltaMergeBuilder":
        """Delete matched target rows (where ``condition`` holds)."""
        return self._with(Clause(MATCHED, "delete", _condition(condition)))

    # --- WHEN NOT MATCHED [BY TARGET] -----------------------------------------------------------

    def whenNotMatchedInsert(self, condition=None, values=None) -> "DeltaMergeBuilder":
        """Insert source rows that match no target row: ``values`` maps target columns to values
        over the source; columns not given are NULL."""
        return self._with(Clause(NOT_MATCHED, "insert", _condition(condition),
                                 _assignments(values, "whenNotMatchedInsert(values=...)")))

    def whenNotMatchedInsertAll(self, condition=None) -> "DeltaMergeBuilder":
        """``INSERT *``: insert unmatched source rows, columns mapped by name."""
        return self._with(Clause(NOT_MATCHED, "insert", _condition(condition)))

    # --- WHEN NOT MATCHED BY SOURCE -----------------------------------------------------------

    def whenNotMatchedBySourceUpdate(self, condition=None, set=None) -> "DeltaMergeBuilder":  # noqa: A002
        """Update target rows that no source row matches, with ``set`` over the target row."""
        return self._with(Clause(NOT_MATCHED_BY_SOURCE, "update", _condition(condition),
                                 _assignments(set, "whenNotMatchedBySourceUpdate(set=...)")))

    def whenNotMatchedBySourceDelete(self, condition=None) -> "DeltaMergeBuilder":
        """Delete target rows that no source row matches (where ``condition`` holds)."""
        return self._with(Clause(NOT_MATCHED_BY_SOURCE, "delete", _condition(condition)))

    # --- options and execution ----------------------------------------------------------------

    def withSchemaEvolution(self) -> "DeltaMergeBuilder":
        """Let ``UPDATE SET *`` / ``INSERT *`` (and assignments naming source columns) add the
        source's columns that the target lacks to the target's schema."""
        return DeltaMergeBuilder(self._table, self._source, self._condition, self._clauses, True)

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return self._clauses

    def execute(self) -> DataFrame:
        """Run the MERGE in one commit. Returns one row: ``num_affected_rows``,
        ``num_updated_rows``, ``num_deleted_rows``, ``num_inserted_rows``."""
        from sqlext.engine.merge import merge
        result = merge(self._table._spark, self._table._log, self._source, self._condition,
                       self._clauses, alias=self._table._alias,
                       schema_evolution=self._schema_evolution)
        return result.summary(self._table._spark)

