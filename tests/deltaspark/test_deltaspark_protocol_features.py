"""Tables delta-spark 4.4 writes with the table features of current Delta writers read the same
in sqlext as in delta-spark at every version: V2 checkpoints (JSON and parquet top-level files
with sidecars), type widening, variant columns, in-commit timestamps (timestamp time travel and
history), row tracking, liquid clustering (domain metadata), Iceberg compatibility, identity and
generated columns, log compaction files and ``.crc`` files; sqlext's own writes to a
V2-checkpoint table, whose checkpoints delta-spark reads. Writer features sqlext cannot honour
make writes fail with :class:`UnsupportedTableFeatureError`, leaving the table as it was.

All tables are made by one batch of delta-spark requests per module (its worker costs ~20 s to
start, each request far less)."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil

import pyarrow as pa
import pytest

import sqlext
from sqlext.errors import UnsupportedTableFeatureError
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows, read_duckdb
from tests.support.deltaspark import delta_path
from tests.support.kernel_tables import clear_caches

V2_VERSIONS = 7
TW_VERSIONS = 12


def _v2_statements(p: str, fmt: str) -> list[str]:
    return [
        f"SET spark.databricks.delta.checkpointV2.topLevelFileFormat = {fmt}",
        "SET spark.databricks.delta.checkpoint.partSize = 3",     # several sidecar files
        f"""CREATE TABLE {p} (id BIGINT, v STRING, p STRING) USING delta PARTITIONED BY (p)
            TBLPROPERTIES (delta.checkpointPolicy = 'v2', delta.checkpointInterval = 2,
                           delta.enableChangeDataFeed = true)""",
        f"INSERT INTO {p} SELECT id, concat('v', id), CAST(id % 3 AS STRING) FROM range(0, 30)",
        f"INSERT INTO {p} VALUES (100, 'a', '0'), (101, 'b', '1')",
        f"DELETE FROM {p} WHERE id % 4 = 0",
        f"UPDATE {p} SET v = 'upd' WHERE id % 5 = 0",
        f"INSERT INTO {p} VALUES (102, 'c', '2')",
        f"DELETE FROM {p} WHERE p = '1'",
        "RESET spark.databricks.delta.checkpoint.partSize",
    ]


_TW_COLUMNS = "b, s, i, f, d, dec, i2, i3"


def _type_widening_statements(p: str) -> list[str]:
    changes = [("b", "SHORT"), ("s", "INT"), ("i", "BIGINT"), ("f", "DOUBLE"),
               ("d", "TIMESTAMP_NTZ"), ("dec", "DECIMAL(10,4)"), ("i2", "DECIMAL(12,2)"),
               ("i3", "DOUBLE")]
    return [
        f"""CREATE TABLE {p} (b BYTE, s SHORT, i INT, f FLOAT, d DATE, dec DECIMAL(5,2), i2 INT,
            i3 INT, part INT) USING delta PARTITIONED BY (part)
            TBLPROPERTIES (delta.enableTypeWidening = true,
                           'delta.feature.timestampNtz' = 'supported')""",
        f"""INSERT INTO {p} VALUES (1, 2, 3, 1.5, DATE'2024-01-02', 123.45, 7, 8, 1),
            (-5, -300, 2147483647, -0.25, DATE'1999-12-31', -999.99, -2147483648, 9, 2)""",
        *[f"ALTER TABLE {p} CHANGE COLUMN {c} TYPE {t}" for c, t in changes],
        f"ALTER TABLE {p} CHANGE COLUMN part TYPE BIGINT",
        f"""INSERT INTO {p} VALUES (300, 70000, 5000000000, 2.25,
            TIMESTAMP_NTZ'2024-01-03 04:05:06', 123456.7891, 1234567890.12, 0.5, 5000000000)""",
    ]


def _build(delta_spark, root) -> dict:
    """Every table of the module, made by one batch; the answers delta-spark gives for them."""
    paths = {name: root / name for name in ("v2json", "v2parquet", "tw", "ict", "variant", "rt",
                                            "clustered", "iceberg", "generated", "plain")}
    p = {name: delta_path(path) for name, path in paths.items()}
    statements = [
        *_v2_statements(p["v2json"], "json"),
        *_v2_statements(p["v2parquet"], "parquet"),
        *_type_widening_statements(p["tw"]),
        f"""CREATE TABLE {p['ict']} (id BIGINT) USING delta
            TBLPROPERTIES (delta.enableChangeDataFeed = true)""",
        f"INSERT INTO {p['ict']} VALUES (1)",
        f"ALTER TABLE {p['ict']} SET TBLPROPERTIES (delta.enableInCommitTimestamps = true)",
        f"INSERT INTO {p['ict']} VALUES (2)",
        f"INSERT INTO {p['ict']} VALUES (3)",
        f"CREATE TABLE {p['variant']} (id BIGINT, v VARIANT) USING delta",
        f"""INSERT INTO {p['variant']} SELECT 1, parse_json('{{"a": 1, "b": [1, 2.5, "x"]}}')
            UNION ALL SELECT 2, parse_json('"s"') UNION ALL SELECT 3, NULL
            UNION ALL SELECT 4, parse_json('{{"nested": {{"k": null, "t": true}}}}')""",
        f"""CREATE TABLE {p['rt']} (id BIGINT, v STRING) USING delta
            TBLPROPERTIES (delta.enableRowTracking = true)""",
        f"INSERT INTO {p['rt']} VALUES (1, 'a'), (2, 'b')",
        f"UPDATE {p['rt']} SET v = 'z' WHERE id = 1",
        f"CREATE TABLE {p['clustered']} (id BIGINT, v STRING) USING delta CLUSTER BY (id)",
        f"INSERT INTO {p['clustered']} VALUES (1, 'a'), (2, 'b')",
        f"""CREATE TABLE {p['iceberg']} (id BIGINT, v STRING) USING delta
            TBLPROPERTIES ('delta.columnMapping.mode' = 'name',
                           'delta.enableIcebergCompatV2' = 'true')""",
        f"INSERT INTO {p['iceberg']} VALUES (1, 'a'), (2, 'b')",
        f"""CREATE TABLE {p['generated']} (id BIGINT GENERATED ALWAYS AS IDENTITY, v STRING,
            w STRING GENERATED ALWAYS AS (upper(v))) USING delta""",
        f"INSERT INTO {p['generated']} (v) VALUES ('a'), ('b')",
        f"CREATE TABLE {p['plain']} (id BIGINT, v STRING) USING delta",
        *[f"INSERT INTO {p['plain']} VALUES ({i}, 'v{i}')" for i in range(1, 4)],
        f"DELETE FROM {p['plain']} WHERE id = 2",
    ]
    requests = [("sql", {"sql": s}) for s in statements]
    reads = [("read_versions", {"path": str(paths[name]), "versions": list(range(V2_VERSIONS))})
             for name in ("v2json", "v2parquet")]
    reads += [("sql", {"sql": f"SELECT {_TW_COLUMNS}, part FROM {p['tw']} VERSION AS OF {v}"})
              for v in range(TW_VERSIONS)]
    reads += [("history", {"path": str(paths["ict"])}),
              ("sql", {"sql": f"SELECT id, to_json(v) AS j FROM {p['variant']}"}),
              ("read_versions", {"path": str(paths["rt"]), "versions": [0, 1, 2]}),
              ("changes", {"path": str(paths["v2json"]), "start": 0}),
              ("changes", {"path": str(paths["ict"]), "start": 0})]
    answers = delta_spark.batch(requests + reads, check=True)[len(requests):]
    out = {"paths": paths, "v2json": answers[0], "v2parquet": answers[1],
           "tw": answers[2:2 + TW_VERSIONS]}
    (out["ict_history"], out["variant"], out["rt"], out["v2_changes"],
     out["ict_changes"]) = answers[2 + TW_VERSIONS:]
    return out


@pytest.fixture(scope="module")
def built(delta_spark, tmp_path_factory):
    """The module's tables (read-only for the tests: copy one to change it) and delta-spark's
    reads of them."""
    return _build(delta_spark, tmp_path_factory.mktemp("features"))


def _version(table: pa.Table, version: int) -> pa.Table:
    import pyarrow.compute as pc
    return table.filter(pc.equal(table["_version"], version)).drop_columns(["_version"])


def _commit(path, version) -> list[dict]:
    text = (path / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _assert_refused(spark, path, feature: str, value: str = "'x'") -> None:
    """A write (INSERT of ``(9, value)``) and DML (DELETE) are refused naming ``feature``;
    nothing is written."""
    before = sorted(os.listdir(path / "_delta_log"))
    files = sorted(os.listdir(path))
    p = delta_path(path)
    for statement in (f"INSERT INTO {p} (id, v) SELECT 9, {value}",
                      f"DELETE FROM {p} WHERE id = 1"):
        with pytest.raises(UnsupportedTableFeatureError, match=feature):
            sqlext.sql(spark, statement)
    assert sorted(os.listdir(path / "_delta_log")) == before
    assert sorted(os.listdir(path)) == files


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_v2_checkpoint_tables_read_the_same_at_every_version(spark, built, fmt):
    """delta-spark's V2 checkpoints (UUID-named top-level JSON or parquet files with a
    checkpointMetadata action and sidecar files holding the add/remove actions) rebuild every
    version as delta-spark reads it, from the checkpoint and not from the commits."""
    path, theirs = built["paths"][f"v2{fmt}"], built[f"v2{fmt}"]
    log_dir = path / "_delta_log"
    tops = sorted(n for n in os.listdir(log_dir) if ".checkpoint." in n and n[0] != ".")
    assert tops and all(n.endswith(f".{fmt}") and len(n.split(".")) == 4 for n in tops)
    assert len(os.listdir(log_dir / "_sidecars")) > len(tops)       # several sidecars each
    assert "v2Checkpoint" in json.loads((log_dir / "_last_checkpoint").read_text())
    for version in range(V2_VERSIONS):
        clear_caches()
        snapshot = DeltaLog(str(path)).snapshot(version)
        if version >= 2:
            assert snapshot.checkpoint_version == version - version % 2
        expected = _version(theirs, version)
        assert snapshot.num_records == expected.num_rows
        assert_same_rows(sqlext.read(spark, str(path), versionAsOf=version), expected,
                         sort_by=["id"])
    # the commits before the newest checkpoint are not needed: remove them from a copy
    copy = path.parent / f"v2{fmt}-truncated"
    shutil.copytree(path, copy)
    for version in range(V2_VERSIONS - 2):
        (copy / "_delta_log" / f"{version:020d}.json").unlink()
    clear_caches()
    assert_same_rows(sqlext.read(spark, str(copy)), _version(theirs, V2_VERSIONS - 1))
    assert_same_rows(read_duckdb(copy), _version(theirs, V2_VERSIONS - 1))


def test_sqlext_writes_v2_spec_checkpoints_delta_spark_reads(spark, delta_spark, built, tmp_path):
    """sqlext writes to a V2-checkpoint table (an append, a DELETE): its checkpoint at version 8
    is classic-named and follows the V2 spec (checkpointMetadata); delta-spark, DuckDB and sqlext
    read the table from it once the commits before it are gone."""
    import pyarrow.parquet as pq
    path = tmp_path / "v2"
    shutil.copytree(built["paths"]["v2json"], path)
    p = delta_path(path)
    sqlext.sql(spark, f"INSERT INTO {p} VALUES (500, 'x', '0'), (501, 'y', '2')")
    sqlext.sql(spark, f"DELETE FROM {p} WHERE id = 2 OR id = 501")
    checkpoint = path / "_delta_log" / f"{8:020d}.checkpoint.parquet"
    meta = [m for m in pq.read_table(checkpoint).column("checkpointMetadata").to_pylist() if m]
    assert [m["version"] for m in meta] == [8]
    expected = sqlext.read(spark, str(path))
    for version in range(8):
        (path / "_delta_log" / f"{version:020d}.json").unlink()
    clear_caches()
    assert DeltaLog(str(path)).snapshot().checkpoint_version == 8
    assert_same_rows(sqlext.read(spark, str(path)), expected, sort_by=["id"])
    assert_same_rows(delta_spark.read_versions(str(path), [8]).drop_columns(["_version"]),
                     expected, sort_by=["id"])
    assert_same_rows(read_duckdb(path), expected, sort_by=["id"])


def test_v2_checkpoint_table_change_feed_and_timestamp_travel(spark, built):
    path = built["paths"]["v2json"]
    mine = sqlext.changes(spark, str(path), startingVersion=0)
    assert_same_rows(mine.drop("_commit_timestamp"),
                     built["v2_changes"].drop_columns(["_commit_timestamp"]),
                     sort_by=["_commit_version", "id"])
    when = DeltaLog(str(path)).history()[-4].timestamp       # version 3
    at = dt.datetime.fromtimestamp(when / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    assert_same_rows(sqlext.read(spark, str(path), timestampAsOf=at), _version(built["v2json"], 3))


def test_type_widened_columns_read_as_the_wider_type(spark, built, tmp_path):
    """Files written before ``ALTER TABLE ... CHANGE COLUMN ... TYPE`` hold the narrower type
    (byte, short, int, float, date, decimal(5,2), a partition column int): every version reads
    as delta-spark reads it, old files in the version's (wider) type; filters prune correctly
    over old files' statistics."""
    path = built["paths"]["tw"]
    fields = {f["name"]: f for f in json.loads(
        DeltaLog(str(path)).snapshot().metadata.schema_string)["fields"]}
    assert "delta.typeChanges" in fields["d"]["metadata"]
    for version, theirs in enumerate(built["tw"]):
        mine = sqlext.read(spark, str(path), versionAsOf=version).select(
            *_TW_COLUMNS.split(", "), "part")
        assert [f.dataType.simpleString() for f in mine.schema] == \
            [str(t) for t in _spark_types(theirs)], version
        assert_same_rows(mine, theirs, sort_by=["b"])
    latest = built["tw"][-1]
    assert dict(sqlext.read(spark, str(path)).dtypes)["d"] == "timestamp_ntz"
    for condition, expected in (("i > 2147483646", 2),
                                ("d >= TIMESTAMP_NTZ'2024-01-02 00:00:00'", 2), ("dec < -999", 1),
                                ("part = 5000000000", 1), ("f = 1.5", 1),
                                ("i2 > 1000", 1)):
        got = sqlext.read(spark, str(path), filter=condition).count()
        assert got == expected, condition
    assert latest.num_rows == 3
    _assert_written_tw(spark, path, tmp_path)


def _assert_written_tw(spark, path, tmp_path):
    """sqlext writes type widening tables (tests/deltaspark/test_deltaspark_type_widening.py):
    a DELETE rewrites an old file in the wider types."""
    copy = tmp_path / "tw"
    shutil.copytree(path, copy)
    sqlext.sql(spark, f"DELETE FROM {delta_path(copy)} WHERE b = 1")
    rows = sqlext.read(spark, str(copy)).collect()
    assert sorted(r.b for r in rows) == [-5, 300]
    assert dict(sqlext.read(spark, str(copy)).dtypes)["d"] == "timestamp_ntz"


def _spark_types(table: pa.Table) -> list[str]:
    names = {pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int", pa.int64(): "bigint",
             pa.float32(): "float", pa.float64(): "double", pa.date32(): "date",
             pa.timestamp("us"): "timestamp_ntz"}
    out = []
    for t in table.schema.types:
        out.append(f"decimal({t.precision},{t.scale})" if pa.types.is_decimal(t) else names[t])
    return out


def test_in_commit_timestamps_drive_history_and_timestamp_travel(spark, built, tmp_path):
    """From the version that enabled in-commit timestamps on, a commit's time is its
    ``commitInfo.inCommitTimestamp``, not the file's modification time: with the files' times
    moved far away, history and TIMESTAMP AS OF still agree with delta-spark's history."""
    path = tmp_path / "ict"
    shutil.copytree(built["paths"]["ict"], path)
    history = built["ict_history"].to_pylist()
    theirs = {row["version"]: row["timestamp"] for row in history}
    icts = {v: _commit(path, v)[0]["commitInfo"].get("inCommitTimestamp") for v in theirs}
    assert icts[0] is None and icts[1] is None and all(icts[v] for v in (2, 3, 4))
    assert json.loads(json.dumps(DeltaLog(str(path)).snapshot().configuration))[
        "delta.inCommitTimestampEnablementVersion"] == "2"
    mine = {r.version: r.timestamp for r in DeltaLog(str(path)).history()}
    for v in (2, 3, 4):
        assert mine[v] == icts[v] == int(theirs[v].replace(tzinfo=dt.timezone.utc).timestamp()
                                         * 1000)
    # modification times a day earlier: ICT versions keep their times, older ones follow files
    for v in range(5):
        f = path / "_delta_log" / f"{v:020d}.json"
        os.utime(f, (f.stat().st_mtime - 86400, f.stat().st_mtime - 86400))
    clear_caches()
    moved = {r.version: r.timestamp for r in DeltaLog(str(path)).history()}
    assert all(moved[v] == icts[v] for v in (2, 3, 4))
    assert all(moved[v] == mine[v] - 86400_000 for v in (0, 1))
    for v in (2, 3, 4):
        at = dt.datetime.fromtimestamp(icts[v] / 1000, dt.timezone.utc).strftime(
            "%Y-%m-%d %H:%M:%S.%f")
        assert sorted(r.id for r in sqlext.read(spark, str(path), timestampAsOf=at).collect()) \
            == list(range(1, v))
    # the change feed's _commit_timestamp is the in-commit timestamp too
    def ms(value):
        return int(value.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
    feed = {r["_commit_version"]: ms(r["_commit_timestamp"])
            for r in built["ict_changes"].to_pylist()}
    assert {v: feed[v] for v in (2, 3, 4) if v in feed} == {v: icts[v] for v in (3, 4)}
    mine_feed = {r._commit_version: ms(r._commit_timestamp)
                 for r in sqlext.changes(spark, str(path), startingVersion=2).collect()}
    assert mine_feed == {v: icts[v] for v in (3, 4)}
    shown = sqlext.DeltaTable.forPath(spark, str(path)).history().collect()
    assert {r.version: int(r.timestamp.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
            for r in shown if r.version >= 2} == {v: icts[v] for v in (2, 3, 4)}


def test_variant_columns_read_as_variant(spark, built):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    path = built["paths"]["variant"]
    df = sqlext.read(spark, str(path))
    assert isinstance(df.schema["v"].dataType, T.VariantType)
    assert_same_rows(df.select("id", F.to_json("v").alias("j")), built["variant"])
    got = sqlext.read(spark, str(path), filter="id = 1").select(
        F.variant_get("v", "$.b[1]", "double").alias("x")).collect()
    assert got[0].x == 2.5
    _assert_refused(spark, path, "variantType", value="parse_json('1')")


def test_row_tracking_clustering_iceberg_tables_read_and_refuse_writes(spark, built):
    """Writer features sqlext cannot honour (clustering, Iceberg compatibility): reads are
    right, every write is refused by name, the table intact. (Identity and generated columns
    are read here and written: tests/deltaspark/test_deltaspark_generated_identity.py; row
    tracking is written: tests/deltaspark/test_deltaspark_row_tracking.py.)"""
    paths = built["paths"]
    for version in (0, 1, 2):
        assert_same_rows(sqlext.read(spark, str(paths["rt"]), versionAsOf=version),
                         _version(built["rt"], version))
    snapshot = DeltaLog(str(paths["rt"])).snapshot()
    assert "delta.rowTracking" in snapshot.domains
    assert [tuple(r) for r in sqlext.read(spark, str(paths["clustered"])).orderBy("id").collect()] \
        == [(1, "a"), (2, "b")]
    assert "delta.clustering" in DeltaLog(str(paths["clustered"])).snapshot().domains
    _assert_refused(spark, paths["clustered"], "clustering")
    assert [tuple(r) for r in sqlext.read(spark, str(paths["iceberg"])).orderBy("id").collect()] \
        == [(1, "a"), (2, "b")]
    _assert_refused(spark, paths["iceberg"], "icebergCompatV2")
    assert [tuple(r) for r in sqlext.read(spark, str(paths["generated"])).orderBy("id").collect()] \
        == [(1, "a", "A"), (2, "b", "B")]
    assert DeltaLog(str(paths["generated"])).snapshot().protocol.min_writer_version >= 6


def test_log_compaction_and_crc_files_change_nothing(spark, delta_spark, built, tmp_path):
    """A log compaction file ``1.3.compacted.json`` (written here as the protocol defines it:
    the reconciled actions of commits 1..3) reads the same in delta-spark, which uses it; sqlext
    replays the commits and gets the same rows. A ``.crc`` file that lies changes nothing."""
    path = tmp_path / "plain"
    shutil.copytree(built["paths"]["plain"], path)
    log_dir = path / "_delta_log"
    assert (log_dir / f"{4:020d}.crc").exists()        # delta-spark writes checksums
    adds, removes = {}, {}
    for v in (1, 2, 3):
        for a in _commit(path, v):
            if "add" in a:
                adds[a["add"]["path"]] = a
                removes.pop(a["add"]["path"], None)
    (log_dir / f"{1:020d}.{3:020d}.compacted.json").write_text(
        "\n".join(json.dumps(a) for a in [*adds.values(), *removes.values()]) + "\n")
    crc = json.loads((log_dir / f"{4:020d}.crc").read_text())
    crc.update(numFiles=99, tableSizeBytes=1, numMetadata=1, numProtocol=1)
    (log_dir / f"{4:020d}.crc").write_text(json.dumps(crc))
    clear_caches()
    expected = [(1, "v1"), (3, "v3")]
    assert [tuple(r) for r in sqlext.read(spark, str(path)).orderBy("id").collect()] == expected
    assert [tuple(r) for r in sqlext.read(spark, str(path), versionAsOf=3).orderBy("id")
            .collect()] == [(1, "v1"), (2, "v2"), (3, "v3")]
    assert len(DeltaLog(str(path)).snapshot().files) == 2
    delta_spark.sql("SET spark.databricks.delta.deltaLog.minorCompaction.useForReads = true")
    try:
        theirs = delta_spark.read_versions(str(path), [3, 4])
    finally:
        delta_spark.sql("RESET spark.databricks.delta.deltaLog.minorCompaction.useForReads")
    assert sorted(tuple(r.values()) for r in _version(theirs, 4).to_pylist()) == expected
    assert len(_version(theirs, 3)) == 3
