"""The store-assignment cast rules a Spark Connect session uses without a JVM
(:func:`sqlext.engine.connect_plans.can_cast`) agree with Spark's own (``Cast.canUpCast``,
``Cast.canANSIStoreAssign``, ``Cast.canCast``) on the classic session's JVM, for the types tables hold."""

from __future__ import annotations

import itertools

import pytest
from pyspark.sql import types as T

from sqlext.engine.connect_plans import can_cast

TYPES = [T.ByteType(), T.ShortType(), T.IntegerType(), T.LongType(), T.FloatType(),
         T.DoubleType(), T.DecimalType(10, 2), T.DecimalType(38, 0), T.DecimalType(5, 4),
         T.StringType(), T.BooleanType(), T.BinaryType(), T.DateType(), T.TimestampType(),
         T.TimestampNTZType(), T.ArrayType(T.IntegerType()), T.ArrayType(T.LongType()),
         T.MapType(T.StringType(), T.IntegerType()),
         T.StructType([T.StructField("a", T.IntegerType())]),
         T.StructType([T.StructField("a", T.LongType())])]


@pytest.mark.parametrize("policy", ["STRICT", "ANSI", "LEGACY"])
def test_can_cast_matches_spark(spark, policy):
    jvm = spark._jvm
    cast = getattr(getattr(jvm.org.apache.spark.sql.catalyst.expressions, "Cast$"), "MODULE$")
    parse = jvm.org.apache.spark.sql.types.DataType.fromJson
    disagreements = []
    for source, target in itertools.product(TYPES, TYPES):
        src, dst = parse(source.json()), parse(target.json())
        check = {"STRICT": cast.canUpCast, "ANSI": cast.canANSIStoreAssign,
                 "LEGACY": cast.canCast}[policy]
        spark_says = bool(check(src, dst))
        if can_cast(source, target, policy) != spark_says:
            disagreements.append((source.simpleString(), target.simpleString(), spark_says))
    assert disagreements == [], "\n".join(map(str, disagreements))
