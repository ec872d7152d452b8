"""Row tracking in the transaction layer (no Spark): every commit to a table with the
``rowTracking`` feature gives its new files ``baseRowId`` above the high-water mark and
``defaultRowCommitVersion`` = its version, raises the mark in the ``delta.rowTracking`` domain,
keeps both on re-added and removed files and in checkpoints, and a commit retried after a
concurrent one takes ids above the winner's. delta-spark reading and writing such tables:
tests/deltaspark/test_deltaspark_row_tracking.py."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sqlext.log import row_tracking
from sqlext.log.actions import Protocol
from sqlext.log.protocol_changes import merged
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import append, clear_caches, create_table, write_file

pytestmark = pytest.mark.usefixtures("fresh_caches")

TRACKED = {"delta.enableRowTracking": "true", "delta.checkpointInterval": "4",
           **row_tracking.materialized_column_names({})}


def _tracked_table(path) -> DeltaLog:
    log = create_table(path, configuration=TRACKED)
    txn = log.start_transaction()
    txn.update_protocol(merged(Protocol(1, 2), {"rowTracking"}))
    txn.commit([], "SET TBLPROPERTIES")
    return log


def _ids(log: DeltaLog, version=None) -> dict[str, tuple[int, int, int]]:
    """path -> (baseRowId, defaultRowCommitVersion, numRecords) of the live files."""
    clear_caches()
    snap = DeltaLog(log.location).snapshot(version)
    return {p: (f.extra.get("baseRowId"), f.extra.get("defaultRowCommitVersion"),
                f.parsed_stats()["numRecords"]) for p, f in snap.files_by_path.items()}


def _mark(log: DeltaLog, version=None) -> int:
    clear_caches()
    return row_tracking.high_water_mark(DeltaLog(log.location).snapshot(version).domains)


def test_rowtracking_needs_domain_metadata():
    assert merged(Protocol(1, 2), {"rowTracking"}) == Protocol(
        1, 7, None, ["appendOnly", "domainMetadata", "invariants", "rowTracking"])


def test_appends_get_consecutive_ids_and_their_version(tmp_path):
    log = _tracked_table(tmp_path / "t")
    v2 = append(log, [{"id": i, "name": "a"} for i in range(3)])
    v3 = append(log, [{"id": i, "name": "b"} for i in range(2)], part="b")
    ids = sorted(_ids(log).values())
    assert ids == [(0, v2, 3), (3, v3, 2)]
    assert _mark(log) == 4
    assert _mark(log, v2) == 2
    # a checkpoint (interval 4) keeps the ids
    v4 = append(log, [{"id": 9, "name": "c"}])
    assert (tmp_path / "t" / "_delta_log" / f"{v4:020d}.checkpoint.parquet").exists()
    assert sorted(_ids(log).values()) == [(0, v2, 3), (3, v3, 2), (5, v4, 1)]
    info = json.loads((tmp_path / "t" / "_delta_log" / f"{v4:020d}.json").read_text()
                      .splitlines()[0])["commitInfo"]
    assert info["tags"] == {"delta.rowTracking.preserved": "true"}


def test_removes_and_readds_keep_the_ids_of_the_file(tmp_path):
    log = _tracked_table(tmp_path / "t")
    append(log, [{"id": i, "name": "a"} for i in range(3)])
    snap = log.snapshot()
    (old,) = snap.files
    # a deletion-vector style re-add of the same path, and a new file replacing rows
    readd = dataclasses.replace(old, extra={})
    new = write_file(log, [{"id": 7, "name": "z"}], partition_values={"part": "a"})
    txn = log.start_transaction()
    v = txn.commit([readd, new], "DELETE")
    commit = [json.loads(line) for line in
              (tmp_path / "t" / "_delta_log" / f"{v:020d}.json").read_text().splitlines()]
    adds = {a["add"]["path"]: a["add"] for a in commit if "add" in a}
    assert (adds[old.path]["baseRowId"], adds[old.path]["defaultRowCommitVersion"]) == \
        (old.extra["baseRowId"], old.extra["defaultRowCommitVersion"])
    assert (adds[new.path]["baseRowId"], adds[new.path]["defaultRowCommitVersion"]) == (3, v)
    txn = log.start_transaction()
    live = {f.path: f for f in txn.snapshot.files}
    v2 = txn.commit([live[new.path].remove(1)], "DELETE")
    remove = [json.loads(line)["remove"] for line in
              (tmp_path / "t" / "_delta_log" / f"{v2:020d}.json").read_text().splitlines()
              if "remove" in line]
    assert (remove[0]["baseRowId"], remove[0]["defaultRowCommitVersion"]) == (3, v)
    assert _mark(log) == 3


def test_a_retried_commit_takes_ids_above_the_winners(tmp_path):
    log = _tracked_table(tmp_path / "t")
    loser = log.start_transaction()
    mine = write_file(log, [{"id": 1, "name": "x"}] * 4, partition_values={"part": "a"})
    append(log, [{"id": 2, "name": "y"}] * 5, part="b")          # the winner: ids 0-4
    v = loser.commit([mine], "WRITE", {"mode": "Append"})
    ids = _ids(log)
    assert ids[mine.path] == (5, v, 4)
    assert _mark(log) == 8
    starts = sorted((b, b + n - 1) for b, _, n in ids.values())
    assert all(a[1] < b[0] for a, b in zip(starts, starts[1:]))   # no id used twice


def test_turning_row_tracking_on_backfills_existing_files(tmp_path):
    log = create_table(tmp_path / "t", configuration={})
    append(log, [{"id": i, "name": "a"} for i in range(3)])
    append(log, [{"id": 5, "name": "b"}], part="b")
    assert all(b is None for b, _, _ in _ids(log).values())
    txn = log.start_transaction()
    conf = {**txn.snapshot.metadata.configuration, **TRACKED}
    txn.update_metadata(dataclasses.replace(txn.snapshot.metadata, configuration=conf))
    txn.update_protocol(merged(txn.snapshot.protocol, {"rowTracking"}))
    v = txn.commit([], "SET TBLPROPERTIES")
    ids = _ids(log)
    assert sorted((b, n) for b, _, n in ids.values()) in ([(0, 3), (3, 1)], [(0, 1), (1, 3)])
    assert {c for _, c, _ in ids.values()} == {v}
    assert _mark(log) == 3


def test_compaction_says_ids_were_not_preserved(tmp_path):
    """OPTIMIZE's rewrite (dataChange = false) copies rows into a new file with fresh ids."""
    log = _tracked_table(tmp_path / "t")
    append(log, [{"id": 1, "name": "a"}])
    append(log, [{"id": 2, "name": "b"}])
    txn = log.start_transaction()
    olds = txn.snapshot.files
    new = dataclasses.replace(write_file(log, [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
                                         partition_values={"part": "a"}), data_change=False)
    v = txn.commit([f.remove(1, data_change=False) for f in olds] + [new], "OPTIMIZE")
    info = json.loads((tmp_path / "t" / "_delta_log" / f"{v:020d}.json").read_text()
                      .splitlines()[0])["commitInfo"]
    assert info["tags"] == {"delta.rowTracking.preserved": "false"}
    assert list(_ids(log).values()) == [(2, v, 2)]
