"""Deduplication modes and computeUpdates on hand-built histories, with the exact rows expected.

Each history is written by :class:`tests.support.change_feeds.HandTable` (pyarrow files, sqlext's log),
so every version holds precisely the changes described. Rows are (id, v); expected change rows
are (id, v, _change_type, _commit_version). The raw feed (``none``) of every history is also
checked against delta-rs's ``load_cdf``. The reads of one test run as one Spark job
(:func:`tests.support.change_feeds.feeds`).
"""

from __future__ import annotations

import pytest

import sqlext
from sqlext.errors import ChangeDataFeedError
from tests.support.change_feeds import HandTable, deltalake_change_rows, expect, feeds

COLUMNS = [("id", "integer"), ("v", "string")]
KEY = {"identifierColumns": ["id"]}
NET = {"deduplicationMode": "netChanges"}
DROP = {"deduplicationMode": "dropCarryovers"}
UPDATES = {"computeUpdates": True, "identifierColumns": ["id"]}


@pytest.fixture
def hand(tmp_path):
    return HandTable(tmp_path / "hand", COLUMNS)


def test_insert_then_delete(spark, hand):
    hand.append([(1, "a"), (2, "b")])        # v1
    hand.delete(1)                           # v2
    got = feeds(spark, hand.path, {"none": dict(startingVersion=1),
                                   "drop": dict(startingVersion=1, **DROP),
                                   "net": dict(startingVersion=1, **NET),
                                   "net_key": dict(startingVersion=1, **NET, **UPDATES)})
    raw = expect((1, "a", "insert", 1), (2, "b", "insert", 1), (1, "a", "delete", 2))
    assert got["none"] == raw == deltalake_change_rows(hand.path, 1)
    assert got["drop"] == raw
    # inserted and deleted inside the range: gone, by value and by key
    assert got["net"] == got["net_key"] == expect((2, "b", "insert", 1))


def test_insert_then_two_updates(spark, hand):
    hand.append([(1, "a")])                  # v1
    hand.update(1, v="b")                    # v2
    hand.update(1, v="c")                    # v3
    got = feeds(spark, hand.path, {
        "none": dict(startingVersion=1),
        "net_from_1": dict(startingVersion=1, **NET),
        "net_key_from_1": dict(startingVersion=1, **NET, **KEY),
        "net_updates_from_2": dict(startingVersion=2, **NET, **UPDATES),
        "net_key_from_2": dict(startingVersion=2, **NET, **KEY),
        "net_from_2": dict(startingVersion=2, **NET)})
    assert got["none"] == deltalake_change_rows(hand.path, 1) == expect(
        (1, "a", "insert", 1), (1, "a", "update_preimage", 2), (1, "b", "update_postimage", 2),
        (1, "b", "update_preimage", 3), (1, "c", "update_postimage", 3))
    # inserted inside the range: its last image, as an insert
    assert got["net_from_1"] == got["net_key_from_1"] == expect((1, "c", "insert", 3))
    # existed before the range: from the first image to the last
    assert got["net_updates_from_2"] == expect((1, "a", "update_preimage", 2),
                                               (1, "c", "update_postimage", 3))
    assert got["net_key_from_2"] == got["net_from_2"] == expect((1, "a", "delete", 2),
                                                                (1, "c", "insert", 3))


def test_update_then_delete(spark, hand):
    hand.append([(1, "a"), (2, "x")])        # v1
    hand.update(1, v="b")                    # v2
    hand.delete(1)                           # v3
    got = feeds(spark, hand.path, {"drop": dict(startingVersion=2, **DROP),
                                   "net": dict(startingVersion=2, **NET),
                                   "net_key": dict(startingVersion=2, **NET, **KEY),
                                   "net_updates": dict(startingVersion=2, **NET, **UPDATES)})
    assert got["drop"] == deltalake_change_rows(hand.path, 2) == expect(
        (1, "a", "update_preimage", 2), (1, "b", "update_postimage", 2), (1, "b", "delete", 3))
    # what was deleted is the row as it was before the range
    assert got["net"] == got["net_key"] == got["net_updates"] == expect((1, "a", "delete", 2))


def test_delete_then_insert(spark, hand):
    hand.append([(1, "a")])                  # v1
    hand.delete(1)                           # v2
    hand.append([(1, "b")])                  # v3
    hand.delete(1)                           # v4
    hand.append([(1, "a")])                  # v5: the original row again
    got = feeds(spark, hand.path, {
        "net_updates": dict(startingVersion=2, endingVersion=3, **NET, **UPDATES),
        "net": dict(startingVersion=2, endingVersion=3, **NET),
        "updates": dict(startingVersion=2, endingVersion=3, **UPDATES),
        "net_back": dict(startingVersion=2, endingVersion=5, **NET),
        "net_key_back": dict(startingVersion=2, endingVersion=5, **NET, **KEY)})
    assert got["net_updates"] == expect((1, "a", "update_preimage", 2),
                                        (1, "b", "update_postimage", 3))
    assert got["net"] == expect((1, "a", "delete", 2), (1, "b", "insert", 3))
    # a delete and an insert in different versions are not an update
    assert got["updates"] == expect((1, "a", "delete", 2), (1, "b", "insert", 3))
    # back to the original value: nothing by value; by key, Spark's first and last image
    assert got["net_back"] == expect()
    assert got["net_key_back"] == expect((1, "a", "delete", 2), (1, "a", "insert", 5))


def test_update_to_identical_values(spark, hand):
    hand.append([(1, "a"), (2, "b")])        # v1
    hand.update(1, v="a")                    # v2: matched, nothing changes
    got = feeds(spark, hand.path, {"none": dict(startingVersion=2),
                                   "drop": dict(startingVersion=2, **DROP),
                                   "net_updates": dict(startingVersion=2, **NET, **UPDATES),
                                   "net": dict(startingVersion=2, **NET)})
    images = expect((1, "a", "update_preimage", 2), (1, "a", "update_postimage", 2))
    assert got["none"] == deltalake_change_rows(hand.path, 2) == images
    # an update the statement made is never a carry-over
    assert got["drop"] == got["net_updates"] == images
    assert got["net"] == expect()


def test_overwrite_that_rewrites_unchanged_rows(spark, hand):
    hand.append([(1, "a"), (2, "b"), (3, "c")])              # v1
    hand.overwrite([(1, "a"), (2, "B"), (4, "d")])            # v2: changes inferred from files
    got = feeds(spark, hand.path, {"none": dict(startingVersion=2),
                                   "drop": dict(startingVersion=2, **DROP),
                                   "net": dict(startingVersion=2, **NET),
                                   "drop_updates": dict(startingVersion=2, **DROP, **UPDATES),
                                   "net_updates": dict(startingVersion=2, **NET, **UPDATES)})
    assert got["none"] == deltalake_change_rows(hand.path, 2) == expect(
        (1, "a", "delete", 2), (2, "b", "delete", 2), (3, "c", "delete", 2),
        (1, "a", "insert", 2), (2, "B", "insert", 2), (4, "d", "insert", 2))
    real = expect((2, "b", "delete", 2), (3, "c", "delete", 2), (2, "B", "insert", 2),
                  (4, "d", "insert", 2))
    assert got["drop"] == got["net"] == real
    assert got["drop_updates"] == got["net_updates"] == expect(
        (2, "b", "update_preimage", 2), (2, "B", "update_postimage", 2), (3, "c", "delete", 2),
        (4, "d", "insert", 2))
    # without carry-over removal the copied row 1 would come out as an update: refused
    with pytest.raises(ChangeDataFeedError, match=r"version\(s\) \[2\].*dropCarryovers"):
        sqlext.changes(spark, str(hand.path), 2, **UPDATES)


def test_carry_overs_count_duplicates(spark, hand):
    hand.append([(1, "a"), (1, "a")])        # v1
    hand.overwrite([(1, "a")] * 3)           # v2: two copied, one new
    hand.overwrite([(1, "a")])               # v3: one copied, two gone
    got = feeds(spark, hand.path, {"none": dict(startingVersion=2),
                                   "drop": dict(startingVersion=2, **DROP),
                                   "net": dict(startingVersion=2, **NET),
                                   "net_all": dict(startingVersion=1, **NET)})
    assert got["none"] == deltalake_change_rows(hand.path, 2)
    assert got["drop"] == expect((1, "a", "insert", 2), (1, "a", "delete", 3),
                                 (1, "a", "delete", 3))
    assert got["net"] == expect((1, "a", "delete", 3))
    assert got["net_all"] == expect((1, "a", "insert", 2))   # the latest real insert


def test_compute_updates_pairs_a_delete_and_an_insert_of_one_key(spark, hand):
    hand.append([(1, "a"), (2, "b")])                                   # v1
    hand.rewrite([(1, "A"), (2, "b"), (3, "c")],                        # v2, recorded as
                 [((1, "a"), "delete"), ((1, "A"), "insert"), ((3, "c"), "insert")], "MERGE")
    got = feeds(spark, hand.path, {"updates": dict(startingVersion=2, **UPDATES)})
    assert deltalake_change_rows(hand.path, 2) == expect(
        (1, "a", "delete", 2), (1, "A", "insert", 2), (3, "c", "insert", 2))
    assert got["updates"] == expect(
        (1, "a", "update_preimage", 2), (1, "A", "update_postimage", 2), (3, "c", "insert", 2))


def test_a_key_that_is_not_unique_is_refused(spark, hand):
    hand.append([(1, "a"), (1, "b"), (2, "c")])                                   # v1
    hand.rewrite([(1, "z")], [((1, "a"), "delete"), ((1, "b"), "delete"),       # v2
                              ((2, "c"), "delete"), ((1, "z"), "insert")], "MERGE")
    with pytest.raises(ChangeDataFeedError, match=r"key \(id=1\) has 2 'delete' changes in "
                                                  r"version 2 \(range 2\.\.2\)"):
        sqlext.changes(spark, str(hand.path), 2, **UPDATES)
    # version 1 inserted two rows with id 1
    with pytest.raises(ChangeDataFeedError, match=r"key \(id=1\) has 2 'insert' changes in "
                                                  r"version 1"):
        sqlext.changes(spark, str(hand.path), 1, **NET, **KEY)
    # by value, duplicates are fine
    got = feeds(spark, hand.path, {"net": dict(startingVersion=1, **NET)})
    assert got["net"] == expect((1, "z", "insert", 2))


def test_net_changes_keep_the_version_and_time_of_each_kept_image(spark, hand):
    hand.append([(1, "a")])                  # v1
    hand.update(1, v="b")                    # v2
    hand.update(1, v="c")                    # v3
    rows = sqlext.changes(spark, str(hand.path), 2, **NET, **UPDATES).collect()
    times = hand.log.commit_timestamps()
    got = {(r["_change_type"], r["_commit_version"],
            int(r["_commit_timestamp"].timestamp() * 1000)) for r in rows}
    assert got == {("update_preimage", 2, times[2]), ("update_postimage", 3, times[3])}
