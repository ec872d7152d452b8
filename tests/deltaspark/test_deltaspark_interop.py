"""Interop with delta-spark 4.4 itself, both directions, at every version.

- A table sqlext writes with every operation (append, overwrite, replaceWhere, partitioned
  writes, DELETE, UPDATE, MERGE, schema evolution, OPTIMIZE, RESTORE, checkpoints, VACUUM) reads
  the same in delta-spark at every version, with the same change feed; delta-spark's DESCRIBE
  HISTORY names each operation and its key metrics agree with the rows delta-spark sees change.
- A table delta-spark writes with its defaults (and checkpoints) reads the same in sqlext at
  every version; sqlext modifies it; delta-spark reads every version again and goes on writing.
- Deletion vectors and column mapping: test_deltaspark_deletion_vectors.py and
  test_deltaspark_column_mapping.py; a table with both is read here, written by sqlext and read
  back by delta-spark.
"""

from __future__ import annotations

from collections import Counter

import sqlext
from tests.support import assert_same_rows
from tests.support.deltaspark import delta_path
from tests.support.spark import NO_RETENTION_CHECK, spark_conf

CHANGE_COLUMNS = ["_change_type", "_commit_version"]


def _sql(spark, text):
    return sqlext.sql(spark, text)


def _assert_versions_match(spark, ds_versions, path, versions):
    """sqlext reads each of ``versions`` as delta-spark did (``ds_versions``: read_versions)."""
    for version in versions:
        mine = sqlext.read(spark, str(path), versionAsOf=version).toArrow()
        theirs = ds_versions.filter(_eq(ds_versions, version)).drop_columns(["_version"])
        extra = [c for c in theirs.column_names if c not in mine.column_names]
        for column in extra:  # columns of a later schema, null-filled for this version
            assert theirs[column].null_count == len(theirs), (version, column)
        assert_same_rows(theirs.drop_columns(extra), mine, sort_by=["id"])


def _eq(table, version):
    import pyarrow.compute as pc

    return pc.equal(table["_version"], version)


def _by_version(history):
    """DESCRIBE HISTORY rows as {version: row}, map columns as dicts."""
    def plain(value):
        return dict(value) if isinstance(value, list) else value

    return {r["version"]: {k: plain(v) for k, v in r.items()} for r in history.to_pylist()}


def _history(spark, path):
    """sqlext's DESCRIBE HISTORY as {version: row}."""
    return _by_version(sqlext.DeltaTable.forPath(spark, str(path)).history().toArrow())


def _counts(changes, version):
    kinds = Counter(r["_change_type"] for r in changes.to_pylist() if r["_commit_version"] == version)
    return dict(kinds)


def test_sqlext_table_read_by_delta_spark_at_every_version(spark, delta_spark, tmp_path):
    path = tmp_path / "events"
    p = delta_path(path)
    schema = "id BIGINT, v STRING, day STRING"
    df = spark.createDataFrame([(i, f"v{i}", f"d{i % 3}") for i in range(12)], schema)
    ops = {}
    ops[sqlext.write(df, str(path), partitionBy=["day"])] = "WRITE"
    ops[sqlext.write(spark.createDataFrame([(20, "x", "d1"), (21, None, "d4")], schema),
                     str(path))] = "WRITE"
    ops[sqlext.write(spark.createDataFrame([(30, "r", "d0")], schema), str(path), mode="overwrite",
                     replaceWhere="day = 'd0'")] = "WRITE"
    _sql(spark, f"DELETE FROM {p} WHERE id = 4")                 # rewrites one file
    _sql(spark, f"DELETE FROM {p} WHERE day = 'd4'")             # whole files only
    _sql(spark, f"UPDATE {p} SET v = upper(v), day = 'd3' WHERE id % 2 = 1")  # rows move partition
    _sql(spark, f"""MERGE INTO {p} t
        USING (SELECT * FROM VALUES (1, 'm1', 'd3'), (2, 'm2', 'd2'), (40, 'new', 'd5')
               AS s(id, v, day)) s ON t.id = s.id
        WHEN MATCHED AND s.id = 2 THEN DELETE
        WHEN MATCHED THEN UPDATE SET *
        WHEN NOT MATCHED THEN INSERT *
        WHEN NOT MATCHED BY SOURCE AND t.id = 20 THEN UPDATE SET v = 'gone'""")
    sqlext.write(spark.createDataFrame([(50, "e", "d1", 5)], schema + ", n INT"), str(path),
                 mergeSchema=True)                               # schema evolution
    _sql(spark, f"OPTIMIZE {p}")
    _sql(spark, f"RESTORE TABLE {p} TO VERSION AS OF 5")
    last = sqlext.write(spark.createDataFrame([(60, "o", "d6")], schema), str(path),
                        mode="overwrite")                        # v10: a checkpoint is written
    assert last == 10 and (path / "_delta_log" / "00000000000000000010.checkpoint.parquet").exists()
    versions = list(range(last + 1))

    ds_versions = delta_spark.read_versions(path, versions)
    _assert_versions_match(spark, ds_versions, path, versions)

    # The change feed of every version. delta-spark reads a range with the latest schema and
    # refuses one across a schema change that schema cannot read (the column added at 7 and
    # dropped by RESTORE at 9: 7..8 too, since the latest schema lacks that column), so the feed
    # is compared in the ranges the latest schema reads.
    ranges = ((0, 6), (9, 10))
    answers = delta_spark.batch([("changes", {"path": str(path), "start": a, "end": b})
                                 for a, b in ranges] + [("history", {"path": str(path)})], check=True)
    for (start, end), theirs in zip(ranges, answers):
        mine = sqlext.changes(spark, str(path), startingVersion=start, endingVersion=end).toArrow()
        assert_same_rows(theirs.drop_columns(["_commit_timestamp"]),
                         mine.drop_columns(["_commit_timestamp"]), sort_by=["_commit_version", "id"])
    feed = answers[0]

    history = _by_version(answers[-1])
    mine = _history(spark, path)
    assert [history[v]["operation"] for v in versions] == [
        "WRITE", "WRITE", "WRITE", "DELETE", "DELETE", "UPDATE", "MERGE", "WRITE", "OPTIMIZE",
        "RESTORE", "WRITE"]
    for v in versions:  # sqlext's DESCRIBE HISTORY says what delta-spark's says
        for column in ("operation", "operationParameters", "operationMetrics", "readVersion",
                       "isolationLevel", "isBlindAppend", "userMetadata"):
            assert history[v][column] == mine[v][column], (v, column)
    metrics = {v: history[v]["operationMetrics"] for v in versions}
    rows_at = {v: ds_versions.filter(_eq(ds_versions, v)).num_rows for v in versions}
    assert int(metrics[3]["numDeletedRows"]) == rows_at[2] - rows_at[3] == 1
    assert int(metrics[5]["numUpdatedRows"]) == _counts(feed, 5)["update_postimage"]
    assert {k: int(metrics[6][k]) for k in ("numTargetRowsUpdated", "numTargetRowsDeleted",
                                            "numTargetRowsInserted")} == {
        "numTargetRowsUpdated": _counts(feed, 6)["update_postimage"],
        "numTargetRowsDeleted": _counts(feed, 6)["delete"],
        "numTargetRowsInserted": _counts(feed, 6)["insert"]}
    assert int(metrics[8]["numRemovedFiles"]) > int(metrics[8]["numAddedFiles"]) >= 1
    assert history[9]["operationParameters"]["version"] == "5"

    # VACUUM RETAIN 0 HOURS: afterwards delta-spark reads the latest version and the history.
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        _sql(spark, f"VACUUM {p} RETAIN 0 HOURS")
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")
    after = delta_spark.batch([("sql", {"sql": f"SELECT * FROM {p}"}),
                               ("history", {"path": str(path)})], check=True)
    assert_same_rows(after[0], sqlext.read(spark, str(path)).toArrow())
    assert [r["operation"] for r in after[1].to_pylist()][:2] == ["VACUUM END", "VACUUM START"]


def test_delta_spark_table_read_modified_by_sqlext_and_read_back(spark, delta_spark, tmp_path):
    path = tmp_path / "theirs"
    p = delta_path(path)
    # delta-spark's defaults (no change feed), checkpoints every 2 commits to exercise its
    # checkpoints and _last_checkpoint.
    delta_spark.batch([("sql", {"sql": sql}) for sql in (
        f"CREATE TABLE {p} (id BIGINT, v STRING, day DATE, amount DECIMAL(10, 2)) USING delta "
        "PARTITIONED BY (day) TBLPROPERTIES (delta.checkpointInterval = 2)",
        f"INSERT INTO {p} SELECT id, concat('v', id), date_add(DATE'2024-01-01', CAST(id % 3 AS INT)),"
        " CAST(id AS DECIMAL(10, 2)) / 4 FROM range(20)",
        f"DELETE FROM {p} WHERE id IN (3, 4)",
        f"UPDATE {p} SET v = 'u' WHERE id > 15",
        f"MERGE INTO {p} t USING (SELECT id, 'm' AS v, DATE'2024-02-01' AS day, "
        "CAST(1 AS DECIMAL(10, 2)) AS amount FROM range(18, 23)) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
        f"INSERT INTO {p} REPLACE WHERE day = DATE'2024-01-02' "
        "SELECT 100L, 'r', DATE'2024-01-02', CAST(2.5 AS DECIMAL(10, 2))",
    )], check=True)
    assert (path / "_delta_log" / "_last_checkpoint").exists()
    theirs = delta_spark.read_versions(path, range(6))
    _assert_versions_match(spark, theirs, path, range(6))

    # sqlext modifies the table: append, DELETE, UPDATE, MERGE (versions 6-9)
    _sql(spark, f"INSERT INTO {p} VALUES (200, 'a', DATE'2024-03-01', 7.25)")
    _sql(spark, f"DELETE FROM {p} WHERE id = 5")
    _sql(spark, f"UPDATE {p} SET amount = amount * 2 WHERE day = DATE'2024-01-01'")
    _sql(spark, f"""MERGE INTO {p} t USING (SELECT * FROM VALUES (200L, 'b'), (300L, 'c')
        AS s(id, v)) s ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET v = s.v
        WHEN NOT MATCHED THEN INSERT (id, v, day, amount) VALUES (s.id, s.v, DATE'2024-03-02', 0)""")
    after = delta_spark.batch([
        ("read_versions", {"path": str(path), "versions": list(range(10))}),
        ("history", {"path": str(path)}),
        ("sql", {"sql": f"INSERT INTO {p} VALUES (400, 'ds', DATE'2024-04-01', 1)"}),  # v10
        ("sql", {"sql": f"DELETE FROM {p} WHERE id = 300"}),                           # v11
        ("read_versions", {"path": str(path), "versions": [10, 11]}),
    ], check=True)
    _assert_versions_match(spark, after[0], path, range(10))
    history = _by_version(after[1])
    assert [history[v]["operation"] for v in range(6, 10)] == ["WRITE", "DELETE", "UPDATE", "MERGE"]
    assert history[7]["operationMetrics"]["numDeletedRows"] == "1"
    assert history[9]["operationMetrics"]["numTargetRowsInserted"] == "1"
    _assert_versions_match(spark, after[4], path, [10, 11])


def test_delta_spark_table_with_deletion_vectors_and_column_mapping(spark, delta_spark, tmp_path):
    """delta-spark's table with both features (Databricks' defaults for new tables): sqlext reads
    every version as delta-spark does (a vector under renamed columns); sqlext's DELETE and UPDATE
    on it read back the same in delta-spark, which writes it again."""
    path = tmp_path / "dv_cm"
    p = delta_path(path)
    statements = (
        f"CREATE TABLE {p} (id BIGINT, v STRING) USING delta TBLPROPERTIES "
        "(delta.enableDeletionVectors = true, delta.columnMapping.mode = 'name')",   # v0
        f"INSERT INTO {p} SELECT id, concat('v', id) FROM range(0, 50)",              # v1
        f"DELETE FROM {p} WHERE id % 7 = 0",                                          # v2
        f"ALTER TABLE {p} RENAME COLUMN v TO w",                                      # v3
        f"UPDATE {p} SET w = 'u' WHERE id = 10",                                      # v4
    )
    results = delta_spark.batch([("sql", {"sql": sql}) for sql in statements]
                                + [("read_versions", {"path": str(path),
                                                      "versions": [1, 2, 3, 4]})], check=True)
    _assert_versions_match(spark, results[-1], path, [1, 2, 3, 4])
    assert sqlext.read(spark, str(path)).count() == 50 - 8
    # sqlext writes to it (vectors under the mapped names), delta-spark reads that back and
    # goes on writing, sqlext reads delta-spark's commit
    _sql(spark, f"DELETE FROM {p} WHERE id = 2")                                   # v5
    _sql(spark, f"UPDATE {p} SET w = 'sqlext' WHERE id IN (3, 10)")               # v6
    assert sqlext.DeltaTable.forPath(spark, str(path)).history(1).collect()[0][
        "operationMetrics"]["numDeletionVectorsAdded"] == "1"
    results = delta_spark.batch([("sql", {"sql": f"DELETE FROM {p} WHERE w = 'sqlext'"}),  # v7
                                 ("read_versions", {"path": str(path),
                                                    "versions": [5, 6, 7]})], check=True)
    _assert_versions_match(spark, results[-1], path, [5, 6, 7])
    assert sqlext.read(spark, str(path)).count() == 50 - 8 - 1 - 2



_CDF_DEFAULT = "spark.databricks.delta.properties.defaults.enableChangeDataFeed"


def _vacuum_and_convert_statements(root) -> list[str]:
    """The same statements for either engine, on tables under ``root``: VACUUM's answers with
    and without DRY RUN, and CONVERT TO DELTA without and with the session's default of the
    change feed (``converted`` and ``converted_cdf`` hold one parquet file each)."""
    t = delta_path(root / "vacuumed")
    return [
        f"CREATE TABLE {t} (id BIGINT) USING delta "
        "TBLPROPERTIES (delta.enableChangeDataFeed = false)",
        f"INSERT INTO {t} VALUES (1)",
        f"INSERT OVERWRITE {t} VALUES (2)",                      # removes version 1's file
        f"VACUUM {t} RETAIN 0 HOURS DRY RUN",
        f"VACUUM {t} RETAIN 0 HOURS",
        f"CONVERT TO DELTA parquet.`{root / 'converted'}`",
        f"DESCRIBE DETAIL {delta_path(root / 'converted')}",
        f"SET {_CDF_DEFAULT} = true",
        f"CONVERT TO DELTA parquet.`{root / 'converted_cdf'}`",
        f"RESET {_CDF_DEFAULT}",
        f"DESCRIBE DETAIL {delta_path(root / 'converted_cdf')}",
    ]


def _plain(rows: list[dict], root) -> list[dict]:
    """Rows with ``file:<root>`` for the engine's folder, maps as dicts, DESCRIBE DETAIL's
    protocol columns only."""
    keep = ("path", "minReaderVersion", "minWriterVersion", "properties", "tableFeatures")
    return [{k: (dict(v) if k == "properties" else
                 v.replace(f"file:{root}", "file:<root>") if isinstance(v, str) else v)
             for k, v in row.items() if k in keep} for row in rows]


def test_vacuum_and_convert_answer_as_delta_spark(spark, delta_spark, tmp_path):
    """SQL VACUUM answers the table's qualified path (a dry run: the files it would delete), and
    CONVERT TO DELTA gives the table only the session's default properties (the change feed off
    by default), as delta-spark 4.4 does; each engine on tables of its own."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    answers = {}
    for engine in ("delta-spark", "sqlext"):
        root = tmp_path / engine
        for name in ("converted", "converted_cdf"):
            (root / name).mkdir(parents=True)
            pq.write_table(pa.table({"id": [1, 2, 3]}), root / name / "part-0.parquet")
        statements = _vacuum_and_convert_statements(root)
        if engine == "delta-spark":
            tables = delta_spark.batch([("sql", {"sql": s}) for s in statements], check=True)
        else:
            try:
                with spark_conf(spark, NO_RETENTION_CHECK):
                    tables = [sqlext.sql(spark, s).toArrow() for s in statements]
            finally:
                spark.conf.unset(_CDF_DEFAULT)
        answers[engine] = [_plain(table.to_pylist(), root) for table in tables]
    theirs, ours = answers["delta-spark"], answers["sqlext"]
    dry_run, vacuumed, detail, detail_cdf = 3, 4, 6, 10
    assert [r["path"].rsplit("/", 1)[0] for r in ours[dry_run]] == \
        [r["path"].rsplit("/", 1)[0] for r in theirs[dry_run]] == ["file:<root>/vacuumed"]
    assert ours[vacuumed] == theirs[vacuumed] == [{"path": "file:<root>/vacuumed"}]
    assert ours[detail] == theirs[detail] == [{"minReaderVersion": 1, "minWriterVersion": 2,
                                               "properties": {},
                                               "tableFeatures": ["appendOnly", "invariants"]}]
    # the session's default turns the feed on for a converted table as for a new one; the
    # protocol is the one each engine gives a new table with the feed on (delta-spark 4.4:
    # 1/7 listing changeDataFeed, sqlext: 1/4)
    for rows in (ours[detail_cdf], theirs[detail_cdf]):
        assert rows[0]["properties"] == {"delta.enableChangeDataFeed": "true"}
        assert "changeDataFeed" in rows[0]["tableFeatures"]
