"""The change feed of tables sqlext writes with every operation: appends, overwrites, replaceWhere
on partitions and on data columns (which writes change files), dynamic partition overwrite, schema
evolution, DELETE (all three cases), UPDATE and MERGE.

The raw feed (``none``) equals delta-rs's ``load_cdf`` row for row; commit timestamps are compared
with the log's (delta-rs times commits by ``commitInfo.timestamp``, sqlext and delta-spark by the
commit file, which differ by a millisecond or so). Net changes are checked against the difference
between the table before and after the range, read by time travel.
"""

from __future__ import annotations

from collections import Counter

import sqlext
from sqlext import DeltaTable
from sqlext.log.actions import AddCDCFile
from sqlext.log.table import DeltaLog
from tests.support.change_feeds import CHANGE_COLUMNS, deltalake_change_rows, feeds

SCHEMA = "id int, p int, s string"


def write(spark, path, rows, schema=SCHEMA, **options) -> int:
    return sqlext.write(spark.createDataFrame(rows, schema), str(path), **options)


def has_change_files(path, version: int) -> bool:
    return any(isinstance(a, AddCDCFile) for a in DeltaLog(str(path)).read_commit(version))


def assert_matches_deltalake(spark, path, versions: range) -> None:
    """The whole range and each version alone equal delta-rs's feed (one Spark job)."""
    cases = {"all": dict(startingVersion=versions.start, endingVersion=versions.stop - 1)}
    cases.update({f"v{v}": dict(startingVersion=v, endingVersion=v) for v in versions})
    got = feeds(spark, path, cases)
    assert got["all"] == deltalake_change_rows(path, versions.start, versions.stop - 1)
    for v in versions:
        assert got[f"v{v}"] == deltalake_change_rows(path, v, v), f"version {v}"
    stamps = sqlext.changes(spark, str(path), versions.start, versions.stop - 1).select(
        "_commit_version", "_commit_timestamp").distinct().collect()
    times = DeltaLog(str(path)).commit_timestamps()
    assert {(r[0], round(r[1].timestamp() * 1000)) for r in stamps} == {
        (r[0], times[r[0]]) for r in stamps}


def net_by_key(before: list, after: list) -> Counter:
    """Spark's net changes per key (first column) between two states, for keys whose row
    changed: (row..., change type) with computeUpdates."""
    old, new = {r[0]: tuple(r) for r in before}, {r[0]: tuple(r) for r in after}
    out = Counter()
    for k in old.keys() | new.keys():
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if a is not None and b is not None:
            out[a + ("update_preimage",)] += 1
            out[b + ("update_postimage",)] += 1
        elif a is not None:
            out[a + ("delete",)] += 1
        else:
            out[b + ("insert",)] += 1
    return out


def state(spark, path, version: int) -> list[tuple]:
    return [tuple(r) for r in sqlext.read(spark, str(path), versionAsOf=version).collect()]


def without_version(rows: Counter) -> Counter:
    return Counter({k[:-1]: n for k, n in rows.items()})


def test_writes(spark, tmp_path):
    path = tmp_path / "t"
    base = [(i, i % 3, f"s{i}") for i in range(9)]
    write(spark, path, base, partitionBy=["p"])                                    # v0
    write(spark, path, [(9, 0, "s9"), (10, 1, "s10")])                             # v1 append
    write(spark, path, [(11, 1, "new")], mode="overwrite", replaceWhere="p = 1")   # v2
    write(spark, path, [(0, 0, "zero"), (3, 0, "s3")], mode="overwrite",           # v3
          replaceWhere="id IN (0, 3)")
    write(spark, path, [(20, 2, "two")], mode="overwrite",                         # v4 dynamic
          partitionOverwriteMode="dynamic")
    write(spark, path, [(30, 0, "a"), (31, 1, "b")], mode="overwrite")             # v5
    assert has_change_files(path, 3) and not has_change_files(path, 2)
    assert_matches_deltalake(spark, path, range(0, 6))
    got = feeds(spark, path, {
        "v3_drop": dict(startingVersion=3, endingVersion=3, deduplicationMode="dropCarryovers"),
        "net": dict(startingVersion=1, deduplicationMode="netChanges")})
    # replaceWhere on a data column: the replaced rows and the new ones; (3, 0, 's3') was
    # written again unchanged, a carry-over
    assert got["v3_drop"] == Counter({(0, 0, "s0", "delete", 3): 1,
                                      (0, 0, "zero", "insert", 3): 1})
    before, after = Counter(state(spark, path, 0)), Counter(state(spark, path, 5))
    expected = Counter({r + ("delete",): n for r, n in (before - after).items()})
    expected.update({r + ("insert",): n for r, n in (after - before).items()})
    assert without_version(got["net"]) == expected


def test_replace_where_that_deletes_nothing(spark, tmp_path):
    """replaceWhere on a data column whose candidate files hold no row it deletes: the version's
    change rows are the new rows' inserts, nothing else (written with the data, one job)."""
    path = tmp_path / "t"
    write(spark, path, [(i, 0, f"s{i}") for i in range(6)])                        # v0
    write(spark, path, [(7, 1, "x")], mode="overwrite", replaceWhere="length(s) = 1")  # v1
    assert has_change_files(path, 1)
    got = feeds(spark, path, {"v1": dict(startingVersion=1, endingVersion=1)})
    assert got["v1"] == Counter({(7, 1, "x", "insert", 1): 1})
    assert_matches_deltalake(spark, path, range(0, 2))
    assert sorted(r.id for r in sqlext.read(spark, str(path)).collect()) == [0, 1, 2, 3, 4, 5, 7]


def test_replace_where_inserts_equal_the_rows_written(spark, tmp_path):
    """The insert change rows of a replaceWhere come from the same evaluation as the data: a
    value computed per query (current_timestamp(), fixed once per Spark job) is the same in the
    table and in the feed."""
    path = tmp_path / "t"
    sqlext.write(spark.range(0, 6).selectExpr("id", "current_timestamp() AS ts"), str(path))
    sqlext.write(spark.range(0, 2).selectExpr("id", "current_timestamp() AS ts"), str(path),
                 mode="overwrite", replaceWhere="id < 2")                             # v1
    table = {r.id: r.ts for r in sqlext.read(spark, str(path)).collect() if r.id < 2}
    inserted = {r.id: r.ts for r in sqlext.changes(spark, str(path), startingVersion=1)
                .collect() if r._change_type == "insert"}
    assert inserted == table


def test_schema_evolution_inside_the_range(spark, tmp_path):
    path = tmp_path / "t"
    write(spark, path, [(1, 0, "a")])                                              # v0
    write(spark, path, [(2, 0, "b", 2.5)], schema=SCHEMA + ", x double",          # v1
          mergeSchema=True)
    got = feeds(spark, path, {"all": dict(startingVersion=0)})
    assert got["all"] == Counter({(1, 0, "a", None, "insert", 0): 1,
                                  (2, 0, "b", 2.5, "insert", 1): 1})
    assert got["all"] == deltalake_change_rows(path, 0)


def test_delete_update_merge(spark, tmp_path):
    path = tmp_path / "t"
    write(spark, path, [(i, i % 3, f"s{i}") for i in range(12)], partitionBy=["p"])   # v0
    table = DeltaTable.forPath(spark, str(path))
    table.delete("p = 2")                                          # v1: partition only
    table.delete("id % 4 = 0")                                     # v2: data predicate
    table.update("id < 6", {"s": "upper(s)"})                      # v3
    source = spark.createDataFrame([(1, 1, "m1"), (5, 2, "m5"), (7, 1, "x"), (40, 0, "n40")],
                                   "id int, p int, s string")
    (table.alias("t").merge(source.alias("u"), "t.id = u.id")      # v4
     .whenMatchedDelete("u.s = 'x'")
     .whenMatchedUpdate(set={"s": "u.s"})
     .whenNotMatchedInsertAll()
     .execute())
    assert [has_change_files(path, v) for v in range(1, 5)] == [False, True, True, True]
    table.delete()                                                 # v5: every file
    assert_matches_deltalake(spark, path, range(0, 6))
    got = feeds(spark, path, {
        "net_updates": dict(startingVersion=1, endingVersion=4, deduplicationMode="netChanges",
                            identifierColumns=["id"], computeUpdates=True),
        "net_all": dict(startingVersion=1, deduplicationMode="netChanges",
                        identifierColumns=["id"])})
    v0, v4 = state(spark, path, 0), state(spark, path, 4)
    assert without_version(got["net_updates"]) == net_by_key(v0, v4)
    # the last version deleted everything: each row of version 0 leaves as it was
    assert without_version(got["net_all"]) == Counter(r + ("delete",) for r in v0)


def test_change_columns_follow_the_table_columns(spark, tmp_path):
    path = tmp_path / "t"
    write(spark, path, [(1, 0, "a")])
    df = sqlext.changes(spark, str(path), 0)
    assert df.columns == ["id", "p", "s"] + CHANGE_COLUMNS
    assert [f.dataType.simpleString() for f in df.schema.fields[-3:]] == [
        "string", "bigint", "timestamp"]
