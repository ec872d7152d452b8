"""The change feed of the fixture tables (tests/fixtures) written by delta-spark and Databricks equals
delta-rs's ``load_cdf``, row for row (commit timestamps included: the fixture copies carry their
``commitInfo.timestamp`` as commit file time)."""

from __future__ import annotations

import pytest

import sqlext
from sqlext.errors import ChangeDataFeedError
from tests.support import assert_same_rows, deltalake_cdf

RANGES = {"cdf-table": [(0, None), (1, 2), (3, 3), (2, None)],
          "simple_table_with_cdc": [(0, None), (2, 2)]}


@pytest.mark.parametrize("name", sorted(RANGES))
def test_raw_feed_equals_deltalake(spark, fixture_table, name):
    path = fixture_table(name)
    for start, end in RANGES[name]:
        assert_same_rows(sqlext.changes(spark, str(path), start, end),
                         deltalake_cdf(path, start, end), sort_by=["_commit_version", "id"])


def test_cdf_table_net_changes_by_key(spark, fixture_table):
    # v1 moves ids 2-4 to 2023-12-22, v2 moves 5-7 to 2023-12-29, v3 deletes Dennis (7)
    path = fixture_table("cdf-table")
    rows = sqlext.changes(spark, str(path), 1, deduplicationMode="netChanges",
                          identifierColumns=["id"], computeUpdates=True).collect()
    got = sorted((r.id, str(r.birthday), r._change_type, r._commit_version) for r in rows)
    assert got == [
        (2, "2023-12-22", "update_postimage", 1), (2, "2023-12-23", "update_preimage", 1),
        (3, "2023-12-22", "update_postimage", 1), (3, "2023-12-23", "update_preimage", 1),
        (4, "2023-12-22", "update_postimage", 1), (4, "2023-12-23", "update_preimage", 1),
        (5, "2023-12-24", "update_preimage", 2), (5, "2023-12-29", "update_postimage", 2),
        (6, "2023-12-24", "update_preimage", 2), (6, "2023-12-29", "update_postimage", 2),
        (7, "2023-12-24", "delete", 2)]


@pytest.mark.parametrize("name", ["simple_table", "delta-0.8.0-partitioned"])
def test_fixtures_without_the_feed_are_refused(spark, fixture_table, name):
    path = fixture_table(name)
    with pytest.raises(ChangeDataFeedError, match=r"not enabled at version 0"):
        sqlext.changes(spark, str(path), 0)
