"""A constant SET or INSERT value that its column's type cannot hold fails the statement before
any data is read, as in delta-spark 4.4: Spark's optimizer folds the cast of a constant there,
so ``UPDATE t SET int_col = 'abc' WHERE <no row>`` (and the same value in a MERGE clause that
takes no row) fails with ``CAST_INVALID_INPUT``, an out-of-range number with
``DELTA_CAST_OVERFLOW_IN_TABLE_WRITE`` (measured, tests/deltaspark/
test_deltaspark_lazy_clause_values.py). A value that is not constant is still cast row by row,
only for the rows its clause takes.
"""

from __future__ import annotations

from pyspark.errors import PySparkException
from pyspark.sql import Column
from pyspark.sql import types as T

from sqlext.errors import InvariantViolationError


def check_constant(session, expression, value: Column, source: T.DataType,
                   target: T.StructField, where: str, shown: str) -> None:
    """Raise :class:`InvariantViolationError` when ``value`` (of type ``source``; ``expression``
    its analysed JVM expression) is a constant the ANSI store-assignment cast to ``target``'s
    type rejects. Values that are not constant, or whose type always fits, cost nothing."""
    if expression is None or not expression.foldable() or _always_fits(session, source,
                                                                      target.dataType):
        return
    try:
        # one row held in the plan: computed while Spark plans the query, no job
        rejected = session.sql("SELECT 1").select(
            value.isNotNull() & value.try_cast(target.dataType).isNull()).first()[0]
    except PySparkException:    # the value itself fails: it is evaluated where it is used
        return
    if not rejected:
        return
    if isinstance(source, T.StringType):
        condition = "CAST_INVALID_INPUT"
        why = (f"The value {shown} of the type \"STRING\" cannot be cast to "
               f"\"{target.dataType.simpleString().upper()}\" because it is malformed")
    else:
        condition = "DELTA_CAST_OVERFLOW_IN_TABLE_WRITE"
        why = (f"Failed to write a value of \"{source.simpleString().upper()}\" type into the "
               f"\"{target.dataType.simpleString().upper()}\" type column `{target.name}` due "
               "to an overflow")
    raise InvariantViolationError(
        f"[{condition}] {where}: {why}: the constant value {shown} does not fit column "
        f"{target.name!r} (the ANSI cast fails; delta-spark fails so too, even when no row is "
        "written). Correct the value or cast it explicitly. The table is unchanged.",
        error_class=condition)


def _always_fits(session, source: T.DataType, target: T.DataType) -> bool:
    jvm = session.sparkContext._jvm
    parse = session._jsparkSession.parseDataType
    return bool(jvm.org.apache.spark.sql.catalyst.expressions.Cast.canUpCast(
        parse(source.json()), parse(target.json())))
