"""Issue 12, case 6: nothing that runs after a commit turns the committed operation into an
error. PySpark 4.0's ``to_arrow_schema`` (no ``timezone`` argument) made MERGE commit and then
raise TypeError; a failed checkpoint after a commit is logged and the result returned."""

from __future__ import annotations

import datetime as dt
import inspect
import logging
import sys

import pyarrow as pa
import pytest
from pyspark.sql.pandas import types as pandas_types

import sqlext
from sqlext.engine.io.scan import arrow_schema
from tests.support import read_deltalake

_REAL = pandas_types.to_arrow_schema


def _to_arrow_schema_40(schema, error_on_duplicated_field_names_in_struct=False, **kwargs):
    """PySpark 4.0.x's ``to_arrow_schema`` as sqlext sees it: no ``timezone`` argument (its
    signature says so, and a call from outside pyspark passing one raises TypeError, as 4.0's
    did); timestamps come out in UTC. PySpark's own callers (4.x's createDataFrame passes the
    argument) are served as before."""
    caller = sys._getframe(1).f_globals.get("__name__", "")
    if kwargs and not caller.startswith("pyspark"):
        raise TypeError(f"to_arrow_schema() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    kwargs.setdefault("timezone", "UTC")
    return _REAL(schema, error_on_duplicated_field_names_in_struct=
                 error_on_duplicated_field_names_in_struct, **kwargs)


_to_arrow_schema_40.__signature__ = inspect.Signature([
    inspect.Parameter("schema", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    inspect.Parameter("error_on_duplicated_field_names_in_struct",
                      inspect.Parameter.POSITIONAL_OR_KEYWORD, default=False)])


@pytest.fixture
def pyspark_40_arrow(monkeypatch):
    monkeypatch.setattr(pandas_types, "to_arrow_schema", _to_arrow_schema_40)
    assert "timezone" not in inspect.signature(pandas_types.to_arrow_schema).parameters


def _table(spark, path):
    df = spark.createDataFrame(
        [(1, "a", dt.datetime(2024, 1, 1, 12), "x"), (2, "b", dt.datetime(2024, 1, 2), "y")],
        "id long, v string, ts timestamp, part string")
    sqlext.write(df, str(path), partitionBy=["part"])


def test_arrow_schema_on_both_signatures(pyspark_40_arrow):
    from pyspark.sql import types as T
    schema = T.StructType([T.StructField("ts", T.TimestampType()),
                           T.StructField("n", T.LongType())])
    assert arrow_schema(schema) == pa.schema([("ts", pa.timestamp("us", tz="UTC")),
                                              ("n", pa.int64())])


def test_merge_and_sql_dml_on_the_pyspark_40_signature(spark, table_path, pyspark_40_arrow):
    _table(spark, table_path)
    source = spark.createDataFrame([(2, "B", dt.datetime(2024, 2, 2), "y"),
                                    (3, "c", dt.datetime(2024, 3, 3), "z")],
                                   "id long, v string, ts timestamp, part string")
    t = sqlext.DeltaTable.forPath(spark, str(table_path))
    result = (t.alias("t").merge(source.alias("s"), "t.id = s.id").whenMatchedUpdateAll()
              .whenNotMatchedInsertAll().execute())
    assert [tuple(r) for r in result.collect()] == [(2, 1, 0, 1)]
    deleted = sqlext.sql(spark, f"DELETE FROM delta.`{table_path}` WHERE id = 1").collect()
    assert [tuple(r) for r in deleted] == [(1,)]
    rows = sorted((r["id"], r["v"]) for r in read_deltalake(table_path).to_pylist())
    assert rows == [(2, "B"), (3, "c")]


def test_failed_checkpoint_after_commit_is_logged_and_the_result_returned(
        spark, table_path, caplog):
    _table(spark, table_path)                                            # version 0
    sqlext.sql(spark, f"ALTER TABLE delta.`{table_path}` SET TBLPROPERTIES "
                      "('delta.checkpointInterval' = '2')")              # version 1
    # the checkpoint of version 2 cannot be written: a directory holds its name
    blocker = table_path / "_delta_log" / f"{2:020d}.checkpoint.parquet"
    blocker.mkdir()
    (blocker / "keep").write_text("x")
    with caplog.at_level(logging.WARNING, logger="sqlext"):
        updated = sqlext.sql(spark, f"UPDATE delta.`{table_path}` SET v = 'z' WHERE id = 2")
    assert [tuple(r) for r in updated.collect()] == [(1,)]
    assert any("version 2" in m or "commit 2" in m for m in caplog.messages)
    assert (table_path / "_delta_log" / f"{2:020d}.json").exists()
    assert sorted((r.id, r.v) for r in sqlext.read(spark, str(table_path)).collect()) == [
        (1, "a"), (2, "z")]
