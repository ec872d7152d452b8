"""Table constraints as delta-spark implements them: ``ALTER TABLE ... ADD CONSTRAINT c CHECK
(...)`` / ``DROP CONSTRAINT``, ``ALTER|CHANGE COLUMN c SET|DROP NOT NULL``, each one commit; and
their enforcement on every write path (append, overwrite, INSERT, UPDATE, MERGE update and
insert, replaceWhere): a violating row fails the write, nothing is committed and no file is
left in the table's directory."""

from __future__ import annotations

import json
import os

import deltalake
import pytest
from pyspark.sql import types as T

import sqlext
from sqlext.catalog import Catalog, TableRef
from sqlext.engine import ddl
from sqlext.errors import (AnalysisException, ConstraintViolationError, InvariantViolationError,
                           UnsupportedOperationError)
from sqlext.log.actions import Protocol
from sqlext.log.protocol import protocol_for_new_table, upgrade_for_features
from sqlext.log.table import DeltaLog

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's


def _location(spark, name: str) -> str:
    return Catalog(spark).resolve(name).location


def _log(spark, name: str) -> DeltaLog:
    return DeltaLog(_location(spark, name))


def _listing(location: str) -> set[str]:
    """Every file under the table's directory (log included)."""
    root = location.removeprefix("file:")
    return {os.path.relpath(os.path.join(d, f), root)
            for d, _, files in os.walk(root) for f in files}


def _commit(log: DeltaLog, version: int) -> list[dict]:
    with open(f"{log.location.removeprefix('file:')}/_delta_log/{version:020d}.json") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _ids(spark, name: str) -> list:
    return sorted(r[0] for r in sqlext.sql(spark, f"SELECT id FROM {name}").collect())


@pytest.fixture
def table(spark, schema):
    """Table ``t`` (id INT, name STRING), no change feed (protocol 1/2), rows 1 and 2."""
    sqlext.sql(spark, "CREATE TABLE t (id INT, name STRING) USING delta "
                      "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'false')")
    sqlext.sql(spark, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    return "t"


def _refused(spark, name: str, run, *needles):
    """Run a write expected to break a constraint: it raises ConstraintViolationError naming
    ``needles``, and the table (version, files on disk) is as before."""
    log = _log(spark, name)
    version, before = log.snapshot().version, _listing(log.location)
    with pytest.raises(ConstraintViolationError) as info:
        run()
    message = str(info.value)
    for needle in needles:
        assert needle in message, message
    assert f"version {version}" in message
    assert log.snapshot().version == version
    assert _listing(log.location) == before
    return message


# --- the statements ---------------------------------------------------------------------------


def test_add_check_constraint_is_one_metadata_commit_upgrading_the_protocol(spark, table):
    log = _log(spark, table)
    files = {f.path for f in log.snapshot().files}
    sqlext.sql(spark, "ALTER TABLE t ADD CONSTRAINT Positive CHECK (id > 0 AND name <> 'x')")
    snapshot = log.snapshot()
    assert snapshot.version == 2
    assert {f.path for f in snapshot.files} == files
    assert snapshot.configuration["delta.constraints.positive"] == "id > 0 AND name <> 'x'"
    actions = _commit(log, 2)
    assert [a["protocol"] for a in actions if "protocol" in a] == [
        {"minReaderVersion": 1, "minWriterVersion": 3}]
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    assert info["operation"] == "ADD CONSTRAINT"
    assert info["operationParameters"] == {"name": "Positive", "expr": "id > 0 AND name <> 'x'"}
    # delta-rs sees the constraint and the protocol
    dt = deltalake.DeltaTable(log.location)
    assert dt.metadata().configuration["delta.constraints.positive"] == "id > 0 AND name <> 'x'"
    assert dt.protocol().min_writer_version == 3
    # as a property: SHOW TBLPROPERTIES and DESCRIBE DETAIL show it
    props = dict(r[:2] for r in sqlext.sql(spark, "SHOW TBLPROPERTIES t").collect())
    assert props["delta.constraints.positive"] == "id > 0 AND name <> 'x'"
    detail = sqlext.sql(spark, "DESCRIBE DETAIL t").collect()[0].asDict()
    assert detail["properties"]["delta.constraints.positive"] == "id > 0 AND name <> 'x'"
    assert detail["minWriterVersion"] == 3


def test_add_constraint_on_a_change_feed_table_keeps_writer_4(spark, schema):
    sqlext.sql(spark, "CREATE TABLE c USING delta AS SELECT 1 AS id")
    sqlext.sql(spark, "ALTER TABLE c ADD CONSTRAINT p CHECK (id > 0)")
    log = _log(spark, "c")
    assert not [a for a in _commit(log, 1) if "protocol" in a]
    assert log.snapshot().protocol.min_writer_version == 4


def test_add_constraint_refused_when_existing_rows_violate_it(spark, table):
    sqlext.sql(spark, "INSERT INTO t VALUES (-1, 'c'), (-2, NULL)")
    message = _refused(spark, table, lambda: sqlext.sql(
        spark, "ALTER TABLE t ADD CONSTRAINT positive CHECK (id > 0)"),
        "2 rows in", "violate the new CHECK constraint (id > 0)", "positive")
    assert "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION" in message
    # NULL counts as a violation (delta-spark: false or NULL)
    _refused(spark, table, lambda: sqlext.sql(
        spark, "ALTER TABLE t ADD CONSTRAINT named CHECK (name <> 'zzz')"), "1 rows in")


def test_add_constraint_errors(spark, table):
    sqlext.sql(spark, "ALTER TABLE t ADD CONSTRAINT p CHECK (id > 0)")
    with pytest.raises(AnalysisException, match="constraint 'P' already exists.*id > 0"):
        sqlext.sql(spark, "ALTER TABLE t ADD CONSTRAINT P CHECK (id > 1)")
    with pytest.raises(AnalysisException, match="nope"):
        sqlext.sql(spark, "ALTER TABLE t ADD CONSTRAINT q CHECK (nope > 0)")
    with pytest.raises(AnalysisException):
        sqlext.sql(spark, "ALTER TABLE t ADD CONSTRAINT q CHECK (id + 1)")
    with pytest.raises(UnsupportedOperationError, match="only CHECK constraints"):
        sqlext.sql(spark, "ALTER TABLE t ADD CONSTRAINT pk PRIMARY KEY (id)")
    assert _log(spark, table).snapshot().version == 2


def test_drop_constraint(spark, table):
    sqlext.sql(spark, "ALTER TABLE t ADD CONSTRAINT p CHECK (id > 0)")
    sqlext.sql(spark, "ALTER TABLE t DROP CONSTRAINT P")
    log = _log(spark, table)
    assert "delta.constraints.p" not in log.snapshot().configuration
    info = next(a["commitInfo"] for a in _commit(log, 3) if "commitInfo" in a)
    assert (info["operation"], info["operationParameters"]) == (
        "DROP CONSTRAINT", {"name": "P", "expr": "id > 0"})
    sqlext.sql(spark, "INSERT INTO t VALUES (-5, 'now allowed')")
    with pytest.raises(AnalysisException, match="nonexistent constraint p.*IF EXISTS"):
        sqlext.sql(spark, "ALTER TABLE t DROP CONSTRAINT p")
    version = log.snapshot().version
    sqlext.sql(spark, "ALTER TABLE t DROP CONSTRAINT IF EXISTS p")
    assert log.snapshot().version == version + 1      # as delta-spark: a commit changing nothing


def test_set_and_drop_not_null(spark, table):
    log = _log(spark, table)
    sqlext.sql(spark, "ALTER TABLE t ALTER COLUMN id SET NOT NULL")
    fields = {f.name: f for f in log.snapshot().schema}
    assert fields["id"].nullable is False and fields["name"].nullable is True
    assert deltalake.DeltaTable(log.location).schema().fields[0].nullable is False
    info = next(a["commitInfo"] for a in _commit(log, 2) if "commitInfo" in a)
    assert info["operation"] == "CHANGE COLUMN"
    # dbt-spark's form
    sqlext.sql(spark, "alter table t change column `name` set not null ;")
    assert not any(f.nullable for f in log.snapshot().schema)
    sqlext.sql(spark, "ALTER TABLE t CHANGE COLUMN name DROP NOT NULL")
    sqlext.sql(spark, "ALTER TABLE t ALTER COLUMN id DROP NOT NULL")
    assert all(f.nullable for f in log.snapshot().schema)
    assert log.snapshot().version == 5
    with pytest.raises(AnalysisException, match="no column nope"):
        sqlext.sql(spark, "ALTER TABLE t ALTER COLUMN nope SET NOT NULL")


def test_set_not_null_refused_when_existing_rows_hold_null(spark, table):
    sqlext.sql(spark, "INSERT INTO t VALUES (3, NULL)")
    _refused(spark, table, lambda: sqlext.sql(spark, "ALTER TABLE t CHANGE COLUMN name SET NOT NULL"),
             "1 rows in", "violate the new NOT NULL constraint on name")
    assert all(f.nullable for f in _log(spark, table).snapshot().schema)


def test_create_or_replace_drops_check_constraints(spark, table):
    """As delta-spark's REPLACE (and as dbt's table materialization needs: it adds the model's
    constraints again after each replace)."""
    sqlext.sql(spark, "ALTER TABLE t ADD CONSTRAINT p CHECK (id > 0)")
    sqlext.sql(spark, "CREATE OR REPLACE TABLE t USING delta AS SELECT -1 AS id, 'x' AS name")
    assert not [k for k in _log(spark, table).snapshot().configuration
                if k.startswith("delta.constraints.")]
    sqlext.sql(spark, "CREATE OR REPLACE TABLE t USING delta AS SELECT 1 AS id, 'x' AS name")
    sqlext.sql(spark, "ALTER TABLE t ADD CONSTRAINT p CHECK (id > 0)")


def test_create_with_check_constraint_properties_checks_its_own_rows(spark, schema, table):
    """CHECK constraints given as ``TBLPROPERTIES ('delta.constraints.<name>' = 'expr')`` of a
    CREATE [OR REPLACE] TABLE ... AS SELECT (how the dbt adapter builds a contract's checks) are
    committed with the rows, which are checked against them: a violating row commits nothing.
    An expression that is not a condition over the new columns is refused before any job."""
    replace = ("CREATE OR REPLACE TABLE t USING delta TBLPROPERTIES "
               "('delta.constraints.p' = 'id > 0') AS SELECT {} AS id, 'x' AS name")
    _refused(spark, table, lambda: sqlext.sql(spark, replace.format(-1)),
             "CHECK constraint p (id > 0) violated by row with values: - id : -1")
    assert _ids(spark, table) == [1, 2]
    sqlext.sql(spark, replace.format(3))
    snapshot = _log(spark, table).snapshot()
    assert snapshot.configuration["delta.constraints.p"] == "id > 0"
    with pytest.raises(AnalysisException, match="CHECK constraint q condition 'nope > 0' is "
                                                "invalid.*Columns of the table: id"):
        sqlext.sql(spark, "CREATE OR REPLACE TABLE t USING delta TBLPROPERTIES "
                          "('delta.constraints.q' = 'nope > 0') AS SELECT 1 AS id")
    with pytest.raises(AnalysisException, match="CHECK constraint q condition 'nope > 0'"):
        sqlext.sql(spark, "CREATE TABLE u (id INT) USING delta TBLPROPERTIES "
                          "('delta.constraints.q' = 'nope > 0')")
    assert _log(spark, table).snapshot().version == snapshot.version
    assert Catalog(spark).lookup(schema, "u") is None


# --- enforcement on each write path ---------------------------------------------------------------


@pytest.fixture
def checked(spark, table):
    """``t`` with CHECK (id > 0) and name NOT NULL."""
    sqlext.sql(spark, "ALTER TABLE t ADD CONSTRAINT positive CHECK (id > 0)")
    sqlext.sql(spark, "ALTER TABLE t ALTER COLUMN name SET NOT NULL")
    return table


CHECK_MESSAGE = "CHECK constraint positive (id > 0) violated by row with values: - id : -7"
NOT_NULL_MESSAGE = "NOT NULL constraint violated for column: name"


def test_write_append_and_overwrite(spark, checked):
    bad = spark.createDataFrame([(3, "c"), (-7, "d")], "id INT, name STRING")
    location = _location(spark, checked)
    for mode in ("append", "overwrite"):
        message = _refused(spark, checked, lambda: sqlext.write(bad, location, mode=mode),
                           CHECK_MESSAGE, f"table {location}")
        assert "Nothing was committed" in message
    nulls = spark.createDataFrame([(3, None)], "id INT, name STRING")
    _refused(spark, checked, lambda: sqlext.write(nulls, location), NOT_NULL_MESSAGE)
    sqlext.write(spark.createDataFrame([(3, "c")], "id INT, name STRING"), location)
    assert _ids(spark, checked) == [1, 2, 3]


def test_insert(spark, checked):
    _refused(spark, checked, lambda: sqlext.sql(spark, "INSERT INTO t VALUES (5, 'e'), (-7, 'f')"),
             CHECK_MESSAGE)
    _refused(spark, checked, lambda: sqlext.sql(spark, "INSERT INTO t VALUES (5, NULL)"),
             NOT_NULL_MESSAGE)
    _refused(spark, checked, lambda: sqlext.sql(
        spark, "INSERT OVERWRITE t SELECT -7 AS id, 'x' AS name"), CHECK_MESSAGE)
    _refused(spark, checked, lambda: sqlext.sql(spark, "INSERT INTO t (id) VALUES (5)"),
             NOT_NULL_MESSAGE)
    sqlext.sql(spark, "INSERT INTO t VALUES (5, 'e')")
    assert _ids(spark, checked) == [1, 2, 5]


def test_update(spark, checked):
    _refused(spark, checked, lambda: sqlext.sql(spark, "UPDATE t SET id = -7 WHERE id = 2"),
             CHECK_MESSAGE)
    with pytest.raises(InvariantViolationError, match="NOT NULL"):
        sqlext.sql(spark, "UPDATE t SET name = NULL WHERE id = 2")
    sqlext.sql(spark, "UPDATE t SET id = 7 WHERE id = 2")
    assert _ids(spark, checked) == [1, 7]


def test_update_with_change_feed_checks_data_rows_only(spark, schema):
    sqlext.sql(spark, "CREATE TABLE f USING delta AS SELECT 1 AS id UNION ALL SELECT 2")
    sqlext.sql(spark, "ALTER TABLE f ADD CONSTRAINT positive CHECK (id > 0)")
    _refused(spark, "f", lambda: sqlext.sql(spark, "UPDATE f SET id = -7 WHERE id = 2"),
             CHECK_MESSAGE)
    # the preimage (id = 2 -> -1 would fail; here the old row is the one violating the new
    # constraint) is a change row: not checked
    sqlext.sql(spark, "UPDATE f SET id = id + 10")
    assert _ids(spark, "f") == [11, 12]
    sqlext.sql(spark, "DELETE FROM f WHERE id = 11")
    assert _ids(spark, "f") == [12]


def test_merge_update_and_insert(spark, checked):
    spark.createDataFrame([(2, "upd"), (-7, "new")], "id INT, name STRING") \
        .createOrReplaceTempView("src_ins")
    spark.createDataFrame([(2, -7)], "id INT, nid INT").createOrReplaceTempView("src_upd")
    # inserted row violates
    _refused(spark, checked, lambda: sqlext.sql(
        spark, "MERGE INTO t USING src_ins s ON t.id = s.id WHEN MATCHED THEN UPDATE SET "
               "name = s.name WHEN NOT MATCHED THEN INSERT *"), CHECK_MESSAGE)
    # updated row violates
    _refused(spark, checked, lambda: sqlext.sql(
        spark, "MERGE INTO t USING src_upd s ON t.id = s.id WHEN MATCHED THEN UPDATE SET "
               "id = s.nid"), CHECK_MESSAGE)
    _refused(spark, checked, lambda: sqlext.sql(
        spark, "MERGE INTO t USING src_ins s ON t.id = s.id WHEN NOT MATCHED THEN INSERT "
               "(id) VALUES (abs(s.id))"), NOT_NULL_MESSAGE)
    sqlext.sql(spark, "MERGE INTO t USING src_ins s ON t.id = s.id WHEN MATCHED THEN UPDATE "
                      "SET name = s.name WHEN NOT MATCHED THEN INSERT (id, name) "
                      "VALUES (abs(s.id), s.name)")
    assert _ids(spark, checked) == [1, 2, 7]


def test_replace_where(spark, checked):
    location = _location(spark, checked)
    bad = spark.createDataFrame([(2, "x"), (-7, None)], "id INT, name STRING")
    _refused(spark, checked, lambda: sqlext.write(bad, location, mode="overwrite",
                                                  replaceWhere="id = 2 OR id = -7"),
             "NOT NULL constraint violated for column: name")
    good = spark.createDataFrame([(2, "x")], "id INT, name STRING")
    sqlext.write(good, location, mode="overwrite", replaceWhere="id = 2")
    assert sorted(tuple(r) for r in sqlext.sql(spark, "SELECT * FROM t").collect()) == [
        (1, "a"), (2, "x")]


def test_partitioned_table_leaves_no_partition_directories(spark, schema):
    sqlext.sql(spark, "CREATE TABLE p (id INT, part STRING) USING delta PARTITIONED BY (part)")
    sqlext.sql(spark, "ALTER TABLE p ADD CONSTRAINT positive CHECK (id > 0)")
    sqlext.sql(spark, "INSERT INTO p VALUES (1, 'a')")
    _refused(spark, "p", lambda: sqlext.sql(
        spark, "INSERT INTO p VALUES (2, 'b'), (3, 'c'), (-7, 'd')"), CHECK_MESSAGE)


# --- constraints other engines wrote ------------------------------------------------------------


def test_nested_not_null_and_legacy_invariants_are_enforced(spark, tmp_path):
    """A non-nullable field inside a struct (checked where the struct is not NULL) and a legacy
    ``delta.invariants`` rule, as delta-spark writes them into the schema."""
    invariant = json.dumps({"expression": {"expression": "v < 100"}})
    schema = T.StructType([
        T.StructField("v", T.IntegerType(), True, {"delta.invariants": invariant}),
        T.StructField("s", T.StructType([T.StructField("x", T.IntegerType(), False)]), True)])
    location = str(tmp_path / "nested")
    ddl.create_table(spark, TableRef(location), ddl.TableDefinition(schema))
    ok = spark.createDataFrame([(1, (1,)), (2, None)], schema)
    sqlext.write(ok, location)
    bad_nested = spark.sql("SELECT 3 AS v, named_struct('x', CAST(NULL AS INT)) AS s")
    log = DeltaLog(location)
    version, before = log.snapshot().version, _listing(location)
    with pytest.raises(ConstraintViolationError, match="NOT NULL constraint violated for "
                                                       "column: s.x"):
        sqlext.write(bad_nested, location)
    with pytest.raises(ConstraintViolationError,
                       match=r"CHECK constraint EXPRESSION\(v < 100\) \(v < 100\) violated "
                             "by row with values: - v : 100"):
        sqlext.write(spark.sql("SELECT 100 AS v, CAST(NULL AS STRUCT<x: INT>) AS s"), location)
    assert log.snapshot().version == version and _listing(location) == before
    assert sorted(r[0] for r in sqlext.read(spark, location).collect()) == [1, 2]


def test_add_constraint_and_set_not_null_on_an_empty_table(spark, schema):
    sqlext.sql(spark, "CREATE TABLE e (id INT, name STRING) USING delta")
    sqlext.sql(spark, "ALTER TABLE e ADD CONSTRAINT positive CHECK (id > 0)")
    sqlext.sql(spark, "ALTER TABLE e ALTER COLUMN id SET NOT NULL")
    assert _log(spark, "e").snapshot().version == 2
    _refused(spark, "e", lambda: sqlext.sql(spark, "INSERT INTO e VALUES (-7, 'x')"),
             CHECK_MESSAGE)


def test_protocol_upgrades_for_constraints():
    """Legacy protocols move up to the lowest writer version with the feature; a table-features
    protocol lists it (as delta-spark)."""
    assert upgrade_for_features(Protocol(1, 2), {"checkConstraints"}) == Protocol(1, 3)
    assert upgrade_for_features(Protocol(1, 4), {"checkConstraints"}) is None
    assert upgrade_for_features(Protocol(1, 1), {"invariants"}) == Protocol(1, 2)
    assert upgrade_for_features(Protocol(1, 3), {"invariants"}) is None
    features = Protocol(3, 7, ["deletionVectors"], ["appendOnly", "deletionVectors"])
    assert upgrade_for_features(features, {"checkConstraints"}) == Protocol(
        3, 7, ["deletionVectors"], ["appendOnly", "checkConstraints", "deletionVectors"])
    assert protocol_for_new_table({"delta.constraints.p": "id > 0"}) == Protocol(1, 3)
    assert protocol_for_new_table({"delta.constraints.p": "id > 0",
                                   "delta.enableChangeDataFeed": "true"}) == Protocol(1, 4)
