"""``sqlext.DeltaTable``: delta-spark's construction, reading, history and detail API."""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import DeltaTable as RsTable

import sqlext
from sqlext.errors import TableNotFoundError
from tests.support.table_checks import arrow
from tests.support import assert_same_rows, deltalake_add_paths, read_deltalake

# DESCRIBE HISTORY / DeltaTable.history() columns of delta-spark, in order
HISTORY_COLUMNS = ["version", "timestamp", "userId", "userName", "operation",
                   "operationParameters", "job", "notebook", "clusterId", "readVersion",
                   "isolationLevel", "isBlindAppend", "operationMetrics", "userMetadata",
                   "engineInfo"]
DETAIL_COLUMNS = ["format", "id", "name", "description", "location", "createdAt", "lastModified",
                  "partitionColumns", "clusteringColumns", "numFiles", "sizeInBytes",
                  "properties", "minReaderVersion", "minWriterVersion", "tableFeatures"]


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    """Three versions: create (partitioned by p), append, replaceWhere overwrite of p = 'a'."""
    path = tmp_path_factory.mktemp("delta_table") / "t"
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id int, p string")
    sqlext.write(df, str(path), partitionBy=["p"], userMetadata="first")
    sqlext.write(spark.createDataFrame([(3, "b")], "id int, p string"), str(path))
    sqlext.write(spark.createDataFrame([(4, "a")], "id int, p string"), str(path),
                 mode="overwrite", replaceWhere="p = 'a'")
    return path


def test_for_path_and_to_df(spark, table):
    dt = sqlext.DeltaTable.forPath(spark, str(table))
    assert_same_rows(dt.toDF(), arrow(["id", "p"], [(2, "b"), (3, "b"), (4, "a")]))
    assert_same_rows(dt.toDF(), read_deltalake(table))


def test_for_path_of_something_else_raises(spark, tmp_path):
    with pytest.raises(TableNotFoundError, match="not a Delta table"):
        sqlext.DeltaTable.forPath(spark, str(tmp_path / "missing"))


def test_is_delta_table(spark, table, tmp_path):
    plain = tmp_path / "plain_parquet"
    spark.range(3).write.parquet(str(plain))
    (tmp_path / "empty").mkdir()
    assert sqlext.DeltaTable.isDeltaTable(spark, str(table)) is True
    assert sqlext.DeltaTable.isDeltaTable(spark, str(plain)) is False
    assert sqlext.DeltaTable.isDeltaTable(spark, str(tmp_path / "empty")) is False
    assert sqlext.DeltaTable.isDeltaTable(spark, str(tmp_path / "missing")) is False


def test_for_name(spark, tmp_path):
    sqlext.write(spark.createDataFrame([(1, "x")], "id int, s string"), "dt_named")
    dt = sqlext.DeltaTable.forName(spark, "dt_named")
    assert [tuple(r) for r in dt.toDF().collect()] == [(1, "x")]
    assert dt.detail().collect()[0]["name"].endswith("default.dt_named")
    with pytest.raises(TableNotFoundError):
        sqlext.DeltaTable.forName(spark, "dt_no_such_table")


def test_alias(spark, table):
    df = sqlext.DeltaTable.forPath(spark, str(table)).alias("t").toDF()
    other = spark.createDataFrame([(4, "four")], "id int, name string").alias("o")
    joined = df.join(other, df["id"] == other["id"]).select("t.id", "t.p", "o.name")
    assert [tuple(r) for r in joined.collect()] == [(4, "a", "four")]


def test_history(spark, table):
    dt = sqlext.DeltaTable.forPath(spark, str(table))
    history = dt.history()
    assert history.columns == HISTORY_COLUMNS
    rows = history.collect()
    assert [r.version for r in rows] == [2, 1, 0]
    assert [r.operation for r in rows] == ["WRITE", "WRITE", "WRITE"]
    assert [r.operationParameters["mode"] for r in rows] == ["Overwrite", "Append", "Append"]
    # delta-spark's WRITE records a replaceWhere predicate as its text, not a JSON list
    assert rows[0].operationParameters["predicate"] == "p = 'a'"
    assert rows[2].operationParameters["partitionBy"] == '["p"]'
    assert rows[2].userMetadata == "first" and rows[1].userMetadata is None
    assert rows[1].operationMetrics["numOutputRows"] == "1"
    assert rows[1].operationMetrics["numFiles"] == "1"
    assert rows[0].operationMetrics["numRemovedFiles"] == "1"
    assert [r.readVersion for r in rows] == [1, 0, None]
    assert [r.isBlindAppend for r in rows] == [False, True, True]
    assert rows[0].timestamp > rows[1].timestamp > rows[2].timestamp
    assert all(r.engineInfo.startswith("sqlext/") and "Apache-Spark/" in r.engineInfo
               for r in rows)
    # delta-rs reads the same history
    rs = RsTable(str(table)).history()
    assert [(h["version"], h["operation"]) for h in rs] == [(r.version, r.operation) for r in rows]
    limited = dt.history(1).collect()
    assert [r.version for r in limited] == [2]


def test_detail(spark, table):
    detail = sqlext.DeltaTable.forPath(spark, str(table)).detail()
    assert detail.columns == DETAIL_COLUMNS
    (row,) = detail.collect()
    rs = RsTable(str(table))
    adds = pa.table(rs.get_add_actions())
    assert row.format == "delta" and row.id == rs.metadata().id and row.name is None
    assert row.location.removeprefix("file:") == str(table)
    assert row.numFiles == len(deltalake_add_paths(table)) == 3
    assert row.sizeInBytes == sum(adds.column("size_bytes").to_pylist())
    assert row.partitionColumns == ["p"] and row.clusteringColumns == []
    assert row.properties == {"delta.enableChangeDataFeed": "true"}
    assert (row.minReaderVersion, row.minWriterVersion) == (1, 4)
    # delta-spark lists the features the protocol supports, implied ones included
    assert row.tableFeatures == ["appendOnly", "changeDataFeed", "checkConstraints",
                                 "generatedColumns", "invariants"]
    assert row.createdAt <= row.lastModified


def test_an_unparseable_timestamp_is_a_sqlext_error(spark, table):
    # delta-spark refuses such a timestamp at analysis (DeltaTimeTravelSuite); the table stays
    dt = sqlext.DeltaTable.forPath(spark, str(table))
    before = [r.version for r in dt.history().collect()]
    attempts = [
        lambda: dt.restoreToTimestamp("not a timestamp"),
        lambda: sqlext.read(spark, str(table), timestampAsOf="2024-13-45"),
        lambda: sqlext.sql(spark, f"SELECT * FROM delta.`{table}` TIMESTAMP AS OF 'yesterday'"
                           ).collect(),
        lambda: sqlext.sql(spark, f"RESTORE TABLE delta.`{table}` TO TIMESTAMP AS OF 'soon'"),
    ]
    for attempt in attempts:
        with pytest.raises(sqlext.SqlextError, match="as a timestamp") as raised:
            attempt()
        assert not isinstance(raised.value, ValueError)
        assert str(table) in str(raised.value)
    assert [r.version for r in dt.history().collect()] == before


def test_history_shows_a_replace_where_predicate_as_text(spark, table):
    # delta-spark's WRITE operation records operationParameters.predicate = the replaceWhere text
    rows = sqlext.sql(spark, f"DESCRIBE HISTORY delta.`{table}`").collect()
    assert rows[0].operation == "WRITE"
    assert rows[0].operationParameters["predicate"] == "p = 'a'"
