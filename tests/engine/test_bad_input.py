"""Bad input: each raises a ``SqlextError`` subclass that names the table (and version, where one
is involved) and leaves the table unchanged — same log, same files, same rows."""

from __future__ import annotations

import json

import pytest

import sqlext
from sqlext.errors import (CorruptLogError, InvariantViolationError, SchemaMismatchError,
                           SqlextError, TableNotFoundError, UnsupportedTableFeatureError)
from tests.support.table_checks import table_state
from tests.support import assert_same_rows, read_deltalake

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's

ROWS_DDL = "id int, s string, p string"


@pytest.fixture
def table(spark, table_path):
    sqlext.write(spark.createDataFrame([(1, "x", "a"), (2, "y", "b")], ROWS_DDL), str(table_path),
                 partitionBy=["p"])
    return table_path


@pytest.mark.parametrize("bad_write, error, words", [
    (dict(data=[(1, 2, "a")], ddl="id int, s int, p string"), SchemaMismatchError,
     ["column s", "unchanged"]),
    (dict(data=[(1, "x", "a", 5)], ddl="id int, s string, p string, q int"),
     SchemaMismatchError, ["q", "mergeSchema"]),
    (dict(data=[(1, "x", "a")], partitionBy=["s"]), SchemaMismatchError, ["partition"]),
    (dict(data=[(3, "z", "b")], mode="overwrite", replaceWhere="p = 'a'"),
     InvariantViolationError, ["replaceWhere", "p = 'a'", "Nothing was committed"]),
    (dict(data=[(3, "z", "a")], mode="overwrite", replaceWhere="no_such = 1"), SqlextError,
     ["no_such"]),
    (dict(data=[(3, "z", "a")], mode="sideways"), SqlextError, ["sideways"]),
    (dict(data=[(3, "z", "a")], replaceWhere="p = 'a'"), SqlextError, ["overwrite"]),
])
def test_bad_writes_leave_the_table_unchanged(spark, table, bad_write, error, words):
    spec = dict(bad_write)
    df = spark.createDataFrame(spec.pop("data"), spec.pop("ddl", ROWS_DDL))
    before = table_state(table)
    with pytest.raises(error) as raised:
        sqlext.write(df, str(table), **spec)
    for word in words:
        assert word in str(raised.value)
    assert table_state(table) == before


def _corrupt_latest_commit(path, garbage: bytes) -> None:
    latest = sorted((path / "_delta_log").glob("*.json"))[-1]
    with open(latest, "ab") as f:
        f.write(garbage)


@pytest.mark.parametrize("garbage", [b"{not json at all\n", b"\x00\xff\xfe binary\n",
                                     b'{"add": {"path": 5, "partitionValues": []}}\n'])
def test_corrupt_commit_file(spark, fixture_table, garbage):
    path = fixture_table("simple_table")
    expected_v3 = read_deltalake(path, 3)
    _corrupt_latest_commit(path, garbage)
    before = table_state(path, rows=False)
    with pytest.raises(CorruptLogError) as raised:
        sqlext.read(spark, str(path))
    assert str(path) in str(raised.value) and "version 4" in str(raised.value)
    with pytest.raises(CorruptLogError):
        sqlext.write(spark.createDataFrame([(9,)], "id long"), str(path))
    with pytest.raises(CorruptLogError):
        sqlext.DeltaTable.forPath(spark, str(path)).toDF()
    assert table_state(path, rows=False) == before
    # versions before the damage still read
    assert_same_rows(sqlext.read(spark, str(path), versionAsOf=3), expected_v3)


def test_missing_commit_in_the_middle_is_a_corrupt_log(spark, fixture_table):
    path = fixture_table("simple_table")
    (path / "_delta_log" / f"{2:020d}.json").unlink()
    before = table_state(path, rows=False)
    with pytest.raises(CorruptLogError, match="2"):
        sqlext.read(spark, str(path))
    with pytest.raises(CorruptLogError):
        sqlext.write(spark.createDataFrame([(9,)], "id long"), str(path))
    assert table_state(path, rows=False) == before


def _require_reader_feature(path, feature: str) -> None:
    first = path / "_delta_log" / f"{0:020d}.json"
    lines = [json.loads(line) for line in first.read_text().splitlines() if line.strip()]
    for action in lines:
        if "protocol" in action:
            action["protocol"] = {"minReaderVersion": 3, "minWriterVersion": 7,
                                  "readerFeatures": [feature], "writerFeatures": [feature]}
    first.write_text("\n".join(json.dumps(a) for a in lines) + "\n")


def test_deletion_vectors_feature_without_the_property_rewrites_files(spark, table):
    """A table whose protocol lists deletionVectors (property off, none in use) reads and
    takes appends, DELETE and MERGE as before: files are rewritten, no vector is written."""
    _require_reader_feature(table, "deletionVectors")
    assert sorted(r.id for r in sqlext.read(spark, str(table)).collect()) == [1, 2]
    sqlext.write(spark.createDataFrame([(3, "z", "c")], ROWS_DDL), str(table))
    sqlext.DeltaTable.forPath(spark, str(table)).delete("id = 1")
    source = spark.createDataFrame([(3, "z", "c")], ROWS_DDL).alias("s")
    sqlext.DeltaTable.forPath(spark, str(table)).alias("t").merge(
        source, "t.id = s.id").whenMatchedDelete().execute()
    assert sorted(r.id for r in sqlext.read(spark, str(table)).collect()) == [2]
    assert not list(table.glob("deletion_vector_*.bin"))


@pytest.mark.parametrize("feature", ["someFutureFeature"])
def test_reader_feature_table_is_refused(spark, table, feature):
    _require_reader_feature(table, feature)
    before = table_state(table, rows=False)
    with pytest.raises(UnsupportedTableFeatureError) as raised:
        sqlext.read(spark, str(table))
    assert feature in str(raised.value) and str(table) in str(raised.value)
    with pytest.raises(UnsupportedTableFeatureError, match=feature):
        sqlext.write(spark.createDataFrame([(3, "z", "c")], ROWS_DDL), str(table))
    assert table_state(table, rows=False) == before


def test_not_a_table(spark, tmp_path):
    with pytest.raises(TableNotFoundError, match="not a Delta table"):
        sqlext.read(spark, str(tmp_path / "nothing"))
    assert not (tmp_path / "nothing").exists()
