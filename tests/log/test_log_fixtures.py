"""Replay of every fixture table (tests/fixtures), at every version, against delta-rs's file list."""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pytest

from sqlext.errors import UnsupportedTableFeatureError
from sqlext.log.protocol import check_writable
from sqlext.log.schema import parse_partition_value
from sqlext.log.table import DeltaLog
from tests.support.fixtures import fixture_names, fixture_path

from tests.support.kernel_tables import clear_caches

DV_TABLE = "table-with-dv-small"
NAMES = [n for n in fixture_names() if n != DV_TABLE]


def _versions(name: str) -> list[tuple[str, int]]:
    log = DeltaLog(str(fixture_path(name)))
    listing = log.listing()
    first = 0 if 0 in listing.commits else min(c.version for c in listing.checkpoints)
    return [(name, v) for v in range(first, listing.latest_version + 1)]


CASES = [case for name in NAMES for case in _versions(name)]


def test_every_fixture_is_covered():
    assert len(NAMES) >= 18, NAMES
    assert len(CASES) >= 60


def _deltalake_files(path: str, version: int) -> dict[str, dict]:
    from deltalake import DeltaTable
    adds = pa.table(DeltaTable(path, version=version).get_add_actions(flatten=True))
    return {row["path"]: row for row in adds.to_pylist()}


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "cached"])
@pytest.mark.parametrize("name,version", CASES, ids=[f"{n}@{v}" for n, v in CASES])
def test_replay_matches_deltalake(name, version, fresh):
    path = str(fixture_path(name))
    if fresh:
        clear_caches()       # "cached" runs after other versions of the same table were loaded
    snap = DeltaLog(path).snapshot(version)
    assert snap.version == version
    expected = _deltalake_files(path, version)
    mine = {f.path: f for f in snap.files}
    assert set(mine) == set(expected)
    types = {f.name: f.type for f in snap.schema}
    for p, row in expected.items():
        add = mine[p]
        assert add.size == row["size_bytes"], p
        assert add.modification_time == row["modification_time"], p
        if row.get("num_records") is not None:
            assert add.num_records == row["num_records"], p
        for col in snap.partition_columns:
            got = parse_partition_value(add.partition_values.get(col), types[col])
            want = row[f"partition.{col}"]
            if types[col] in ("timestamp", "timestamp_ntz") and want is not None:
                want = want.replace(tzinfo=None)
            assert got == want, (p, col, add.partition_values)


def test_latest_snapshot_equals_explicit_version():
    for name in NAMES:
        clear_caches()
        log = DeltaLog(str(fixture_path(name)))
        latest = log.snapshot()
        again = log.snapshot(latest.version)
        assert set(latest.files_by_path) == set(again.files_by_path)


def test_special_partition_paths_are_kept_encoded():
    snap = DeltaLog(str(fixture_path("delta-0.8.0-special-partition"))).snapshot()
    assert sorted(f.partition_values["x"] for f in snap.files) == ["A/A", "B B"]
    assert sorted(f.path.split("/")[0] for f in snap.files) == ["x=A%252FA", "x=B%2520B"]
    log = DeltaLog(str(fixture_path("delta-0.8.0-special-partition")))
    for f in snap.files:
        assert log.data_path(f.path).startswith(log.location)
        assert "%2F" in log.data_path(f.path) or "%20" in log.data_path(f.path)


def test_null_partition_is_json_null():
    snap = DeltaLog(str(fixture_path("delta-0.8.0-null-partition"))).snapshot()
    assert sorted(str(f.partition_values["k"]) for f in snap.files) == ["A", "None"]


def test_txn_and_checkpoint_fixture_state():
    snap = DeltaLog(str(fixture_path("delta-0.2.0"))).snapshot()
    assert snap.checkpoint_version == 3
    clear_caches()
    snap = DeltaLog(str(fixture_path("simple_table_with_checkpoint"))).snapshot()
    assert snap.checkpoint_version == 10 and snap.version == 10


def test_removed_files_become_tombstones():
    clear_caches()
    snap = DeltaLog(str(fixture_path("delta-0.8.0"))).snapshot(1)
    assert snap.tombstones, "the DELETE at version 1 removes a file"
    assert not set(snap.tombstones) & set(snap.files_by_path)


def test_deletion_vector_table_loads_with_its_descriptor():
    path = str(fixture_path(DV_TABLE))
    clear_caches()
    first, second = DeltaLog(path).snapshot(0), DeltaLog(path).snapshot(1)
    assert [f.deletion_vector for f in first.files] == [None]
    assert first.num_records == 10
    (add,) = second.files
    assert add.deletion_vector == {"storageType": "u", "pathOrInlineDv": "vBn[lx{q8@P<9BNH/isA",
                                   "offset": 1, "sizeInBytes": 36, "cardinality": 2}
    assert add.num_records == 8 and second.num_records == 8 and second.has_deletion_vectors
    # the remove of (path, no DV) and the add of (path, DV) are two logical files
    (tombstone,) = second.tombstones.values()
    assert tombstone.path == add.path and tombstone.deletion_vector is None


@pytest.mark.parametrize("version", [None, 0, 1])
def test_deletion_vector_table_is_writable(fixture_table, version):
    """sqlext writes deletion vectors: the protocol check lets writers in (MERGE refuses such
    tables itself, in the engine); a feature sqlext lacks is still refused."""
    path = str(fixture_table(DV_TABLE))
    snapshot = DeltaLog(path).snapshot(version)
    check_writable(path, snapshot.version, snapshot.protocol, snapshot.metadata)
    future = dataclasses.replace(snapshot.protocol, writer_features=["deletionVectors",
                                                                     "someFutureFeature"])
    with pytest.raises(UnsupportedTableFeatureError, match="someFutureFeature"):
        check_writable(path, snapshot.version, future, snapshot.metadata)
