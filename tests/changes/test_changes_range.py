"""Change feed ranges: versions, timestamps, capping, and every error a range can raise.

Histories are hand-built (:class:`tests.support.change_feeds.HandTable`): no Spark job writes them, and
the checks of a range happen before any Spark job runs, so most tests here cost no Spark job.
"""

from __future__ import annotations

import datetime as dt
import os

import pytest

import sqlext
from sqlext.errors import (ChangeDataFeedError, ChangeDataFilesMissingError,
                           DeltaFileNotFoundError, SqlextError)
from tests.support.change_feeds import HandTable, deltalake_change_rows, expect, feeds
from tests.support.spark import jobs_run, spark_conf

COLUMNS = [("id", "integer"), ("v", "string")]
T0 = 1_700_000_000_000          # ms; commit times of the timed table: T0 + version * 10 s


@pytest.fixture
def hand(tmp_path):
    return HandTable(tmp_path / "hand", COLUMNS)


@pytest.fixture
def timed(tmp_path):
    """v0 create, v1..v3 appends of (v, 'v<v>'), committed at T0 + v * 10 s."""
    t = HandTable(tmp_path / "timed", COLUMNS)
    for v in (1, 2, 3):
        t.append([(v, f"v{v}")])
    for v in range(4):
        t.set_commit_time(v, T0 + v * 10_000)
    return t


def at(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)


def test_version_bounds_are_inclusive_and_the_end_is_capped(spark, timed):
    got = feeds(spark, timed.path, {"1..2": dict(startingVersion=1, endingVersion=2),
                                    "2..": dict(startingVersion=2),
                                    "3..99": dict(startingVersion=3, endingVersion=99),
                                    "2..2": dict(startingVersion=2, endingVersion=2)})
    assert got["1..2"] == expect((1, "v1", "insert", 1), (2, "v2", "insert", 2))
    assert got["2.."] == expect((2, "v2", "insert", 2), (3, "v3", "insert", 3))
    assert got["3..99"] == expect((3, "v3", "insert", 3))
    assert got["2..2"] == expect((2, "v2", "insert", 2))


def test_timestamps_resolve_to_commits(spark, timed):
    got = feeds(spark, timed.path, {
        # a start between commits: the next commit; an end between commits: the previous one
        "between": dict(startingTimestamp=at(T0 + 15_000), endingTimestamp=at(T0 + 25_000)),
        # exactly on commits: both included
        "exact": dict(startingTimestamp=at(T0 + 10_000), endingTimestamp=at(T0 + 20_000)),
        # text in the session time zone (UTC in tests), and no end
        "text": dict(startingTimestamp=at(T0 + 25_000).strftime("%Y-%m-%d %H:%M:%S.%f")),
        # an end after the latest commit is capped
        "late_end": dict(startingVersion=3, endingTimestamp=at(T0 + 10**9)),
        # two timestamps between the same two commits name no commit: empty, as in delta-spark
        "no_commit": dict(startingTimestamp=at(T0 + 11_000), endingTimestamp=at(T0 + 12_000))})
    assert got["between"] == expect((2, "v2", "insert", 2))
    assert got["exact"] == expect((1, "v1", "insert", 1), (2, "v2", "insert", 2))
    assert got["text"] == expect((3, "v3", "insert", 3))
    assert got["late_end"] == expect((3, "v3", "insert", 3))
    assert got["no_commit"] == expect()


def test_commit_timestamps_are_the_logs(spark, timed):
    rows = sqlext.changes(spark, str(timed.path), 1).select(
        "_commit_version", "_commit_timestamp").collect()
    # Spark returns naive local datetimes: .timestamp() reads them back as the same instant
    assert {(r[0], round(r[1].timestamp() * 1000)) for r in rows} == {
        (v, T0 + v * 10_000) for v in (1, 2, 3)}


@pytest.mark.parametrize("options, message", [
    ({}, r"needs a start: give startingVersion"),
    ({"endingVersion": 2}, r"needs a start"),
    ({"startingVersion": 4}, r"startingVersion 4 is after the latest version 3"),
    ({"startingVersion": 3, "endingVersion": 2}, r"ends at version 2, before its start "
                                                 r"version 3"),
    ({"startingVersion": -1}, r"startingVersion must be a version number"),
    ({"startingVersion": "one"}, r"startingVersion must be a version number"),
    ({"startingVersion": 1, "startingTimestamp": at(T0)}, r"not both"),
    ({"startingVersion": 1, "endingVersion": 2, "endingTimestamp": at(T0)}, r"not both"),
    ({"startingTimestamp": at(T0 + 31_000)}, r"startingTimestamp .* is after the latest "
                                             r"commit \(version 3"),
    ({"startingTimestamp": at(T0 + 20_000), "endingTimestamp": at(T0 + 10_000)},
     r"endingTimestamp .* is before startingTimestamp"),
    ({"startingVersion": 0, "endingTimestamp": at(T0 - 1)}, r"endingTimestamp .* is before "
                                                            r"the earliest available commit"),
    ({"startingVersion": 1, "deduplicationMode": "latest"}, r"deduplicationMode must be one "
                                                            r"of none, dropCarryovers"),
    ({"startingVersion": 1, "computeUpdates": True}, r"computeUpdates needs "
                                                     r"identifierColumns"),
    ({"startingVersion": 1, "identifierColumns": ["nope"]}, r"unknown: \['nope'\]"),
])
def test_range_errors(spark, timed, options, message):
    with pytest.raises(ChangeDataFeedError, match=message) as err:
        sqlext.changes(spark, str(timed.path), **options)
    assert str(timed.path) in str(err.value)          # the message names the table


def test_a_range_before_the_log_retention_is_refused(spark, hand):
    for i in range(11):                      # v1..v11; the kernel checkpoints version 10
        hand.append([(i, "x")])
    for v in range(5):
        os.remove(hand.commit_file(v))
    with pytest.raises(ChangeDataFeedError, match=r"version 2 is no longer in the log .* start "
                                                  r"at version 5 or later"):
        sqlext.changes(spark, str(hand.path), 2)
    assert feeds(spark, hand.path, {"ok": dict(startingVersion=11)})["ok"] == expect(
        (10, "x", "insert", 11))


def test_the_feed_must_be_enabled_for_the_whole_range(spark, tmp_path):
    t = HandTable(tmp_path / "t", COLUMNS, cdf=False)              # v0
    t.append([(1, "a")])                                            # v1: not recorded
    t.set_properties(**{"delta.enableChangeDataFeed": "true"})      # v2
    t.append([(2, "b")])                                            # v3
    t.set_properties(**{"delta.enableChangeDataFeed": "false"})     # v4
    t.append([(3, "c")])                                            # v5
    for start, end, version in ((0, 3, 0), (1, 3, 1), (2, 5, 4), (5, 5, 5)):
        with pytest.raises(ChangeDataFeedError, match=rf"not enabled at version {version}, so "
                                                      rf"the changes of versions {start}\.\.{end}"):
            sqlext.changes(spark, str(t.path), start, end)
    got = feeds(spark, t.path, {"2..3": dict(startingVersion=2, endingVersion=3)})
    assert got["2..3"] == expect((2, "b", "insert", 3)) == deltalake_change_rows(t.path, 2, 3)


def test_files_removed_by_vacuum_are_an_error_never_fewer_rows(spark, hand):
    hand.append([(1, "a")])                  # v1: file A
    hand.overwrite([(2, "b")])               # v2: removes A (a delete needs A's rows)
    hand.update(2, v="B")                    # v3: change data file
    first = next(p for p in hand.path.glob("part-*.parquet"))
    data_files = sorted(hand.path.glob("part-*.parquet"), key=os.path.getmtime)
    os.remove(data_files[0])                 # what VACUUM does to A
    with pytest.raises(ChangeDataFilesMissingError, match=r"version\(s\) 1, 2 cannot be read.* "
                                                          r"starting after version 2"):
        sqlext.changes(spark, str(hand.path), 1)
    assert first is not None
    got = feeds(spark, hand.path, {"3..": dict(startingVersion=3)})
    assert got["3.."] == expect((2, "b", "update_preimage", 3), (2, "B", "update_postimage", 3))
    for cdc in (hand.path / "_change_data").glob("*.parquet"):
        os.remove(cdc)
    with pytest.raises(DeltaFileNotFoundError, match=r"change data file _change_data/.* of "
                                                     r"version 3"):
        sqlext.changes(spark, str(hand.path), 3)


def test_columns_added_inside_the_range_read_null_for_older_versions(spark, hand):
    hand.append([(1, "a")])                                                          # v1
    hand.replace_schema(COLUMNS + [("w", "long")], [(1, "a", None), (2, "b", 20)])  # v2
    got = feeds(spark, hand.path, {"1..": dict(startingVersion=1)})
    assert got["1.."] == expect((1, "a", None, "insert", 1), (1, "a", None, "delete", 2),
                                (1, "a", None, "insert", 2), (2, "b", 20, "insert", 2))


def test_dropped_or_retyped_columns_inside_the_range_are_refused(spark, hand):
    hand.append([(1, "a")])                                                  # v1
    hand.replace_schema([("id", "integer")], [(1,)])                         # v2: drops v
    hand.replace_schema([("id", "long")], [(1,)])                            # v3: retypes id
    with pytest.raises(ChangeDataFeedError, match=r"column v was dropped at version 2, inside "
                                                  r"the change feed range 1\.\.3.*two parts: "
                                                  r"1\.\.1 and 2\.\.3"):
        sqlext.changes(spark, str(hand.path), 1)
    with pytest.raises(ChangeDataFeedError, match=r"column id changed type from integer to "
                                                  r"long at version 3"):
        sqlext.changes(spark, str(hand.path), 2)
    got = feeds(spark, hand.path, {"3": dict(startingVersion=3)})
    assert got["3"] == expect((1, "delete", 3), (1, "insert", 3))


def test_versions_without_data_changes_yield_nothing(spark, hand):
    hand.append([(1, "a"), (2, "b")])                                        # v1
    hand.overwrite(hand.rows, data_change=False, operation="OPTIMIZE")       # v2: compaction
    hand.overwrite(hand.rows, operation="MERGE", metrics={                   # v3: no-op MERGE
        "numTargetRowsInserted": 0, "numTargetRowsUpdated": 0, "numTargetRowsDeleted": 0})
    hand.set_properties(comment="metadata only")                             # v4
    assert feeds(spark, hand.path, {"2..": dict(startingVersion=2)})["2.."] == expect()
    assert deltalake_change_rows(hand.path, 2, 2) == expect()


def test_a_partition_filter_prunes_files(spark, tmp_path):
    t = HandTable(tmp_path / "t", COLUMNS + [("p", "integer")], partition_by=["p"])
    t.append([(1, "a", 1), (2, "b", 2)])                                     # v1
    t.rewrite([(1, "a", 1), (2, "B", 2)], [((2, "b", 2), "update_preimage"),  # v2
                                            ((2, "B", 2), "update_postimage")])
    for f in (t.path / "p=1").glob("*.parquet"):                             # lose p=1's files
        os.remove(f)
    with pytest.raises(ChangeDataFilesMissingError):
        sqlext.changes(spark, str(t.path), 1)
    got = feeds(spark, t.path, {"p2": dict(startingVersion=1, filter="p = 2"),
                                "p2_net": dict(startingVersion=1, filter="p = 2",
                                               deduplicationMode="netChanges")})
    assert got["p2"] == expect((2, "b", 2, "insert", 1), (2, "b", 2, "update_preimage", 2),
                               (2, "B", 2, "update_postimage", 2))
    assert got["p2_net"] == expect((2, "B", 2, "insert", 2))


def test_a_filter_on_other_columns_applies_to_the_net_result(spark, hand):
    hand.append([(1, "a")])                  # v1
    hand.update(1, v="b")                    # v2
    got = feeds(spark, hand.path, {"net": dict(startingVersion=2, filter="v = 'a'",
                                               deduplicationMode="netChanges",
                                               identifierColumns=["id"], computeUpdates=True)})
    # decided on all rows (an update of id 1), then filtered: only the pre-image is left
    assert got["net"] == expect((1, "a", "update_preimage", 2))


def test_the_partition_layout_may_change_inside_the_range(spark, tmp_path):
    t = HandTable(tmp_path / "t", COLUMNS + [("p", "integer")], partition_by=["p"])
    t.append([(1, "a", 1), (2, "b", 2)])                                     # v1: partitioned
    txn = t.log.start_transaction()                                          # v2: unpartitioned
    md = txn.snapshot.metadata
    from sqlext.log.actions import Metadata
    txn.update_metadata(Metadata(md.id, md.schema_string, [], md.configuration))
    removes = [f.remove(0) for f in txn.snapshot.files]
    t.partition_by = []
    adds = t._data_files([(2, "b", 2), (3, "c", 3)])
    txn.commit(removes + adds, "WRITE")
    got = feeds(spark, t.path, {"1..": dict(startingVersion=1)})
    assert got["1.."] == expect(
        (1, "a", 1, "insert", 1), (2, "b", 2, "insert", 1), (1, "a", 1, "delete", 2),
        (2, "b", 2, "delete", 2), (2, "b", 2, "insert", 2), (3, "c", 3, "insert", 2))


def test_removes_without_partition_values_take_them_from_the_add(spark, tmp_path):
    from sqlext.log.actions import RemoveFile
    t = HandTable(tmp_path / "t", COLUMNS + [("p", "integer")], partition_by=["p"])
    t.append([(1, "a", 7)])                                                  # v1
    txn = t.log.start_transaction()                                          # v2: old writer
    txn.commit([RemoveFile(f.path, 0, True) for f in txn.snapshot.files], "DELETE")
    got = feeds(spark, t.path, {"2": dict(startingVersion=2)})
    assert got["2"] == expect((1, "a", 7, "delete", 2))


def test_one_scan_reads_every_version(spark, tmp_path):
    t = HandTable(tmp_path / "t", COLUMNS + [("p", "integer")], partition_by=["p"])
    t.append([(1, "a", 1), (2, "b", 2)])                                     # data files
    t.update(1, v="A")                                                       # change files
    t.overwrite([(3, "c", 1)])                                               # adds and removes
    t.append([(4, "d", 2)])
    with spark_conf(spark, {"spark.sqlext.execution.local": "off"}):     # the Spark scan (small ranges are read on the driver)
        df = sqlext.changes(spark, str(t.path), 1)
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert plan.count("FileScan parquet") == 1, plan
    collected, jobs = jobs_run(spark, df.collect)
    assert len(collected) == 2 + 2 + 3 + 1
    # the scan, plus the broadcast of the small file -> version table
    assert jobs <= 2, jobs


def test_delta_table_changes_is_sqlext_changes(spark, hand):
    hand.append([(1, "a")])
    hand.update(1, v="b")
    table = sqlext.DeltaTable.forPath(spark, str(hand.path))
    got = table.changes(1, deduplicationMode="netChanges").collect()
    assert [(r.id, r.v, r._change_type, r._commit_version) for r in got] == [(1, "b", "insert", 2)]


def test_errors_are_sqlext_errors():
    assert issubclass(ChangeDataFilesMissingError, ChangeDataFeedError)
    assert issubclass(ChangeDataFilesMissingError, DeltaFileNotFoundError)
    assert issubclass(ChangeDataFeedError, SqlextError)
