"""Constraints across engines: delta-spark 4.4 enforces the CHECK and NOT NULL constraints sqlext
adds, sqlext enforces the ones delta-spark adds, and both write the same protocol for them."""

from __future__ import annotations

import os

import pytest

import sqlext
from sqlext.errors import ConstraintViolationError
from sqlext.log.table import DeltaLog
from tests.support.deltaspark import DeltaSparkError, delta_path


def _ids(spark, path) -> list:
    return sorted(r[0] for r in sqlext.read(spark, str(path)).select("id").collect())


def test_delta_spark_enforces_constraints_sqlext_added(spark, delta_spark, tmp_path):
    path = tmp_path / "by_sqlext"
    p = delta_path(path)
    for statement in (
            f"CREATE TABLE {p} (id INT, name STRING) USING delta "
            "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'false')",
            f"INSERT INTO {p} VALUES (1, 'a')",
            f"ALTER TABLE {p} ADD CONSTRAINT positive CHECK (id > 0)",
            f"ALTER TABLE {p} CHANGE COLUMN name SET NOT NULL"):
        sqlext.sql(spark, statement)
    log_before = sorted(os.listdir(path / "_delta_log"))
    answers = delta_spark.batch([
        ("sql", {"sql": f"INSERT INTO {p} VALUES (-1, 'b')"}),
        ("sql", {"sql": f"INSERT INTO {p} VALUES (2, NULL)"}),
    ])
    assert isinstance(answers[0], DeltaSparkError)
    assert "CHECK constraint positive (id > 0) violated by row with values" in str(answers[0])
    assert isinstance(answers[1], DeltaSparkError)
    assert "NOT NULL constraint violated for column: name" in str(answers[1])
    assert sorted(os.listdir(path / "_delta_log")) == log_before
    delta_spark.batch([("sql", {"sql": f"INSERT INTO {p} VALUES (2, 'b')"})], check=True)
    assert _ids(spark, path) == [1, 2]


def test_sqlext_enforces_constraints_delta_spark_added(spark, delta_spark, tmp_path):
    path = tmp_path / "by_delta_spark"
    p = delta_path(path)
    delta_spark.batch([("sql", {"sql": sql}) for sql in (
        f"CREATE TABLE {p} (id INT NOT NULL, name STRING) USING delta",
        f"INSERT INTO {p} VALUES (1, 'a')",
        f"ALTER TABLE {p} ADD CONSTRAINT positive CHECK (id > 0)",
    )], check=True)
    log = DeltaLog(str(path))
    snapshot = log.snapshot()
    assert snapshot.configuration["delta.constraints.positive"] == "id > 0"
    protocol = snapshot.protocol
    before = sorted(os.listdir(path / "_delta_log"))
    with pytest.raises(ConstraintViolationError, match=r"CHECK constraint positive \(id > 0\) "
                                                       "violated by row with values: - id : -1"):
        sqlext.sql(spark, f"INSERT INTO {p} VALUES (-1, 'b')")
    with pytest.raises(ConstraintViolationError, match="NOT NULL constraint violated for "
                                                       "column: id"):
        sqlext.sql(spark, f"INSERT INTO {p} VALUES (NULL, 'b')")
    assert sorted(os.listdir(path / "_delta_log")) == before
    sqlext.sql(spark, f"INSERT INTO {p} VALUES (2, 'b')")
    assert _ids(spark, path) == [1, 2]

    # the protocol sqlext gives a table on the same legacy protocol for the same statement
    mine = tmp_path / "mine"
    sqlext.sql(spark, f"CREATE TABLE {delta_path(mine)} (id INT NOT NULL, name STRING) USING "
                      "delta TBLPROPERTIES ('delta.enableChangeDataFeed' = 'false')")
    sqlext.sql(spark, f"ALTER TABLE {delta_path(mine)} ADD CONSTRAINT positive CHECK (id > 0)")
    assert DeltaLog(str(mine)).snapshot().protocol == protocol
