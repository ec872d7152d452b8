"""A write's rows without a Spark job: when the DataFrame a write would hand to Spark's writer
(after casts, generated and identity columns, constraint checks) optimizes to a local relation
(``INSERT ... VALUES``, ``INSERT ... SELECT`` of literals, small Arrow data), its rows are
collected without a job (:func:`sqlext.engine.local.relation.collect_arrow`) and written on the
driver (:func:`sqlext.engine.local.writer.write_local`): the same files, statistics and counts
as the Spark path, chosen by :mod:`sqlext.engine.local.policy`.
"""

from __future__ import annotations

from py4j.protocol import Py4JError
from pyspark.sql import DataFrame, SparkSession

from sqlext.engine import codegen
from sqlext.engine.constraints import Constraint, enforce
from sqlext.engine.io.files import WrittenFile
from sqlext.engine.local import policy
from sqlext.engine.local.relation import collect_arrow, is_local
from sqlext.engine.local.writer import write_local
from sqlext.engine.session import is_connect
from sqlext.log.actions import Metadata
from sqlext.log.table import DeltaLog


def write_without_job(spark: SparkSession, data: DataFrame, log: DeltaLog, metadata: Metadata,
                      constraints: list[Constraint], version: int | None,
                      size: int | None = None
                      ) -> list[WrittenFile] | None:
    """The data files of ``data`` (the table's columns) written on the driver, or None when the
    Spark path writes them (the setting says so, the plan needs a job, the rows are more than
    ``localMaxBytes``, or there are none). ``constraints`` are checked as the Spark path checks
    them: a violating row raises Spark's error, marked as ``write_files``' job would raise it.
    ``size``: the bytes ``data`` reads (:func:`sqlext.engine.codegen.input_bytes`), when the
    caller has estimated it already (None: estimated here)."""
    where = f"table {log.name}" + (f", version {version}" if version is not None else "")
    if is_connect(spark) or policy.mode(spark, where) == "off":
        return None       # a Connect client cannot see the plan; the server's writer runs
    checked = _over_local_relation(enforce(data, constraints))
    if checked is None:
        return None
    if size is None:
        size = codegen.input_bytes(checked)
    if not policy.use_driver(spark, size if size is not None else 1 << 62, where):
        return None
    rows = collect_arrow(checked)
    if rows is None or rows.num_rows == 0:
        return None       # Spark writes (and the write then discards) an empty file
    return write_local(spark, log, metadata, rows, version=version,
                       tasks=_parallelism(spark))


def _over_local_relation(df: DataFrame) -> DataFrame | None:
    """``df`` if Spark optimizes it to a local relation; the same plan over a one-row local
    relation if it is computed from no table (``SELECT <literals>``: Spark's ``OneRowRelation``,
    which its optimizer does not fold, though it folds the same over a local relation); None
    when its rows need a Spark job."""
    if is_local(df):
        return df
    spark = df.sparkSession
    try:
        node = df._jdf.queryExecution().optimizedPlan()
        chain = []
        while node.children().size() == 1:
            chain.append(node)
            node = node.children().apply(0)
        if node.nodeName() != "OneRowRelation":
            return None
        jvm = spark._jvm
        one_row = spark.sql("VALUES (1)")._jdf.queryExecution().optimizedPlan()
        plan = jvm.org.apache.spark.sql.catalyst.plans.logical.Project(scala_seq(jvm, []), one_row)
        for parent in reversed(chain):
            plan = parent.withNewChildren(scala_seq(jvm, [plan]))
        rebuilt = DataFrame(jvm.org.apache.spark.sql.classic.Dataset.ofRows(
            spark._jsparkSession, plan), spark)
    except Py4JError:
        return None     # another Spark version's classes: the Spark path
    return rebuilt if is_local(rebuilt) else None


def scala_seq(jvm, items: list):
    """A Scala ``Seq`` of ``items`` (JVM objects), for building logical plans through py4j."""
    values = jvm.java.util.ArrayList()
    for item in items:
        values.add(item)
    return jvm.org.apache.spark.api.python.PythonUtils.toSeq(values)


def _parallelism(spark: SparkSession) -> int:
    """Spark's ``leafNodeDefaultParallelism``: the tasks a local relation's scan is split into
    (at most one per row)."""
    value = spark.conf.get("spark.sql.leafNodeDefaultParallelism", None)
    return int(value) if value else spark.sparkContext.defaultParallelism
