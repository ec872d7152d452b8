"""Exact evaluation of partition predicates: which files' partition values satisfy a condition,
decided by Spark on the (few) distinct partition tuples, so Spark's SQL semantics apply.
"""

from __future__ import annotations

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine.io.scan import partition_value, typed_partition_value
from sqlext.engine.schemas import spark_schema
from sqlext.log.actions import AddFile
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.snapshot import Snapshot


def files_matching_partition_predicate(spark: SparkSession, snapshot: Snapshot,
                                       files: list[AddFile], condition: Column,
                                       alias: str | None = None) -> list[AddFile]:
    """The files whose partition values make ``condition`` true (NULL counts as false).

    ``condition`` must refer to partition columns only (qualified by ``alias``, if given).
    """
    pcols = snapshot.partition_columns
    if not files:
        return []
    schema = spark_schema(snapshot.metadata.schema_string)
    types = {f.name.lower(): f.dataType for f in schema.fields}
    mapping = ColumnMapping.of(snapshot.metadata)
    keys = {tuple(partition_value(f, c, mapping) for c in pcols) for f in files}
    key_list = sorted(keys, key=lambda k: tuple((v is None, v or "") for v in k))
    fields = [T.StructField("__sqlext_key", T.IntegerType(), False)] + [
        T.StructField(c, types[c.lower()]) for c in pcols]
    rows = [(i, *[typed_partition_value(v, types[c.lower()]) for c, v in zip(pcols, key)])
            for i, key in enumerate(key_list)]
    df = spark.createDataFrame(rows, T.StructType(fields))
    if alias:
        df = df.alias(alias)
    hits = {r[0] for r in df.filter(condition.eqNullSafe(F.lit(True))).select("__sqlext_key").collect()}
    matching = {key_list[i] for i in hits}
    return [f for f in files if tuple(partition_value(f, c, mapping) for c in pcols) in matching]
