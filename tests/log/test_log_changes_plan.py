"""The change-feed plan from the log alone (sqlext.log.changes_plan, no Spark): which files hold
each version's changes, how a range request resolves, and the refusals delta-spark makes."""

from __future__ import annotations

import pytest

from sqlext.errors import ChangeDataFeedError
from sqlext.log.changes_plan import DELETE, INSERT, RangeRequest, plan_changes, resolve_range
from tests.support.kernel_tables import append, create_table

pytestmark = pytest.mark.usefixtures("fresh_caches")     # kernel caches cleared around each test


def _plan(log, start, end=None):
    listing = log.listing()
    times = log.commit_timestamps(listing)
    bounds = resolve_range(log, listing, times, RangeRequest(start, end))
    return plan_changes(log, listing, times, *bounds)


def test_appends_and_a_remove_are_planned_as_inserts_and_deletes(tmp_path):
    log = create_table(tmp_path / "t")
    append(log, [{"id": 1, "name": "x"}])
    append(log, [{"id": 2, "name": "y"}])
    victim = log.snapshot().files[0]
    log.start_transaction().commit([victim.remove(2**40)], "DELETE")
    plan = _plan(log, 1)
    assert (plan.start, plan.end) == (1, 3)
    assert [(f.version, f.change_type) for f in plan.files] == [(1, INSERT), (2, INSERT),
                                                                (3, DELETE)]
    assert plan.files[2].path == victim.path


def test_a_range_starting_after_the_latest_version_is_refused(tmp_path):
    log = create_table(tmp_path / "t")
    append(log, [{"id": 1, "name": "x"}])
    with pytest.raises(ChangeDataFeedError, match="after the latest version 1"):
        _plan(log, 5)


def test_versions_without_the_change_feed_are_refused(tmp_path):
    log = create_table(tmp_path / "t", configuration={})
    append(log, [{"id": 1, "name": "x"}])
    with pytest.raises(ChangeDataFeedError):
        _plan(log, 0)
