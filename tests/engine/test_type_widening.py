"""Type widening on sqlext alone: the widening rules, ALTER COLUMN TYPE through the drop-in
``spark.sql`` (a nested field too), old files read in the new type by every reader path (the
scan, the change feed, DML), and refusals that leave the table as it was. The comparisons with
delta-spark are in tests/deltaspark/test_deltaspark_type_widening.py."""

from __future__ import annotations

import json
import os

import pytest

import sqlext
from sqlext.errors import AnalysisException
from sqlext.log import type_widening
from sqlext.log.table import DeltaLog

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's


@pytest.mark.parametrize("old, new, supported", [
    ("byte", "short", True), ("short", "long", True), ("integer", "double", True),
    ("float", "double", True), ("date", "timestamp_ntz", True),
    ("integer", "decimal(10,0)", True), ("byte", "decimal(12,2)", True),
    ("long", "decimal(20,0)", True), ("decimal(5,2)", "decimal(6,3)", True),
    ("long", "double", False), ("byte", "decimal(4,1)", False),
    ("long", "decimal(19,0)", False), ("decimal(5,2)", "decimal(6,4)", False),
    ("date", "timestamp", False), ("long", "integer", False), ("integer", "string", False),
])
def test_widening_rules(old, new, supported):
    assert type_widening.is_supported(old, new) is supported


def test_alter_column_type_through_drop_in_sql(drop_in, tmp_path):
    """``spark.sql`` ALTER COLUMN TYPE widens a column and a struct field: the protocol gains
    typeWidening (reader and writer), each change is recorded, old rows read in the new types,
    the change feed after them and UPDATE work over old files; a refused change commits nothing."""
    spark, path = drop_in, str(tmp_path / "t")
    spark.sql(f"CREATE TABLE delta.`{path}` (id INT, c SHORT, s STRUCT<x: INT>) USING delta "
              "TBLPROPERTIES (delta.enableTypeWidening = true)")
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 300, named_struct('x', 7))")
    spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN c TYPE DECIMAL(12,2)")
    spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN s.x TYPE BIGINT")
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (2, 1234567890.12, named_struct('x', 1L << 40))")
    snapshot = DeltaLog(path).snapshot()
    assert "typeWidening" in snapshot.protocol.reader_features
    assert "typeWidening" in snapshot.protocol.writer_features
    fields = {f["name"]: f for f in json.loads(snapshot.metadata.schema_string)["fields"]}
    assert fields["c"]["metadata"]["delta.typeChanges"] == [
        {"toType": "decimal(12,2)", "fromType": "short"}]
    assert fields["s"]["type"]["fields"][0]["metadata"]["delta.typeChanges"] == [
        {"toType": "long", "fromType": "integer"}]
    rows = {r.id: (str(r.c), r.s.x) for r in sqlext.read(spark, path).collect()}
    assert rows == {1: ("300.00", 7), 2: ("1234567890.12", 1 << 40)}
    spark.sql(f"UPDATE delta.`{path}` SET c = c + 0.5 WHERE id = 1")
    # a range across the ALTERs is refused, as delta-spark refuses it
    changes = sqlext.changes(spark, path, startingVersion=4).collect()
    assert {(r._change_type, r.id, str(r.c)) for r in changes} == {
        ("insert", 2, "1234567890.12"), ("update_preimage", 1, "300.00"),
        ("update_postimage", 1, "300.50")}
    before = sorted(os.listdir(os.path.join(path, "_delta_log")))
    with pytest.raises(AnalysisException) as info:
        spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN id TYPE DECIMAL(4,1)")
    assert info.value.error_class == "NOT_SUPPORTED_CHANGE_COLUMN"
    assert sorted(os.listdir(os.path.join(path, "_delta_log"))) == before


def test_widening_needs_the_property(spark, tmp_path):
    path = str(tmp_path / "t")
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (c INT) USING delta")
    with pytest.raises(AnalysisException, match="delta.enableTypeWidening") as info:
        sqlext.sql(spark, f"ALTER TABLE delta.`{path}` ALTER COLUMN c TYPE BIGINT")
    assert info.value.error_class == "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP"
    sqlext.sql(spark, f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES "
                      "(delta.enableTypeWidening = true)")
    sqlext.sql(spark, f"ALTER TABLE delta.`{path}` ALTER COLUMN c TYPE BIGINT")
    assert dict(sqlext.read(spark, path).dtypes)["c"] == "bigint"
