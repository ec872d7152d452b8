"""Spark's code generation turned off for statements over little data.

Spark compiles Java code for every stage it runs (whole-stage code generation) and for the
expressions in it. For a MERGE of a few rows into a table of a few kilobytes, compiling costs
more than running: a first MERGE in a process spent about 1.4 s of its 4 s compiling, measured
with the statement's jobs side by side with and without code generation. Spark evaluates every
expression without compiling too (its fallback whenever generated code fails to compile), so
the rows are the same either way.

:func:`interpreted_when_small` turns both off for one statement's Spark work when the data it
reads is at most ``spark.sqlext.interpretedMaxBytes`` (default 4 MB; 0: never), unless the
session sets either setting itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from pyspark.sql import DataFrame, SparkSession

from sqlext.engine.session import conf_bytes, is_connect

MAX_BYTES_CONF = "spark.sqlext.interpretedMaxBytes"
MAX_BYTES_DEFAULT = 4 * 1024 * 1024
WHOLE_STAGE = "spark.sql.codegen.wholeStage"
#: Spark's internal choice between generated and interpreted expressions (NO_CODEGEN: always
#: interpreted); the only way to skip compiling the expressions of a stage
FACTORY_MODE = "spark.sql.codegen.factoryMode"


def _small(spark: SparkSession, size: int | None) -> bool:
    """Whether ``size`` bytes of input (None: unknown) are little enough to run without code
    generation."""
    limit = conf_bytes(spark, MAX_BYTES_CONF, MAX_BYTES_DEFAULT)
    return size is not None and limit is not None and 0 <= size <= limit


def input_bytes(df: DataFrame) -> int | None:
    """Spark's estimate of the bytes ``df`` reads: the sizes of the relations at the leaves of
    its optimized plan and of every subquery in it (files: their sizes; rows held in the plan:
    theirs; an RDD: unknown, Spark's huge default). The work a query does grows with what it
    reads, not with what it returns (a global aggregate returns one row). None: no estimate
    (e.g. Spark Connect)."""
    try:
        plan = df._jdf.queryExecution().optimizedPlan()
        plans = [plan]
        subqueries = plan.subqueriesAll()
        plans += [subqueries.apply(i) for i in range(subqueries.size())]
        total = 0
        for p in plans:
            leaves = p.collectLeaves()
            total += sum(int(leaves.apply(i).stats().sizeInBytes())
                         for i in range(leaves.size()))
        return total
    except Exception:  # noqa: BLE001 - no JVM plan
        return None


@contextlib.contextmanager
def interpreted_when_small(spark: SparkSession, size: int | None) -> Iterator[None]:
    """When ``size`` (the bytes the block's Spark work reads, None: unknown) is small, run the
    block with whole-stage code generation off and expressions interpreted (session settings,
    restored after the block, however it ends). Settings the session has set itself are left
    alone, and so is Spark Connect's server."""
    if not _small(spark, size) or is_connect(spark):
        yield
        return
    conf = spark._jsparkSession.conf()
    if conf.contains(WHOLE_STAGE) or conf.contains(FACTORY_MODE):
        yield
        return
    spark.conf.set(WHOLE_STAGE, "false")
    spark.conf.set(FACTORY_MODE, "NO_CODEGEN")
    try:
        yield
    finally:
        spark.conf.unset(WHOLE_STAGE)
        spark.conf.unset(FACTORY_MODE)
