"""Reading columns of a DataFrame on the driver, with no Spark job, when the DataFrame is nothing
but a scan of local parquet files (``spark.read.parquet(...)``, possibly narrowed to some of its
columns). MERGE reads a small source's join keys this way.

Anything else (filters, computed columns, other formats or file systems, a file without the
column) answers None, and the caller asks Spark.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame

from sqlext.log.storage import is_local, normalize_location


def local_parquet_files(df: DataFrame) -> list[str] | None:
    """The local paths of the parquet files ``df`` reads, when its optimized plan is just their
    scan (under column selections only); else None."""
    try:
        plan = df._jdf.queryExecution().optimizedPlan()
        while plan.nodeName() == "Project" and _only_columns(plan.projectList()):
            plan = plan.child()
        if plan.nodeName() != "LogicalRelation" or plan.isStreaming():
            return None
        relation = plan.relation()
        if relation.getClass().getSimpleName() != "HadoopFsRelation" \
                or relation.fileFormat().toString() != "Parquet":
            return None
        files = list(relation.location().inputFiles())
    except Exception:  # noqa: BLE001 - no JVM plan (e.g. Spark Connect) or another shape
        return None
    if not all(is_local(f) for f in files):
        return None
    return [normalize_location(f) for f in files]


def _only_columns(expressions) -> bool:
    return all(expressions.apply(i).nodeName() == "AttributeReference"
               for i in range(expressions.size()))


def read_columns(paths: list[str], names: list[str]) -> list[pa.ChunkedArray] | None:
    """Columns ``names`` of the parquet files at ``paths``, each one file's values after the
    other's, found by name case-insensitively as Spark does by default; None when there are no
    files, or a file lacks a column, has it twice, or disagrees with another on its type."""
    chunks: list[list[pa.ChunkedArray]] = [[] for _ in names]
    for path in paths:
        try:
            file = pq.ParquetFile(path)
        except (OSError, pa.ArrowException):
            return None
        fields = file.schema_arrow.names
        chosen = []
        for name in names:
            found = [f for f in fields if f.lower() == name.lower()]
            if len(found) != 1:
                return None
            chosen.append(found[0])
        table = file.read(columns=list(dict.fromkeys(chosen)))
        for i, c in enumerate(chosen):
            chunks[i].append(table.column(c))
    if not paths:
        return None
    try:
        return [pa.chunked_array([c for part in parts for c in part.chunks], parts[0].type)
                for parts in chunks]
    except pa.ArrowException:
        return None
