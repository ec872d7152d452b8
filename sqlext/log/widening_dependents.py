"""Type changes a CHECK constraint or a generated column forbids, as delta-spark 4.4 forbids them.

delta-spark refuses to change the type of a column (or nested field) that a CHECK constraint's
expression or a generated column's expression refers to: a reference to the changed path, to a
field below it or to a struct holding it blocks the change (``s.x`` does not block ``s.y``). An
``ALTER TABLE ... ALTER|CHANGE COLUMN`` fails with ``DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE``
/ ``DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE``; schema evolution that would widen such a
column (INSERT / MERGE with ``autoMerge`` or ``WITH SCHEMA EVOLUTION``) fails with
``DELTA_CONSTRAINT_DATA_TYPE_MISMATCH`` / ``DELTA_GENERATED_COLUMNS_DATA_TYPE_MISMATCH``. A
generated column's own type cannot change either (its expression keeps its type:
``DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH``). Schemas are Delta's schema JSON; no pyspark.
"""

from __future__ import annotations

import json

import sqlglot
from sqlglot import exp

from sqlext.errors import AnalysisException
from sqlext.log.generated import GENERATION_EXPRESSION
from sqlext.log.type_widening import type_changes

_CONSTRAINT_PREFIX = "delta.constraints."
_SQLSTATE = "42K09"       # every condition below (delta-error-classes.json)
_SQL_NAMES = {"byte": "TINYINT", "short": "SMALLINT", "integer": "INT", "long": "BIGINT"}


def sql_type(type_json) -> str:
    """A schema JSON type as Spark SQL shows it in messages (``INT``, ``DECIMAL(10,2)``)."""
    if isinstance(type_json, str):
        return _SQL_NAMES.get(type_json, type_json.upper())
    if isinstance(type_json, dict):
        return str(type_json.get("type", "")).upper()
    return str(type_json)


def changed_types(before: dict, after: dict) -> list[tuple[list[str], object, object]]:
    """``[(path, old type, new type)]`` of every column or nested field (``element``, ``key``,
    ``value`` for array and map parts) whose type differs between two struct schema JSONs;
    fields only one side has are left out."""
    out: list[tuple[list[str], object, object]] = []
    _diff(before, after, [], out)
    return out


def _diff(old, new, path: list[str], out: list) -> None:
    kind = old.get("type") if isinstance(old, dict) else None
    if kind is None or not isinstance(new, dict) or new.get("type") != kind:
        if old != new:
            out.append((path, old, new))
        return
    if kind == "struct":
        theirs = {f["name"].lower(): f for f in new.get("fields") or []}
        for f in old.get("fields") or []:
            other = theirs.get(f["name"].lower())
            if other is not None:
                _diff(f["type"], other["type"], path + [f["name"]], out)
    elif kind == "array":
        _diff(old["elementType"], new["elementType"], path + ["element"], out)
    elif kind == "map":
        _diff(old["keyType"], new["keyType"], path + ["key"], out)
        _diff(old["valueType"], new["valueType"], path + ["value"], out)


def _references(text: str) -> list[list[str]] | None:
    """The name parts of every column an expression refers to; None when it cannot be parsed
    (then it is taken to refer to every column, as refusing is the safe side)."""
    try:
        tree = sqlglot.parse_one(text, read="spark")
    except sqlglot.errors.ParseError:
        return None
    refs = []
    for column in tree.find_all(exp.Column):
        parts = [p.name for p in column.parts]
        node = column
        while isinstance(node.parent, exp.Dot) and node.parent.this is node:
            node = node.parent
            parts.append(node.expression.name)
        refs.append(parts)
    return refs


def _refers_to(text: str, path: list[str]) -> bool:
    refs = _references(text)
    if refs is None:
        return True
    wanted = [p.lower() for p in path]
    # as delta-spark's SchemaUtils.containsDependentExpression: the reference and the changed
    # path agree on their common length (``s`` blocks a change of ``s.y``; ``s.x`` does not)
    return any(all(r.lower() == w for r, w in zip(ref, wanted)) for ref in refs)


def dependents(schema: dict, configuration: dict, path: list[str]) -> tuple[dict, dict]:
    """``({constraint key: expression}, {generated column: expression})`` referring to the
    column or field at ``path``, to a field below it or to a struct holding it."""
    checks = {k: v for k, v in configuration.items()
              if k.lower().startswith(_CONSTRAINT_PREFIX) and _refers_to(str(v), path)}
    generated = {}
    for f in schema.get("fields") or []:
        text = (f.get("metadata") or {}).get(GENERATION_EXPRESSION)
        if text is not None and _refers_to(str(text), path):
            generated[f["name"]] = str(text)
    return checks, generated


def refuse_dependent_changes(table: str, version: int, before: dict, after: dict,
                             configuration: dict, statement: str | None = None) -> None:
    """Raise :class:`AnalysisException` when a type that differs between the schemas ``before``
    and ``after`` belongs to a generated column or is referred to by a CHECK constraint or a
    generated column. ``statement`` names an ALTER TABLE (its error conditions); None means
    schema evolution of a write (its own conditions)."""
    generated_columns = {f["name"].lower(): f for f in before.get("fields") or []
                         if GENERATION_EXPRESSION in (f.get("metadata") or {})}
    for path, old, new in changed_types(before, after):
        name = ".".join(path)
        checks, generated = dependents(before, configuration, path)
        listed, noun = (checks, "check constraint(s)") if checks else \
            (generated, "generated column(s)")
        if listed:
            _refuse(table, version, statement, name, old, new, listed, noun)
        own = generated_columns.get(path[0].lower()) if len(path) == 1 else None
        if own is not None and statement is not None:
            raise AnalysisException(
                f"{statement} on table {table} (version {version}): the expression type of the "
                f"generated column {name} is {sql_type(old)}, but the column type would be "
                f"{sql_type(new)}; a generated column's type cannot change. Drop and re-add "
                "the column to change it. The table is unchanged.",
                error_class="DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH", table=table,
                version=version, sqlstate=_SQLSTATE, message_parameters={
                    "columnName": name, "expressionType": sql_type(old),
                    "columnType": sql_type(new)})


def _refuse(table: str, version: int, statement: str | None, name: str, old, new,
            listed: dict, noun: str) -> None:
    shown = "\n".join(f"{k} -> {v}" for k, v in listed.items())
    constraint = noun.startswith("check")
    key = "constraints" if constraint else "generatedColumns"
    prefix = "DELTA_CONSTRAINT" if constraint else "DELTA_GENERATED_COLUMNS"
    undo = ("drop the constraint(s) first (ALTER TABLE ... DROP CONSTRAINT) and add them back "
            "after" if constraint else "the generated column(s) must be dropped first")
    if statement is not None:
        raise AnalysisException(
            f"{statement} on table {table} (version {version}): cannot alter column {name} "
            f"because this column is referenced by the following {noun}:\n{shown}\nTo change "
            f"its type, {undo}. The table is unchanged.",
            error_class=f"{prefix}_DEPENDENT_COLUMN_CHANGE", table=table, version=version,
            sqlstate=_SQLSTATE,
            message_parameters={"columnName": name, key: shown})
    raise AnalysisException(
        f"table {table} (version {version}): column {name} has data type {sql_type(old)} and "
        f"cannot be altered to data type {sql_type(new)} because this column is referenced by "
        f"the following {noun}:\n{shown}\nCast the data to {sql_type(old)} before writing, or "
        f"{undo}. The table is unchanged.",
        error_class=f"{prefix}_DATA_TYPE_MISMATCH", table=table, version=version,
        sqlstate=_SQLSTATE,
        message_parameters={"columnName": name, "columnType": sql_type(old),
                            "dataType": sql_type(new), key: shown})


def refuse_evolution_widening(table: str, version: int, before, after) -> None:
    """:func:`refuse_dependent_changes` for a write's new metadata ``after`` (a
    :class:`~sqlext.log.actions.Metadata`) over the table's ``before``, when it records more
    type changes than ``before`` does (schema evolution widened a type: a replaced schema
    records none)."""
    old, new = json.loads(before.schema_string), json.loads(after.schema_string)
    if len(type_changes(new)) > len(type_changes(old)):
        refuse_dependent_changes(table, version, old, new, before.configuration)
