"""A model contract's ``check`` constraints as Delta CHECK constraints.

An enforced contract's ``check`` constraints, column-level and model-level alike, become table
properties ``delta.constraints.<name>`` = the expression (what ``ALTER TABLE ... ADD CONSTRAINT
name CHECK (expr)`` stores, in sqlext and delta-spark) in the ``create or replace table ... as
select`` that builds the model. That one statement checks its own rows against them and commits
nothing when a row breaks one, so a failing build leaves the previous table as it was; every
later write to the table, by dbt or anything else, is checked too. REPLACE drops the CHECK
constraints it does not restate, so a constraint removed from the contract is gone after the next
full build.

A constraint's name is dbt's ``name:``, else ``<column>_check_<n>`` for the n-th unnamed check of
a column and ``check_<n>`` for the n-th unnamed model-level one (lower-cased, as Delta keeps them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

CONSTRAINT_PREFIX = "delta.constraints."


def check_constraints(model: Mapping[str, Any]) -> dict[str, str]:
    """``{name: expression}`` of the model's ``check`` constraints, columns' first (in the
    model's column order), then the model's. Raises DbtRuntimeError for a check without an
    expression, or two different checks under one name."""
    found: dict[str, str] = {}
    where = model.get("alias") or model.get("name") or "model"
    for column in (model.get("columns") or {}).values():
        _collect(found, column.get("constraints") or (), _identifier(column["name"]) + "_check_",
                 where, f"column {column['name']}")
    _collect(found, model.get("constraints") or (), "check_", where, "the model")
    return found


def _collect(found: dict[str, str], constraints: Iterable[Mapping[str, Any]], prefix: str,
             where: str, owner: str) -> None:
    unnamed = 0
    for constraint in constraints:
        if str(constraint.get("type")) not in ("check", "ConstraintType.check"):
            continue
        expression = (constraint.get("expression") or "").strip()
        if not expression:
            raise DbtRuntimeError(f"model {where}: a check constraint of {owner} has no "
                                  "expression; give one (e.g. expression: \"id > 0\")")
        name = constraint.get("name")
        if not name:
            unnamed += 1
            name = f"{prefix}{unnamed}"
        name = name.lower()
        if name in found and found[name] != expression:
            raise DbtRuntimeError(
                f"model {where}: two check constraints are named {name} ({found[name]} and "
                f"{expression}); give them different names")
        found[name] = expression


def _identifier(name: str) -> str:
    """``name`` as the start of a constraint name: lower case, other characters as ``_``."""
    return re.sub(r"[^a-z0-9_]", "_", name.strip('`"').lower())


def _literal(text: str) -> str:
    """``text`` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def tblproperties_sql(configured: Mapping[str, Any] | None,
                      checks: Mapping[str, str] | None) -> str:
    """The ``tblproperties (...)`` clause of a model: its configured ``tblproperties`` (written
    as dbt-spark writes them) and its contract's checks (``delta.constraints.<name>``, which
    win over a configured property of the same key); empty when there are none."""
    checks = checks or {}
    keys = {CONSTRAINT_PREFIX + name for name in checks}
    items = [f"'{key}' = '{value}'" for key, value in (configured or {}).items()
             if str(key).lower() not in keys]
    items += [f"{_literal(CONSTRAINT_PREFIX + name)} = {_literal(expression)}"
              for name, expression in checks.items()]
    return f"tblproperties ({', '.join(items)})" if items else ""


def drift(contract: Mapping[str, str], table: Mapping[str, str]) -> list[str]:
    """How the table's CHECK constraints differ from the contract's, one phrase each (empty
    when they agree)."""
    table = {k.lower(): v for k, v in table.items()}
    out = [f"{name} CHECK ({expression}) is not on the table" for name, expression
           in contract.items() if name not in table]
    out += [f"{name} is CHECK ({table[name]}) on the table, CHECK ({expression}) in the contract"
            for name, expression in contract.items()
            if name in table and table[name] != expression]
    out += [f"{name} CHECK ({expression}) is on the table, not in the contract"
            for name, expression in table.items() if name not in contract]
    return out
