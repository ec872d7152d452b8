"""Every write mode and write option of ``sqlext.write``, each a real Spark write checked by
sqlext, deltalake and DuckDB."""

from __future__ import annotations

import json

import pytest
from deltalake import DeltaTable as RsTable

import sqlext
from sqlext.errors import (InvariantViolationError, SchemaMismatchError,
                           TableAlreadyExistsError)
from tests.support.table_checks import (actions_of, arrow, assert_readers_agree, commit_info,
                                  latest_version, table_state)
from tests.support import (assert_same_rows, deltalake_add_paths, deltalake_cdf, duckdb_query,
                           duckdb_table, read_deltalake)

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's

COLS = ["id", "s", "p"]
BASE = [(1, "a1", "a"), (2, "b1", "b"), (3, "c1", "c"), (4, "a2", "a")]


def _df(spark, rows, ddl="id int, s string, p string"):
    return spark.createDataFrame(rows, ddl)


def _create(spark, path, rows=BASE, **kw):
    return sqlext.write(_df(spark, rows), str(path), **kw)


def test_append_creates_missing_table_then_appends(spark, table_path):
    assert not table_path.exists()
    assert _create(spark, table_path) == 0
    assert sqlext.write(_df(spark, [(5, "b2", "b")]), str(table_path)) == 1
    assert_readers_agree(spark, table_path, arrow(COLS, BASE + [(5, "b2", "b")]))
    info = commit_info(table_path, 1)
    assert info["operation"] == "WRITE"
    assert info["operationParameters"]["mode"] == "Append"
    assert info["isBlindAppend"] is True and info["readVersion"] == 0
    assert info["operationMetrics"]["numOutputRows"] == "1"
    # a new table has the change feed on: protocol 1/4 and the property
    protocol = actions_of(table_path, 0, "protocol")[0]
    assert (protocol["minReaderVersion"], protocol["minWriterVersion"]) == (1, 4)
    rs = RsTable(str(table_path))
    assert rs.metadata().configuration["delta.enableChangeDataFeed"] == "true"
    assert rs.protocol().min_writer_version == 4


def test_overwrite_replaces_every_row(spark, table_path):
    _create(spark, table_path, partitionBy=["p"])
    first_files = deltalake_add_paths(table_path)
    new = [(10, "x", "a"), (11, "y", "z")]
    assert sqlext.write(_df(spark, new), str(table_path), mode="overwrite") == 1
    assert_readers_agree(spark, table_path, arrow(COLS, new))
    assert_readers_agree(spark, table_path, arrow(COLS, BASE), version=0)
    assert {r["path"] for r in actions_of(table_path, 1, "remove")} == first_files
    info = commit_info(table_path, 1)
    assert info["operationParameters"]["mode"] == "Overwrite"
    assert info["operationMetrics"]["numRemovedFiles"] == str(len(first_files))


@pytest.mark.parametrize("mode", ["error", "errorifexists"])
def test_error_mode_refuses_an_existing_table(spark, table_path, mode):
    assert _create(spark, table_path, mode=mode) == 0        # a missing table is created
    before = table_state(table_path)
    with pytest.raises(TableAlreadyExistsError, match="already exists"):
        sqlext.write(_df(spark, [(9, "z", "z")]), str(table_path), mode=mode)
    assert table_state(table_path) == before


def test_ignore_mode_commits_nothing_on_an_existing_table(spark, table_path):
    assert _create(spark, table_path, mode="ignore") == 0
    before = table_state(table_path)
    assert sqlext.write(_df(spark, [(9, "z", "z")]), str(table_path), mode="ignore") == 0
    assert table_state(table_path) == before
    assert_readers_agree(spark, table_path, arrow(COLS, BASE))


def test_replace_where_on_a_partition_column(spark, table_path):
    _create(spark, table_path, partitionBy=["p"])
    a_files = {p for p in deltalake_add_paths(table_path) if p.startswith("p=a/")}
    new = [(20, "a-new", "a")]
    version = sqlext.write(_df(spark, new), str(table_path), mode="overwrite",
                           replaceWhere="p = 'a'")
    assert version == 1
    expected = [r for r in BASE if r[2] != "a"] + new
    assert_readers_agree(spark, table_path, arrow(COLS, expected))
    assert {r["path"] for r in actions_of(table_path, 1, "remove")} == a_files
    params = commit_info(table_path, 1)["operationParameters"]
    assert params["mode"] == "Overwrite" and "p = 'a'" in params["predicate"]

    before = table_state(table_path)
    with pytest.raises(InvariantViolationError, match="replaceWhere") as raised:
        sqlext.write(_df(spark, [(21, "x", "a"), (22, "y", "b")]), str(table_path),
                     mode="overwrite", replaceWhere="p = 'a'")
    # the offending row is named (checked inside the write's job), the version too
    assert '"id":22' in str(raised.value) and "version 1" in str(raised.value)
    assert table_state(table_path) == before


def test_replace_where_on_a_data_column_rewrites_only_files_with_matching_rows(spark, table_path):
    # three files: even ids 0..18, odd ids 1..19, ids 20..29. The predicate's range overlaps the
    # statistics of the first two files, but only the first holds matching rows.
    evens = [(i, f"v{i}", "x") for i in range(0, 20, 2)]
    odds = [(i, f"v{i}", "x") for i in range(1, 20, 2)]
    tail = [(i, f"v{i}", "x") for i in range(20, 30)]
    rdd = spark.sparkContext.parallelize(evens + odds + tail, 3)
    sqlext.write(spark.createDataFrame(rdd, "id int, s string, p string"), str(table_path))
    adds = actions_of(table_path, 0, "add")
    assert len(adds) == 3
    by_min = {json.loads(a["stats"])["minValues"]["id"]: a["path"] for a in adds}
    even_file, odd_file, tail_file = by_min[0], by_min[1], by_min[20]

    predicate = "id = 4 OR id = 6"
    new = [(4, "four", "x"), (6, "six", "x")]
    assert sqlext.write(_df(spark, new), str(table_path), mode="overwrite",
                        replaceWhere=predicate) == 1
    old = duckdb_table("replace_where_old", read_deltalake(table_path, 0))
    fresh = duckdb_table("replace_where_new", arrow(COLS, new))
    expected = duckdb_query(f"SELECT * FROM {old} WHERE NOT coalesce(id = 4 OR id = 6, false) "
                            f"UNION ALL SELECT * FROM {fresh}")
    assert_readers_agree(spark, table_path, expected)

    assert [r["path"] for r in actions_of(table_path, 1, "remove")] == [even_file]
    live = deltalake_add_paths(table_path)
    assert {odd_file, tail_file} <= live and even_file not in live
    metrics = commit_info(table_path, 1)["operationMetrics"]
    assert (metrics["numRemovedFiles"], metrics["numDeletedRows"], metrics["numCopiedRows"]) == \
        ("1", "2", "8")
    # the change feed of that version: the two replaced rows out, the two new rows in
    feed = deltalake_cdf(table_path, 1, 1).select(["id", "s", "_change_type"])
    assert_same_rows(feed, arrow(["id", "s", "_change_type"],
                                 [(4, "v4", "delete"), (6, "v6", "delete"),
                                  (4, "four", "insert"), (6, "six", "insert")]))

    before = table_state(table_path)
    with pytest.raises(InvariantViolationError):
        sqlext.write(_df(spark, [(4, "ok", "x"), (50, "outside", "x")]), str(table_path),
                     mode="overwrite", replaceWhere=predicate)
    assert table_state(table_path) == before


def test_dynamic_partition_overwrite_option(spark, table_path):
    _create(spark, table_path, partitionBy=["p"])
    new = [(30, "b-new", "b"), (31, "d-new", "d")]
    sqlext.write(_df(spark, new), str(table_path), mode="overwrite",
                 partitionOverwriteMode="dynamic")
    expected = [r for r in BASE if r[2] not in ("b", "d")] + new
    assert_readers_agree(spark, table_path, arrow(COLS, expected))
    assert {r["partitionValues"]["p"] for r in actions_of(table_path, 1, "remove")} == {"b"}


def test_dynamic_partition_overwrite_session_conf(spark, table_path):
    _create(spark, table_path, partitionBy=["p"])
    key = "spark.sql.sources.partitionOverwriteMode"
    spark.conf.set(key, "dynamic")
    try:
        sqlext.write(_df(spark, [(40, "c-new", "c")]), str(table_path), mode="overwrite")
    finally:
        spark.conf.unset(key)
    expected = [r for r in BASE if r[2] != "c"] + [(40, "c-new", "c")]
    assert_readers_agree(spark, table_path, arrow(COLS, expected))
    # back to static: an overwrite replaces every partition
    sqlext.write(_df(spark, [(41, "s", "s")]), str(table_path), mode="overwrite")
    assert_readers_agree(spark, table_path, arrow(COLS, [(41, "s", "s")]))


def test_merge_schema_adds_a_column_old_rows_read_null(spark, table_path):
    _create(spark, table_path)
    more = spark.createDataFrame([(5, "e", "e", 1.5)], "id int, s string, p string, extra double")
    assert sqlext.write(more, str(table_path), mergeSchema=True) == 1
    expected = [(*r, None) for r in BASE] + [(5, "e", "e", 1.5)]
    assert_readers_agree(spark, table_path, arrow(COLS + ["extra"], expected))
    schema = RsTable(str(table_path)).schema().to_arrow()
    assert schema.names == COLS + ["extra"]


def test_upcast_data_keeps_the_table_type(spark, table_path):
    sqlext.write(spark.createDataFrame([(1, "a")], "n long, s string"), str(table_path))
    sqlext.write(spark.createDataFrame([(2, "b")], "n int, s string"), str(table_path))
    sqlext.write(spark.createDataFrame([(3, "c")], "n int, s string"), str(table_path),
                 mergeSchema=True)
    assert sqlext.read(spark, str(table_path)).schema["n"].dataType.simpleString() == "bigint"
    assert '"long"' in actions_of(table_path, 0, "metaData")[0]["schemaString"]
    assert not actions_of(table_path, 2, "metaData")       # no schema change was committed
    assert_readers_agree(spark, table_path, arrow(["n", "s"], [(1, "a"), (2, "b"), (3, "c")]))


def test_no_silent_widening_of_the_table_type(spark, table_path):
    sqlext.write(spark.createDataFrame([(1, "a")], "n int, s string"), str(table_path))
    before = table_state(table_path)
    for merge in (False, True):
        with pytest.raises(SchemaMismatchError, match=r"column n has type int"):
            sqlext.write(spark.createDataFrame([(2, "b")], "n long, s string"), str(table_path),
                         mergeSchema=merge)
    assert table_state(table_path) == before


def test_schema_mismatch_leaves_the_table_unchanged(spark, table_path):
    _create(spark, table_path)
    before = table_state(table_path)
    with pytest.raises(SchemaMismatchError, match="extra"):
        sqlext.write(spark.createDataFrame([(5, "e", "e", 1.5)],
                                           "id int, s string, p string, extra double"),
                     str(table_path))
    with pytest.raises(SchemaMismatchError, match="column id"):
        sqlext.write(spark.createDataFrame([("x", "e", "e")], "id string, s string, p string"),
                     str(table_path))
    assert table_state(table_path) == before


def test_overwrite_schema_replaces_schema_and_partitioning(spark, table_path):
    _create(spark, table_path, partitionBy=["p"])
    table_id = actions_of(table_path, 0, "metaData")[0]["id"]
    with pytest.raises(SchemaMismatchError, match="partition"):
        sqlext.write(spark.createDataFrame([("k", 1.0)], "k string, v double"), str(table_path),
                     mode="overwrite", partitionBy=["k"])
    new = spark.createDataFrame([("k1", 1.0), ("k2", 2.0)], "k string, v double")
    assert sqlext.write(new, str(table_path), mode="overwrite", partitionBy=["k"],
                        overwriteSchema=True) == 1
    assert_readers_agree(spark, table_path, arrow(["k", "v"], [("k1", 1.0), ("k2", 2.0)]))
    metadata = RsTable(str(table_path)).metadata()
    assert metadata.partition_columns == ["k"] and metadata.id == table_id
    assert metadata.configuration["delta.enableChangeDataFeed"] == "true"
    assert RsTable(str(table_path)).schema().to_arrow().names == ["k", "v"]
    assert_readers_agree(spark, table_path, arrow(COLS, BASE), version=0)


def test_configuration_turns_the_change_feed_off(spark, table_path):
    _create(spark, table_path, configuration={"delta.enableChangeDataFeed": "false",
                                              "delta.checkpointInterval": 5})
    protocol = actions_of(table_path, 0, "protocol")[0]
    assert (protocol["minReaderVersion"], protocol["minWriterVersion"]) == (1, 2)
    conf = RsTable(str(table_path)).metadata().configuration
    assert conf == {"delta.enableChangeDataFeed": "false", "delta.checkpointInterval": "5"}


def test_user_metadata_is_recorded(spark, table_path):
    _create(spark, table_path, userMetadata="nightly load #7")
    assert commit_info(table_path, 0)["userMetadata"] == "nightly load #7"
    assert RsTable(str(table_path)).history(1)[0]["userMetadata"] == "nightly load #7"


def test_idempotent_writes_skip_a_version_already_committed(spark, table_path):
    _create(spark, table_path)
    row = _df(spark, [(7, "t", "t")])
    assert sqlext.write(row, str(table_path), txnAppId="loader", txnVersion=3) == 1
    assert sqlext.write(row, str(table_path), txnAppId="loader", txnVersion=3) == 1
    assert sqlext.write(row, str(table_path), txnAppId="loader", txnVersion=2) == 1
    assert latest_version(table_path) == 1
    assert sqlext.write(row, str(table_path), txnAppId="loader", txnVersion=4) == 2
    assert sqlext.write(row, str(table_path), txnAppId="other", txnVersion=1) == 3
    assert [t["version"] for t in actions_of(table_path, 2, "txn")] == [4]
    rs = RsTable(str(table_path))
    assert (rs.transaction_version("loader"), rs.transaction_version("other")) == (4, 1)
    assert_readers_agree(spark, table_path, arrow(COLS, BASE + [(7, "t", "t")] * 3))
