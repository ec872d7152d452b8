"""Type widening against CHECK constraints and generated columns on sqlext alone: which
references block which change (:mod:`sqlext.log.widening_dependents`), and the DataFrame
write path (``mergeSchema``) refusing as SQL does. The comparisons with delta-spark are in
tests/deltaspark/test_deltaspark_type_widening_corners.py."""

from __future__ import annotations

import copy
import os

import pytest

import sqlext
from sqlext.errors import AnalysisException
from sqlext.log.widening_dependents import changed_types, dependents, refuse_dependent_changes

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's

SCHEMA = {"type": "struct", "fields": [
    {"name": "id", "type": "integer", "nullable": True, "metadata": {}},
    {"name": "s", "type": {"type": "struct", "fields": [
        {"name": "x", "type": "integer", "nullable": True, "metadata": {}},
        {"name": "y", "type": "integer", "nullable": True, "metadata": {}}]},
     "nullable": True, "metadata": {}},
    {"name": "a", "type": {"type": "array", "elementType": "integer", "containsNull": True},
     "nullable": True, "metadata": {}},
    {"name": "g", "type": "long", "nullable": True,
     "metadata": {"delta.generationExpression": "CAST(s.y AS BIGINT) * 2"}},
]}


def _widened(path: list[str], new: str) -> dict:
    schema = copy.deepcopy(SCHEMA)
    node = {"type": schema}
    for name in path:
        dtype = node["type"]
        if dtype["type"] == "array":
            node = {"type": dtype["elementType"]}
            holder, key = dtype, "elementType"
            continue
        node = next(f for f in dtype["fields"] if f["name"] == name)
        holder, key = node, "type"
    holder[key] = new
    return schema


def test_changed_types_lists_every_changed_path():
    assert changed_types(SCHEMA, _widened(["s", "x"], "long")) == [(["s", "x"], "integer", "long")]
    assert changed_types(SCHEMA, _widened(["a", "element"], "long")) == [
        (["a", "element"], "integer", "long")]
    assert changed_types(SCHEMA, SCHEMA) == []


@pytest.mark.parametrize("constraint, path, blocked", [
    ("s.x > 0", ["s", "x"], True),          # the field itself
    ("s.x > 0", ["s", "y"], False),         # a sibling
    ("s IS NOT NULL", ["s", "y"], True),    # the struct holding it
    ("s.x > 0", ["s"], True),               # a field below the changed struct
    ("ID > 0", ["id"], True),               # names are case-insensitive
    ("a[0] > 0", ["a", "element"], True),   # an array column holding the element
    ("id > 0", ["a", "element"], False),
])
def test_which_references_block_a_change(constraint, path, blocked):
    checks, _ = dependents(SCHEMA, {"delta.constraints.c": constraint}, path)
    assert bool(checks) is blocked


def test_generated_columns_block_what_they_read_and_their_own_type():
    _, generated = dependents(SCHEMA, {}, ["s", "y"])
    assert generated == {"g": "CAST(s.y AS BIGINT) * 2"}
    with pytest.raises(AnalysisException) as info:
        refuse_dependent_changes("t", 3, SCHEMA, _widened(["s", "y"], "long"), {})
    assert info.value.error_class == "DELTA_GENERATED_COLUMNS_DATA_TYPE_MISMATCH"
    assert (info.value.table, info.value.version) == ("t", 3)
    with pytest.raises(AnalysisException) as info:
        refuse_dependent_changes("t", 3, SCHEMA, _widened(["g"], "decimal(22,0)"), {}, "ALTER")
    assert info.value.error_class == "DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH"
    # an unrelated change passes
    refuse_dependent_changes("t", 3, SCHEMA, _widened(["s", "x"], "long"), {}, "ALTER")


def test_an_unparsable_constraint_blocks_every_change():
    with pytest.raises(AnalysisException) as info:
        refuse_dependent_changes("t", 0, SCHEMA, _widened(["id"], "long"),
                                 {"delta.constraints.odd": "id >>> ("}, "ALTER TABLE t")
    assert info.value.error_class == "DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE"


def test_dataframe_merge_schema_write_is_refused_like_sql(spark, tmp_path):
    """``sqlext.write(..., mergeSchema=True)`` of wider data into a constrained column fails
    before any file is written; into an unconstrained one it widens."""
    path = str(tmp_path / "t")
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (a INT, b INT) USING delta "
                      "TBLPROPERTIES (delta.enableTypeWidening = true)")
    sqlext.sql(spark, f"ALTER TABLE delta.`{path}` ADD CONSTRAINT c CHECK (a > 0)")
    with pytest.raises(AnalysisException) as info:
        sqlext.write(spark.sql("SELECT 5000000000L AS a, 1 AS b"), path, mergeSchema=True)
    assert info.value.error_class == "DELTA_CONSTRAINT_DATA_TYPE_MISMATCH"
    assert not [f for f in os.listdir(path) if f.endswith(".parquet")]
    sqlext.write(spark.sql("SELECT 1 AS a, 5000000000L AS b"), path, mergeSchema=True)
    assert dict(sqlext.read(spark, path).dtypes) == {"a": "int", "b": "bigint"}
