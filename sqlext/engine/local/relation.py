"""Arrow rows as a Spark ``LocalRelation`` and back, without a Spark job.

:func:`frame_from_arrow` hands a ``pyarrow.Table`` to Spark as a DataFrame whose logical plan is
a ``LocalRelation`` (classic sessions: the table's Arrow IPC batches are decoded in the JVM by
Spark's own ``ArrowConverters``, as Spark Connect's planner does; Connect sessions:
``createDataFrame`` sends a local relation). Spark's optimizer folds projections and filters
over a local relation into a new local relation (``ConvertToLocalRelation``), so
:func:`collect_arrow` can take the rows of the optimized plan and convert them to Arrow in the
JVM (``ArrowConverters.toBatchWithSchemaIterator``, Spark Connect's conversion of local results)
with Spark's own type mapping: no job runs.

The Arrow bytes pass between the processes through a temporary file (as pyspark's own
``createDataFrame`` hands the JVM its data), not as py4j arguments and results: py4j decodes a
returned ``byte[]`` one byte at a time in Python (about 1 s for a 100,000-row, few-MB result).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from types import SimpleNamespace

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema

from sqlext.engine.io.scan import arrow_schema
from sqlext.engine.session import is_connect, session_constant

_LOCAL = "LocalRelation"


def spark_schema_of(table: pa.Table) -> T.StructType:
    """The Spark schema Spark gives ``table``'s Arrow types (timestamps without a time zone are
    ``TIMESTAMP_NTZ``)."""
    return from_arrow_schema(table.schema, prefer_timestamp_ntz=True)


def arrow_table_for(table: pa.Table, schema: T.StructType) -> pa.Table:
    """``table`` cast to the Arrow layout Spark expects for ``schema`` (instants as UTC
    microseconds, maps as Arrow maps, structs by position), columns renamed to the schema's."""
    target = arrow_schema(schema)
    renamed = table.rename_columns(target.names)
    return renamed if renamed.schema.equals(target) else renamed.cast(target)


def _converters(spark: SparkSession):
    """Spark's ``ArrowConverters`` object in the session's JVM (found once per session: each
    step of a JVM name is a py4j round trip)."""
    def find():
        arrow = spark._jvm.org.apache.spark.sql.execution.arrow
        return getattr(getattr(arrow, "ArrowConverters$"), "MODULE$")
    return session_constant(spark, "arrow_converters", find)


def _jvm_classes(spark: SparkSession) -> SimpleNamespace:
    """The JVM's file stream classes, ``Channels`` and pyspark's ``PythonRDD`` (found once per
    session: each step of a JVM name is a py4j round trip)."""
    def find():
        jvm = spark._jvm
        io = jvm.java.io
        return SimpleNamespace(
            file_input=io.FileInputStream, file_output=io.FileOutputStream,
            buffered=io.BufferedOutputStream, data_output=io.DataOutputStream,
            channels=jvm.java.nio.channels.Channels,
            python_rdd=jvm.org.apache.spark.api.python.PythonRDD)
    return session_constant(spark, "arrow_file_classes", find)


@contextlib.contextmanager
def _exchange_file(spark: SparkSession):
    """The path of a new empty temporary file both processes can open (the driver JVM runs on
    this host), removed afterwards."""
    directory = getattr(spark.sparkContext, "_temp_dir", None)
    fd, path = tempfile.mkstemp(prefix="sqlext-arrow-", dir=directory)
    os.close(fd)
    try:
        yield path
    finally:
        os.unlink(path)


def frame_from_arrow(spark: SparkSession, table: pa.Table,
                     schema: T.StructType | None = None) -> DataFrame:
    """A DataFrame of ``table``'s rows whose logical plan is a ``LocalRelation``.

    ``schema`` (default: Spark's reading of the Arrow types) gives the Spark types and column
    names; the table's columns are cast to its Arrow layout, by position. A table larger than
    ``spark.sql.execution.arrow.localRelationThreshold`` becomes a parallelized relation instead
    (as ``createDataFrame`` does): its frame is still right, but :func:`collect_arrow` then
    answers None."""
    schema = schema or spark_schema_of(table)
    data = arrow_table_for(table, schema)
    if is_connect(spark):
        return spark.createDataFrame(data, schema=schema)
    jvm = _jvm_classes(spark)
    converters = _converters(spark)
    with _exchange_file(spark) as path:
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, data.schema) as writer:
            writer.write_table(data)
        stream = jvm.file_input(path)
        try:
            # toDataFrame decodes every batch into the relation's rows before it returns
            batches = converters.getBatchesFromStream(jvm.channels.newChannel(stream))
            jdf = converters.toDataFrame(batches, schema.json(), spark._jsparkSession)
        finally:
            stream.close()
    df = DataFrame(jdf, spark)
    df._schema = schema
    return df


def is_local(df: DataFrame) -> bool:
    """Whether Spark's optimized plan of ``df`` is a ``LocalRelation`` (collecting it runs no
    job). Always False on Spark Connect, whose plans this process cannot see."""
    if is_connect(df.sparkSession):
        return False
    return df._jdf.queryExecution().optimizedPlan().nodeName() == _LOCAL


def collect_arrow(df: DataFrame) -> pa.Table | None:
    """``df``'s rows as Arrow, computed without a Spark job, or None when that needs one (the
    optimized plan is not a ``LocalRelation``: a join, an aggregate, a Python UDF...).

    Types are Spark's Arrow mapping: timestamps as UTC microseconds (``timestamp[us, UTC]``,
    ``TIMESTAMP_NTZ`` without a zone), decimals with their precision and scale, dates as
    ``date32``, maps as Arrow maps. On Spark Connect the server collects the rows (it runs no
    job for a local result either)."""
    spark = df.sparkSession
    if is_connect(spark):
        return df.toArrow()
    plan = df._jdf.queryExecution().optimizedPlan()
    if plan.nodeName() != _LOCAL:
        return None
    converters = _converters(spark)
    # one IPC stream (schema and one batch) per call of the iterator: no record limit, no size
    # limit; an empty relation yields none
    batches = converters.toBatchWithSchemaIterator(plan.data().iterator(), plan.schema(), -1, -1,
                                                   "UTC", False, False)
    tables = _read_batches(spark, batches)
    if not tables:
        empty = converters.createEmptyArrowBatch(plan.schema(), "UTC", False, False)
        tables.append(pa.ipc.open_stream(bytes(empty)).read_all())
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def _read_batches(spark: SparkSession, batches) -> list[pa.Table]:
    """The tables of a JVM iterator of Arrow IPC streams (``byte[]`` each), written by the JVM
    to a file as pyspark frames records (a 4-byte big-endian length before each)."""
    jvm = _jvm_classes(spark)
    with _exchange_file(spark) as path:
        out = jvm.data_output(jvm.buffered(jvm.file_output(path)))
        try:
            jvm.python_rdd.writeIteratorToStream(batches, out)
        finally:
            out.close()
        with open(path, "rb") as f:
            data = pa.py_buffer(f.read())
    tables, at = [], 0
    while at < data.size:
        length = int.from_bytes(data[at:at + 4].to_pybytes(), "big")
        tables.append(pa.ipc.open_stream(data[at + 4:at + 4 + length]).read_all())
        at += 4 + length
    return tables
