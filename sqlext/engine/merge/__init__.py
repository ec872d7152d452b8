"""MERGE INTO: the WHEN clauses as the engine takes them (``clauses``), their analysis into a
plan (``plan``), file pruning by the source's keys (``prune``) and the command that runs it
(``command``). The public entry points are exported here: ``from sqlext.engine.merge import
merge``."""

from sqlext.engine.merge.clauses import MATCHED, NOT_MATCHED, NOT_MATCHED_BY_SOURCE, Clause
from sqlext.engine.merge.command import MergeResult, merge

__all__ = ["MATCHED", "NOT_MATCHED", "NOT_MATCHED_BY_SOURCE", "Clause", "MergeResult", "merge"]
