"""Column comments of Delta tables: ``ALTER TABLE t CHANGE COLUMN c COMMENT '...'``.

Delta keeps a column's comment in its schema field's metadata under ``"comment"`` (as
delta-spark's ``ALTER TABLE ... CHANGE COLUMN`` and ``CREATE TABLE (c INT COMMENT '...')`` write
it), so delta-rs, DuckDB and Spark see it. Setting one is a metadata-only commit named
``CHANGE COLUMN``, as delta-spark names it: no data file is read or written, and it takes part in
conflict detection like any other metadata change.
"""

from __future__ import annotations

import dataclasses
import json

from pyspark.sql import SparkSession

from sqlext.catalog import TableRef
from sqlext.engine.commit import commit
from sqlext.errors import AnalysisException
from sqlext.log.table import DeltaLog

COMMENT_KEY = "comment"


def with_column_comment(schema_string: str, column: str, comment: str | None,
                        table: str, case_sensitive: bool = False) -> tuple[str, dict]:
    """``schema_string`` with top-level ``column``'s comment set (None removes it), and the
    changed field (a dict in the schema's JSON form). Raises :class:`AnalysisException` naming
    the table's columns when there is no such column."""
    schema = json.loads(schema_string)
    fields = schema.get("fields") or []
    wanted = column if case_sensitive else column.lower()
    for field in fields:
        if (field["name"] if case_sensitive else field["name"].lower()) == wanted:
            metadata = dict(field.get("metadata") or {})
            if comment is None:
                metadata.pop(COMMENT_KEY, None)
            else:
                metadata[COMMENT_KEY] = comment
            field["metadata"] = metadata
            return json.dumps(schema, separators=(",", ":")), field
    names = ", ".join(f["name"] for f in fields)
    raise AnalysisException(f"ALTER TABLE {table} CHANGE COLUMN {column}: the table has no column "
                            f"{column} (columns: {names}); the table is unchanged")


def set_column_comment(spark: SparkSession, ref: TableRef, column: str,
                       comment: str | None) -> int:
    """Commit ``column``'s new comment to the table at ``ref``; return the new version."""
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    case_sensitive = spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true"
    schema_string, field = with_column_comment(snapshot.metadata.schema_string, column, comment,
                                               ref.display, case_sensitive)
    txn = log.start_transaction(snapshot)
    txn.update_metadata(dataclasses.replace(snapshot.metadata, schema_string=schema_string))
    params = {"column": json.dumps(field, separators=(",", ":"))}
    return commit(spark, txn, [], "CHANGE COLUMN", params, {})
