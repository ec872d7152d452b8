"""Generated columns (``delta.generationExpression``) are written as delta-spark writes them:
left out, they are computed from their expression on every write path (append, overwrite,
replaceWhere, INSERT, MERGE's INSERT); given, they must equal the expression (else
GeneratedColumnMismatchError, nothing committed); UPDATE and MERGE's UPDATE recompute them."""

from __future__ import annotations

import json

import pytest

import sqlext
from sqlext.errors import AnalysisException, GeneratedColumnMismatchError, SqlextError
from sqlext.log.table import DeltaLog

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's


def _create(spark, path, extra: str = "") -> None:
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (a INT, b INT GENERATED ALWAYS AS "
                      f"(a * 2), d DATE GENERATED ALWAYS AS (CAST(ts AS DATE)), ts TIMESTAMP, "
                      f"v STRING) USING delta {extra}")


def _rows(spark, path):
    return sorted(tuple(r) for r in sqlext.read(spark, path)
                  .selectExpr("a", "b", "cast(d as string)", "v").collect())


def _version(path) -> int:
    return DeltaLog(str(path)).snapshot().version


def test_create_records_the_expression_and_protocol(spark, table_path):
    _create(spark, table_path)
    snap = DeltaLog(str(table_path)).snapshot()
    fields = {f["name"]: f["metadata"] for f in json.loads(snap.metadata.schema_string)["fields"]}
    assert fields["b"] == {"delta.generationExpression": "a * 2"}
    assert fields["d"] == {"delta.generationExpression": "CAST(ts AS DATE)"}
    assert (snap.protocol.min_reader_version, snap.protocol.min_writer_version) == (1, 4)


def test_every_write_path_computes_missing_generated_columns(spark, table_path):
    path = str(table_path)
    _create(spark, path, "PARTITIONED BY (d)")
    df = spark.createDataFrame([(1, "2024-01-01 10:00:00", "x"), (2, "2024-01-02 11:00:00", "y")],
                               "a int, ts string, v string").selectExpr(
        "a", "cast(ts as timestamp) ts", "v")
    sqlext.write(df, path)                                                 # append
    sqlext.sql(spark, f"INSERT INTO delta.`{path}` (a, ts, v) VALUES "
                      f"(3, TIMESTAMP'2024-01-03 00:00:00', 'z')")          # INSERT
    assert _rows(spark, path) == [(1, 2, "2024-01-01", "x"), (2, 4, "2024-01-02", "y"),
                                  (3, 6, "2024-01-03", "z")]
    more = spark.createDataFrame([(5, "2024-01-01 00:00:01", "r")], "a int, ts string, v string"
                                 ).selectExpr("a", "cast(ts as timestamp) ts", "v")
    sqlext.write(more, path, mode="overwrite", replaceWhere="d = '2024-01-01'")   # replaceWhere
    assert _rows(spark, path) == [(2, 4, "2024-01-02", "y"), (3, 6, "2024-01-03", "z"),
                                  (5, 10, "2024-01-01", "r")]
    # partition values of the generated partition column come from the expression
    parts = {f.partition_values["d"] for f in DeltaLog(path).snapshot().files}
    assert parts == {"2024-01-01", "2024-01-02", "2024-01-03"}
    t = sqlext.DeltaTable.forPath(spark, path)
    src = spark.createDataFrame([(2, "u"), (9, "n")], "a int, v string").selectExpr(
        "a", "v", "timestamp'2024-02-01 00:00:00' ts")
    (t.alias("t").merge(src.alias("s"), "t.a = s.a")
     .whenMatchedUpdate(set={"a": "s.a + 100", "v": "s.v"})
     .whenNotMatchedInsert(values={"a": "s.a", "ts": "s.ts", "v": "s.v"}).execute())
    assert _rows(spark, path) == [(3, 6, "2024-01-03", "z"), (5, 10, "2024-01-01", "r"),
                                  (9, 18, "2024-02-01", "n"), (102, 204, "2024-01-02", "u")]
    sqlext.write(more, path, mode="overwrite")                             # overwrite
    assert _rows(spark, path) == [(5, 10, "2024-01-01", "r")]


def test_update_recomputes_dependent_generated_columns(spark, table_path):
    path = str(table_path)
    _create(spark, path)
    sqlext.sql(spark, f"INSERT INTO delta.`{path}` (a, ts, v) VALUES "
                      f"(1, TIMESTAMP'2024-01-01 00:00:00', 'x'), (2, NULL, 'y')")
    sqlext.sql(spark, f"UPDATE delta.`{path}` SET a = a + 10, ts = TIMESTAMP'2025-05-05 05:00:00'"
                      " WHERE a = 2")
    sqlext.DeltaTable.forPath(spark, path).update("a = 1", {"a": "7"})
    assert _rows(spark, path) == [(7, 14, "2024-01-01", "x"), (12, 24, "2025-05-05", "y")]
    # the change feed's postimage carries the recomputed value
    post = sorted(tuple(r) for r in sqlext.changes(spark, path, startingVersion=2)
                  .filter("_change_type = 'update_postimage'").select("a", "b").collect())
    assert post == [(7, 14), (12, 24)]


def test_merge_insert_star_without_the_generated_column(spark, table_path):
    path = str(table_path)
    _create(spark, path)
    src = spark.createDataFrame([(4, "w")], "a int, v string").selectExpr(
        "a", "v", "timestamp'2024-03-03 03:00:00' ts")
    t = sqlext.DeltaTable.forPath(spark, path)
    t.alias("t").merge(src.alias("s"), "t.a = s.a").whenNotMatchedInsertAll().execute()
    assert _rows(spark, path) == [(4, 8, "2024-03-03", "w")]


def test_given_values_must_equal_the_expression(spark, table_path):
    path = str(table_path)
    _create(spark, path)
    good = spark.createDataFrame([(1, 2, "x")], "a int, b int, v string")
    sqlext.write(good, path)                       # the right value is accepted
    before = _version(path)
    bad = spark.createDataFrame([(1, 3, "x")], "a int, b int, v string")
    with pytest.raises(GeneratedColumnMismatchError) as err:
        sqlext.write(bad, path)
    text = str(err.value)
    assert path in text and f"version {before}" in text and "column b" in text
    assert "a * 2" in text
    with pytest.raises(GeneratedColumnMismatchError):
        sqlext.sql(spark, f"INSERT INTO delta.`{path}` (a, b, v) VALUES (5, 1, 'q')")
    with pytest.raises(GeneratedColumnMismatchError):
        sqlext.DeltaTable.forPath(spark, path).update("a = 1", {"b": "99"})
    src = spark.createDataFrame([(1, 77)], "a int, b int")
    with pytest.raises(GeneratedColumnMismatchError):
        (sqlext.DeltaTable.forPath(spark, path).alias("t").merge(src.alias("s"), "t.a = s.a")
         .whenMatchedUpdate(set={"b": "s.b"}).execute())
    assert _version(path) == before
    assert _rows(spark, path) == [(1, 2, None, "x")]
    assert issubclass(GeneratedColumnMismatchError, SqlextError)


def test_invalid_generation_expressions_are_refused_at_create(spark, table_path):
    with pytest.raises(AnalysisException, match="no_such"):
        sqlext.sql(spark, f"CREATE TABLE delta.`{table_path}` (a INT, b INT GENERATED ALWAYS AS "
                          "(no_such + 1)) USING delta")
    with pytest.raises(AnalysisException, match="EXPR_TYPE_MISMATCH"):
        sqlext.sql(spark, f"CREATE TABLE delta.`{table_path}` (a INT, b BIGINT GENERATED ALWAYS "
                          "AS (a * 2)) USING delta")
    with pytest.raises(AnalysisException, match="generated column"):
        sqlext.sql(spark, f"CREATE TABLE delta.`{table_path}` (a INT, b INT GENERATED ALWAYS AS "
                          "(a + 1), c INT GENERATED ALWAYS AS (b + 1)) USING delta")
    assert not (table_path / "_delta_log").exists()


def test_deletion_vector_table_update_and_merge_recompute(spark, table_path):
    path = str(table_path)
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (a INT, b INT GENERATED ALWAYS AS (a + 100),"
                      " v STRING) USING delta TBLPROPERTIES ('delta.enableDeletionVectors' = "
                      "'true')")
    sqlext.write(spark.createDataFrame([(i, f"v{i}") for i in range(6)], "a int, v string"),
                 path)
    sqlext.sql(spark, f"UPDATE delta.`{path}` SET a = a * 10 WHERE v = 'v3'")
    src = spark.createDataFrame([("v4", 7), ("new", 8)], "v string, a int")
    (sqlext.DeltaTable.forPath(spark, path).alias("t").merge(src.alias("s"), "t.v = s.v")
     .whenMatchedUpdate(set={"a": "s.a"}).whenNotMatchedInsertAll().execute())
    rows = sorted(tuple(r) for r in sqlext.read(spark, path).select("v", "a", "b").collect())
    assert rows == [("new", 8, 108), ("v0", 0, 100), ("v1", 1, 101), ("v2", 2, 102),
                    ("v3", 30, 130), ("v4", 7, 107), ("v5", 5, 105)]
    assert any(f.deletion_vector for f in DeltaLog(path).snapshot().files)


def test_tables_made_from_data_do_not_inherit_generation_or_identity(spark, tmp_path):
    """As delta-spark: a table created from a DataFrame read from a table with generated and
    identity columns gets plain columns; ADD COLUMNS cannot make generated ones."""
    source = str(tmp_path / "source")
    sqlext.sql(spark, f"CREATE TABLE delta.`{source}` (id BIGINT GENERATED ALWAYS AS IDENTITY, "
                      "a INT, b INT GENERATED ALWAYS AS (a + 1)) USING delta")
    sqlext.write(spark.createDataFrame([(1,)], "a int"), source)
    copy = str(tmp_path / "copy")
    sqlext.write(sqlext.read(spark, source), copy)
    fields = json.loads(DeltaLog(copy).snapshot().metadata.schema_string)["fields"]
    assert all(f["metadata"] == {} for f in fields)
    sqlext.write(spark.createDataFrame([(5, 1, 9)], "id long, a int, b int"), copy)  # plain now
    before = _version(source)
    with pytest.raises(SqlextError, match="only CREATE TABLE"):
        sqlext.sql(spark, f"ALTER TABLE delta.`{source}` ADD COLUMNS (c INT GENERATED ALWAYS AS "
                          "(a + 2))")
    assert _version(source) == before
