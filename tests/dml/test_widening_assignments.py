"""Store assignments that widen (int into bigint, a decimal into a wider one, float into double)
are plain casts under ANSI (``can_upcast``): the values written are the same, and a narrowing
assignment still fails on a value its column cannot hold."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pyspark.sql import types as T

import sqlext
from sqlext.engine.schemas import can_upcast


@pytest.mark.parametrize("source, target, expected", [
    (T.IntegerType(), T.LongType(), True),
    (T.ByteType(), T.ShortType(), True),
    (T.LongType(), T.IntegerType(), False),
    (T.IntegerType(), T.DecimalType(10, 0), True),
    (T.IntegerType(), T.DecimalType(10, 1), False),
    (T.LongType(), T.DecimalType(20, 0), True),
    (T.DecimalType(5, 2), T.DecimalType(10, 3), True),
    (T.DecimalType(5, 2), T.DecimalType(10, 1), False),
    (T.DecimalType(10, 2), T.DecimalType(9, 2), False),
    (T.FloatType(), T.DoubleType(), True),
    (T.DoubleType(), T.FloatType(), False),
    (T.IntegerType(), T.StringType(), False),
    (T.StringType(), T.LongType(), False),
])
def test_never_fails(source, target, expected):
    assert can_upcast(source, target) is expected


def test_widening_values_are_written_exactly(spark, tmp_path):
    path = str(tmp_path / "t")
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (id BIGINT, d DECIMAL(10, 3), x DOUBLE) "
                      "USING delta")
    sqlext.sql(spark, f"INSERT INTO delta.`{path}` VALUES (1, 1.5, 0.5)")
    sqlext.sql(spark, f"""MERGE INTO delta.`{path}` AS t
        USING (SELECT * FROM VALUES (1, CAST(12.34 AS DECIMAL(5, 2)), CAST(0.25 AS FLOAT)),
                                    (2147483647, CAST(-999.99 AS DECIMAL(5, 2)), CAST(2.5 AS FLOAT))
               AS s(id, d, x)) AS s
        ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    sqlext.sql(spark, f"UPDATE delta.`{path}` SET x = CAST(-0.75 AS FLOAT) WHERE id = 1")
    rows = sorted(tuple(r) for r in sqlext.read(spark, path).collect())
    assert rows == [(1, Decimal("12.340"), -0.75),
                    (2147483647, Decimal("-999.990"), 2.5)]


def test_narrowing_values_still_fail(spark, tmp_path):
    path = str(tmp_path / "t")
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (id INT, n INT) USING delta")
    sqlext.sql(spark, f"INSERT INTO delta.`{path}` VALUES (1, 0)")
    with pytest.raises(Exception, match="(?i)overflow|does not fit|CAST"):
        sqlext.sql(spark, f"""MERGE INTO delta.`{path}` AS t
            USING (SELECT * FROM VALUES (1, 4294967296L) AS s(id, n)) AS s
            ON t.id = s.id WHEN MATCHED THEN UPDATE SET *""")
    assert [tuple(r) for r in sqlext.read(spark, path).collect()] == [(1, 0)]
