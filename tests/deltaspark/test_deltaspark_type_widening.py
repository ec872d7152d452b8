"""Type widening against delta-spark 4.4: tables delta-spark widened (every widening it applies)
read by sqlext as delta-spark reads them, at every version, and after DML; tables sqlext widened
(ALTER COLUMN TYPE, nested fields, schema evolution) read by delta-spark; the changes both
refuse, with the same error conditions, the table left as it was."""

from __future__ import annotations

import json
import os
import shutil

import pytest

import sqlext
from sqlext.errors import SqlextError
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows
from tests.support.deltaspark import DeltaSparkError, delta_path
from tests.support.kernel_tables import clear_caches

# (column, type before, type after, a value of the old type, a value only the new type holds)
WIDENINGS = [
    ("b2s", "BYTE", "SHORT", "-5", "3000"),
    ("i2l", "INT", "BIGINT", "2147483647", "5000000000"),
    ("b2d", "BYTE", "DOUBLE", "-8", "0.5"),
    ("i2d", "INT", "DOUBLE", "-2147483648", "1e300"),
    ("f2d", "FLOAT", "DOUBLE", "1.1", "1e300"),
    ("b2dec", "BYTE", "DECIMAL(10,0)", "9", "9999999999"),
    ("l2dec", "BIGINT", "DECIMAL(22,2)", "-9223372036854775807", "12345678901234567890.12"),
    ("dec", "DECIMAL(5,2)", "DECIMAL(12,4)", "-999.99", "12345678.1234"),
    ("d2t", "DATE", "TIMESTAMP_NTZ", "DATE'2024-02-29'", "TIMESTAMP_NTZ'2024-03-01 04:05:06'"),
]
_NESTED = [("s.x", "BIGINT"), ("a.element", "INT"), ("m.value", "DOUBLE")]


def _literal(column_type: str, value: str) -> str:
    return f"CAST({value} AS {column_type})"


def _row(i: int, which: int, p: str) -> str:
    values = [_literal(old if which == 0 else new, v[which]) for _, old, new, *v in WIDENINGS]
    nested = ("named_struct('x', 7), array(CAST(1 AS SHORT)), map(1, CAST(1.5 AS FLOAT))"
              if which == 0 else "named_struct('x', 7000000000), array(100000), "
              "map(1, 1e300)")
    return f"SELECT {i} AS id, {', '.join(values)}, {nested}, {p} AS p"


def _statements(path) -> tuple[list[str], int]:
    """delta-spark's statements building the widened table, and the version of the last ALTER."""
    t = delta_path(path)
    columns = ", ".join(f"{c} {old}" for c, old, *_ in WIDENINGS)
    alters = [f"ALTER TABLE {t} ALTER COLUMN {c} TYPE {new}" for c, _, new, *_ in WIDENINGS]
    alters += [f"ALTER TABLE {t} ALTER COLUMN {c} TYPE {new}" for c, new in _NESTED]
    alters.append(f"ALTER TABLE {t} CHANGE COLUMN p TYPE BIGINT")
    statements = [
        f"""CREATE TABLE {t} (id INT, {columns}, s STRUCT<x: INT>, a ARRAY<SHORT>,
            m MAP<INT, FLOAT>, p INT) USING delta PARTITIONED BY (p)
            TBLPROPERTIES (delta.enableTypeWidening = true, delta.enableChangeDataFeed = true,
                           'delta.feature.timestampNtz' = 'supported')""",
        f"INSERT INTO {t} {_row(1, 0, '1')} UNION ALL {_row(2, 0, '2')}",
        *alters,
    ]
    last_alter = len(statements) - 1
    statements += [
        f"INSERT INTO {t} {_row(3, 1, '5000000000')}",
        f"DELETE FROM {t} WHERE id = 2",
        f"UPDATE {t} SET i2l = i2l + 1, dec = dec * 2 WHERE id = 1",
    ]
    return statements, last_alter


@pytest.fixture(scope="module")
def widened(delta_spark, tmp_path_factory):
    """A table delta-spark widened in every way it can, and delta-spark's reads of it."""
    path = tmp_path_factory.mktemp("tw") / "every"
    statements, last_alter = _statements(path)
    delta_spark.batch([("sql", {"sql": s}) for s in statements], check=True)
    # before the ALTERs, after them (old files only), old and new files, after DELETE / UPDATE
    versions = [1, last_alter, last_alter + 1, len(statements) - 1]
    answers = delta_spark.batch(
        [("read_versions", {"path": str(path), "versions": [v]}) for v in versions]
        + [("changes", {"path": str(path), "start": last_alter + 1}),
           ("changes", {"path": str(path), "start": 0})], check=False)
    return {"path": path, "reads": dict(zip(versions, answers)), "last_alter": last_alter,
            "changes_after": answers[-2], "changes_across": answers[-1]}


def test_every_widening_delta_spark_applies_reads_the_same(spark, widened):
    """Every version (old files in their narrower physical types, new ones wider; partition
    values widened too) reads as delta-spark reads it, DELETE and UPDATE after the widening
    included; filters over old files' statistics prune nothing they should keep."""
    path, reads = str(widened["path"]), widened["reads"]
    schema = json.loads(DeltaLog(path).snapshot().metadata.schema_string)
    changes = {f["name"]: f["metadata"].get("delta.typeChanges") for f in schema["fields"]}
    assert changes["b2s"] == [{"toType": "short", "fromType": "byte"}]
    assert changes["m"] == [{"toType": "double", "fromType": "float", "fieldPath": "value"}]
    for version, theirs in reads.items():
        mine = sqlext.read(spark, path, versionAsOf=version)
        assert_same_rows(mine, theirs.drop_columns(["_version"]), sort_by=["id"])
        narrow = version == 1
        assert dict(mine.dtypes)["d2t"] == ("date" if narrow else "timestamp_ntz"), version
        assert dict(mine.dtypes)["l2dec"] == ("bigint" if narrow else "decimal(22,2)"), version
    latest = sqlext.read(spark, path)
    assert dict(latest.dtypes)["d2t"] == "timestamp_ntz"
    assert dict(latest.dtypes)["l2dec"] == "decimal(22,2)"
    for condition, ids in (("i2l > 2147483647", {1, 3}), ("b2dec > 9", {3}),
                           ("p = 5000000000", {3}),
                           ("d2t >= TIMESTAMP_NTZ'2024-02-29 00:00:00'", {1, 3}),
                           ("dec < 0", {1}), ("f2d = CAST(CAST(1.1 AS FLOAT) AS DOUBLE)", {1})):
        got = {r.id for r in sqlext.read(spark, path, filter=condition).collect()}
        assert got == ids, condition


def test_change_feed_across_the_widening(spark, widened):
    """The change feed from the first version after the ALTERs reads as delta-spark's; over the
    whole history too (its old change rows in the current types) where delta-spark reads it."""
    path = str(widened["path"])
    drop = ["_commit_timestamp"]
    after = widened["changes_after"]
    assert not isinstance(after, DeltaSparkError), after
    mine = sqlext.changes(spark, path, startingVersion=widened["last_alter"] + 1).drop(*drop)
    assert_same_rows(mine, after.drop_columns(drop), sort_by=["_commit_version", "id"])
    across = widened["changes_across"]
    if isinstance(across, DeltaSparkError):
        with pytest.raises(SqlextError):
            sqlext.changes(spark, path, startingVersion=0).collect()
    else:
        mine = sqlext.changes(spark, path, startingVersion=0).drop(*drop)
        assert_same_rows(mine, across.drop_columns(drop), sort_by=["_commit_version", "id"])


def test_merge_after_the_widening_matches_delta_spark(spark, delta_spark, widened, tmp_path):
    """MERGE into the widened table (old and new files) gives delta-spark's rows."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(widened["path"], ours)
    shutil.copytree(widened["path"], theirs)
    merge = ("MERGE INTO {t} AS t USING (SELECT 1 AS id, 9000000000 AS i2l UNION ALL "
             "SELECT 7, 8) AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.i2l = s.i2l "
             "WHEN NOT MATCHED THEN INSERT (id, i2l, p) VALUES (s.id, s.i2l, 1)")
    delta_spark.sql(merge.format(t=delta_path(theirs)))
    sqlext.sql(spark, merge.format(t=delta_path(ours)))
    clear_caches()
    expected = delta_spark.read_versions(
        str(theirs), [DeltaLog(str(theirs)).snapshot().version]).drop_columns(["_version"])
    assert_same_rows(sqlext.read(spark, str(ours)), expected, sort_by=["id"])


def _sqlext_widening_statements(t: str) -> list[str]:
    return [
        f"""CREATE TABLE {t} (id INT, b BYTE, i INT, f FLOAT, dec DECIMAL(5,2),
            s STRUCT<x: SHORT>, a ARRAY<INT>) USING delta
            TBLPROPERTIES (delta.enableTypeWidening = true)""",
        f"INSERT INTO {t} VALUES (1, 1, 2, 1.5, 1.25, named_struct('x', 3), array(4))",
        f"ALTER TABLE {t} ALTER COLUMN b TYPE SHORT",
        f"ALTER TABLE {t} CHANGE COLUMN b b INT",
        f"ALTER TABLE {t} ALTER COLUMN i TYPE DECIMAL(12,2)",
        f"ALTER TABLE {t} ALTER COLUMN f TYPE DOUBLE",
        f"ALTER TABLE {t} ALTER COLUMN dec TYPE DECIMAL(10,3)",
        f"ALTER TABLE {t} ALTER COLUMN s.x TYPE BIGINT",
        f"ALTER TABLE {t} ALTER COLUMN a.element TYPE BIGINT",
        f"""INSERT INTO {t} VALUES (2, 100000, 1234567890.12, 1e300, 1234567.125,
            named_struct('x', 5000000000), array(5000000000))""",
    ]


def test_sqlext_widening_is_delta_sparks(spark, delta_spark, tmp_path):
    """The same ALTERs run by sqlext and by delta-spark give the same protocol, schema (with
    its ``delta.typeChanges``) and rows; delta-spark reads sqlext's table at every version.
    deltalake (delta-rs 1.x) does not implement the typeWidening reader feature and says so."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    statements = _sqlext_widening_statements
    delta_spark.batch([("sql", {"sql": s}) for s in statements(delta_path(theirs))], check=True)
    for s in statements(delta_path(ours)):
        sqlext.sql(spark, s)
    clear_caches()
    mine, other = DeltaLog(str(ours)).snapshot(), DeltaLog(str(theirs)).snapshot()
    assert json.loads(mine.metadata.schema_string) == json.loads(other.metadata.schema_string)
    assert set(mine.protocol.reader_features) == set(other.protocol.reader_features)
    assert set(other.protocol.writer_features) <= set(mine.protocol.writer_features)
    versions = list(range(mine.version + 1))
    their_reads = delta_spark.read_versions(str(ours), versions)
    for version in versions:
        theirs_v = their_reads.filter(their_reads.column("_version").to_numpy() == version)
        assert_same_rows(sqlext.read(spark, str(ours), versionAsOf=version),
                         theirs_v.drop_columns(["_version"]), sort_by=["id"])
    import deltalake
    with pytest.raises(Exception, match="typeWidening"):
        deltalake.DeltaTable(str(ours)).to_pyarrow_table()


def test_schema_evolution_widens_as_delta_spark_does(spark, delta_spark, tmp_path):
    """An append with mergeSchema of wider data widens the columns (a struct field too), as
    delta-spark's; without mergeSchema both refuse (DELTA_METADATA_MISMATCH), the table
    unchanged. MERGE with schema evolution widens a column its ``*`` clauses set."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create = ("CREATE TABLE {t} (id INT, c INT, d DECIMAL(5,2), s STRUCT<x: SHORT>) USING delta "
              "TBLPROPERTIES (delta.enableTypeWidening = true)")
    data = ("SELECT 2 AS id, 5000000000L AS c, CAST(1234.5 AS DECIMAL(10,2)) AS d, "
            "named_struct('x', 70000) AS s")
    source = "SELECT 2 AS id, 7L AS c, CAST(12345678.25 AS DECIMAL(12,2)) AS d"
    code = f"""
spark.sql({create.format(t=delta_path(theirs))!r})
spark.sql("INSERT INTO {delta_path(theirs)} VALUES (1, 1, 1.5, named_struct('x', 3))")
try:
    spark.sql({data!r}).write.format("delta").mode("append").save({str(theirs)!r})
    refused = None
except Exception as e:
    refused = e.getCondition()
spark.sql({data!r}).write.format("delta").mode("append").option("mergeSchema", "true").save(
    {str(theirs)!r})
(DeltaTable.forPath(spark, {str(theirs)!r}).alias("t").merge(spark.sql({source!r}).alias("s"),
    "t.id = s.id").whenMatchedUpdateAll().whenNotMatchedInsertAll().withSchemaEvolution()
    .execute())
result = refused
"""
    refused = delta_spark.exec(code)
    sqlext.sql(spark, create.format(t=delta_path(ours)))
    sqlext.sql(spark, f"INSERT INTO {delta_path(ours)} VALUES (1, 1, 1.5, named_struct('x', 3))")
    before = sorted(os.listdir(ours / "_delta_log"))
    with pytest.raises(SqlextError) as info:
        sqlext.write(spark.sql(data), str(ours))
    assert info.value.error_class == refused == "DELTA_METADATA_MISMATCH"
    assert sorted(os.listdir(ours / "_delta_log")) == before
    sqlext.write(spark.sql(data), str(ours), mergeSchema=True)
    t = sqlext.DeltaTable.forPath(spark, str(ours))
    (t.alias("t").merge(spark.sql(source).alias("s"), "t.id = s.id").whenMatchedUpdateAll()
     .whenNotMatchedInsertAll().withSchemaEvolution().execute())
    clear_caches()

    def types(path):
        schema = json.loads(DeltaLog(str(path)).snapshot().metadata.schema_string)
        return {f["name"]: (f["type"], f["metadata"].get("delta.typeChanges"))
                for f in schema["fields"]}

    assert types(ours) == types(theirs)
    assert types(ours)["d"][0] == "decimal(12,2)"
    assert_same_rows(sqlext.read(spark, str(ours)),
                     delta_spark.read_versions(str(ours), [3]).drop_columns(["_version"]),
                     sort_by=["id"])
    assert_same_rows(sqlext.read(spark, str(ours)),
                     delta_spark.read_versions(str(theirs), [3]).drop_columns(["_version"]),
                     sort_by=["id"])


# (type, new type, property on): refused by both, with delta-spark's condition
REFUSED = [("BIGINT", "DOUBLE", True), ("BYTE", "DECIMAL(4,1)", True),
           ("BIGINT", "DECIMAL(19,0)", True), ("DECIMAL(5,2)", "DECIMAL(5,3)", True),
           ("DECIMAL(5,2)", "DECIMAL(6,4)", True), ("BIGINT", "INT", True),
           ("DOUBLE", "FLOAT", True), ("DATE", "TIMESTAMP", True), ("INT", "STRING", True),
           ("INT", "BIGINT", False)]


def test_refused_changes_carry_delta_sparks_conditions(spark, delta_spark, tmp_path):
    requests, paths = [], []
    for i, (old, new, on) in enumerate(REFUSED):
        for side in ("ours", "theirs"):
            t = delta_path(tmp_path / f"{side}{i}")
            create = (f"CREATE TABLE {t} (c {old}) USING delta TBLPROPERTIES "
                      f"(delta.enableTypeWidening = {str(on).lower()})")
            if side == "theirs":
                requests += [("sql", {"sql": create}),
                             ("sql", {"sql": f"ALTER TABLE {t} ALTER COLUMN c TYPE {new}"})]
            else:
                sqlext.sql(spark, create)
        paths.append(tmp_path / f"ours{i}")
    answers = delta_spark.batch(requests)
    for i, (old, new, _) in enumerate(REFUSED):
        theirs = answers[2 * i + 1]
        assert isinstance(theirs, DeltaSparkError), (old, new)
        before = sorted(os.listdir(paths[i] / "_delta_log"))
        with pytest.raises(SqlextError) as info:
            sqlext.sql(spark, f"ALTER TABLE {delta_path(paths[i])} ALTER COLUMN c TYPE {new}")
        assert info.value.error_class == theirs.condition, (old, new, str(info.value))
        assert sorted(os.listdir(paths[i] / "_delta_log")) == before


def test_an_unsupported_recorded_change_is_refused_on_read(spark, delta_spark, tmp_path):
    """A schema recording a change Delta does not define (tinyint to decimal(4,1), which
    Spark's parquet reader cannot read from old files) is refused by both engines with
    DELTA_UNSUPPORTED_TYPE_CHANGE_IN_SCHEMA, not with a parquet type mismatch."""
    path = tmp_path / "bad"
    sqlext.sql(spark, f"CREATE TABLE {delta_path(path)} (c BYTE) USING delta "
                      "TBLPROPERTIES (delta.enableTypeWidening = true)")
    sqlext.sql(spark, f"INSERT INTO {delta_path(path)} VALUES (5)")
    snapshot = DeltaLog(str(path)).snapshot()
    schema = json.loads(snapshot.metadata.schema_string)
    schema["fields"][0]["type"] = "decimal(4,1)"
    schema["fields"][0]["metadata"] = {"delta.typeChanges": [{"toType": "decimal(4,1)",
                                                              "fromType": "byte"}]}
    metadata = json.loads(json.dumps({"metaData": snapshot.metadata.to_dict()}))
    metadata["metaData"]["schemaString"] = json.dumps(schema)
    commit = {"commitInfo": {"timestamp": 1, "operation": "CHANGE COLUMN"}}
    (path / "_delta_log" / f"{snapshot.version + 1:020d}.json").write_text(
        json.dumps(commit) + "\n" + json.dumps(metadata) + "\n")
    clear_caches()
    with pytest.raises(DeltaSparkError) as theirs:
        delta_spark.read_versions(str(path), [snapshot.version + 1])
    with pytest.raises(SqlextError) as mine:
        sqlext.read(spark, str(path)).collect()
    # delta-spark raises it as a DeltaIllegalStateException, the condition in its message
    assert mine.value.error_class == "DELTA_UNSUPPORTED_TYPE_CHANGE_IN_SCHEMA"
    assert "DELTA_UNSUPPORTED_TYPE_CHANGE_IN_SCHEMA" in theirs.value.message
    assert sqlext.read(spark, str(path), versionAsOf=snapshot.version).count() == 1
