"""Checkpoints: classic, multi-part, stats_parsed only; missing or corrupt _last_checkpoint; corrupt
checkpoint files; logs that start at a checkpoint."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sqlext.errors import CorruptLogError, VersionNotFoundException
from sqlext.log.actions import SetTransaction, UnknownAction, parse_commit
from sqlext.log.checkpoint import read_checkpoint
from sqlext.log.pruning import Pruner
from sqlext.log.snapshot import Replayer
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import append, clear_caches, create_table

CP_TABLE = "simple_table_with_checkpoint"


pytestmark = pytest.mark.usefixtures("fresh_caches")     # kernel caches cleared around each test


def _files(path, version=None) -> dict:
    clear_caches()
    snap = DeltaLog(str(path)).snapshot(version)
    return {p: (f.size, f.partition_values, f.stats) for p, f in snap.files_by_path.items()}


def _deltalake_paths(path, version=None) -> set[str]:
    from deltalake import DeltaTable
    return set(pa.table(DeltaTable(str(path), version=version).get_add_actions()).column("path")
               .to_pylist())


def split_checkpoint(log_dir: Path, version: int, parts: int) -> list[str]:
    """Rewrite the classic checkpoint at ``version`` as a multi-part checkpoint of ``parts``."""
    classic = log_dir / f"{version:020d}.checkpoint.parquet"
    table = pq.read_table(classic)
    names = []
    bounds = [round(i * table.num_rows / parts) for i in range(parts + 1)]
    for i in range(parts):
        name = f"{version:020d}.checkpoint.{i + 1:010d}.{parts:010d}.parquet"
        pq.write_table(table.slice(bounds[i], bounds[i + 1] - bounds[i]), log_dir / name)
        names.append(name)
    classic.unlink()
    return names


def _drop_commits(log_dir: Path, below: int) -> None:
    for v in range(below):
        (log_dir / f"{v:020d}.json").unlink()


# --- multi-part ---------------------------------------------------------------------------------

@pytest.mark.parametrize("parts", [2, 3])
def test_multi_part_checkpoint(fixture_table, parts):
    path = fixture_table(CP_TABLE)
    log_dir = path / "_delta_log"
    expected = _files(path)
    split_checkpoint(log_dir, 10, parts)
    _drop_commits(log_dir, 10)                      # replay can only succeed through the parts
    clear_caches()
    snap = DeltaLog(str(path)).snapshot()
    assert snap.checkpoint_version == 10
    assert _files(path) == expected
    assert set(f.path for f in snap.files) == _deltalake_paths(path)


def test_incomplete_multi_part_checkpoint_is_ignored(fixture_table):
    path = fixture_table(CP_TABLE)
    log_dir = path / "_delta_log"
    expected = _files(path)
    names = split_checkpoint(log_dir, 10, 2)
    (log_dir / names[1]).unlink()
    clear_caches()
    snap = DeltaLog(str(path)).snapshot()
    assert snap.checkpoint_version is None          # rebuilt from the commits
    assert _files(path) == expected
    _drop_commits(log_dir, 1)
    clear_caches()
    with pytest.raises(VersionNotFoundException):
        DeltaLog(str(path)).snapshot()


# --- _last_checkpoint ---------------------------------------------------------------------------

def test_fixture_without_last_checkpoint():
    from tests.support.fixtures import fixture_path
    path = fixture_path("with_checkpoint_no_last_checkpoint")
    assert not (path / "_delta_log" / "_last_checkpoint").exists()
    snap = DeltaLog(str(path)).snapshot()
    assert snap.checkpoint_version == 2 and snap.version == 3
    assert set(f.path for f in snap.files) == _deltalake_paths(path)


@pytest.mark.parametrize("content", [None, b"", b"{not json", b'{"version": 999, "size": 3}',
                                     b'{"version": 3, "size": 3}', b"\x00\xff" * 10])
def test_missing_or_corrupt_last_checkpoint(fixture_table, content):
    path = fixture_table(CP_TABLE)
    lc = path / "_delta_log" / "_last_checkpoint"
    expected, expected4 = _files(path), _files(path, 4)
    if content is None:
        lc.unlink()
    else:
        lc.write_bytes(content)
    clear_caches()
    snap = DeltaLog(str(path)).snapshot()
    assert snap.version == 10 and snap.checkpoint_version == 10
    assert _files(path) == expected
    assert _files(path, 4) == expected4     # (deltalake refuses a _last_checkpoint that lies)


def test_last_checkpoint_written_by_the_kernel(tmp_path):
    log = create_table(tmp_path / "t")
    for i in range(10):
        append(log, [{"id": i, "name": f"n{i}"}])
    lc = json.loads((tmp_path / "t" / "_delta_log" / "_last_checkpoint").read_text())
    cp = tmp_path / "t" / "_delta_log" / f"{10:020d}.checkpoint.parquet"
    assert lc["version"] == 10 and lc["numOfAddFiles"] == 10
    assert lc["sizeInBytes"] == cp.stat().st_size
    assert lc["size"] == pq.read_table(cp).num_rows == 12      # protocol + metaData + 10 adds


# --- corrupt checkpoint files ---------------------------------------------------------------------

def _table_with_two_checkpoints(tmp_path) -> tuple[DeltaLog, Path]:
    log = create_table(tmp_path / "t")
    for i in range(25):
        append(log, [{"id": i, "name": f"n{i}"}], part=f"p{i % 3}")
    log_dir = tmp_path / "t" / "_delta_log"
    assert (log_dir / f"{10:020d}.checkpoint.parquet").exists()
    assert (log_dir / f"{20:020d}.checkpoint.parquet").exists()
    return log, log_dir


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "wrong-schema"])
def test_corrupt_checkpoint_falls_back_to_an_older_route(tmp_path, damage):
    log, log_dir = _table_with_two_checkpoints(tmp_path)
    expected = _files(log.location)
    cp20 = log_dir / f"{20:020d}.checkpoint.parquet"
    data = cp20.read_bytes()
    if damage == "garbage":
        cp20.write_bytes(b"this is not parquet" * 10)
    elif damage == "truncated":
        cp20.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        cp20.write_bytes(b"")
    else:
        pq.write_table(pa.table({"x": [1, 2]}), cp20)
    clear_caches()
    snap = DeltaLog(log.location).snapshot()
    assert snap.version == 25
    # (a readable parquet file without protocol/metaData cannot stand for the table state either)
    assert snap.checkpoint_version == 10
    assert _files(log.location) == expected
    # both checkpoints unusable: replay from version 0
    (log_dir / f"{10:020d}.checkpoint.parquet").write_bytes(b"junk")
    cp20.write_bytes(b"junk")
    clear_caches()
    snap = DeltaLog(log.location).snapshot()
    assert snap.checkpoint_version is None
    assert _files(log.location) == expected


def test_corrupt_checkpoint_without_commits_to_fall_back_on(fixture_table):
    path = fixture_table(CP_TABLE)
    log_dir = path / "_delta_log"
    _drop_commits(log_dir, 10)
    (log_dir / f"{10:020d}.checkpoint.parquet").write_bytes(b"junk")
    clear_caches()
    with pytest.raises(CorruptLogError) as err:
        DeltaLog(str(path)).snapshot()
    msg = str(err.value)
    assert str(path) in msg and "checkpoint cannot be read" in msg and "version 10" in msg


# --- a log that starts at a checkpoint ------------------------------------------------------------

@pytest.mark.parametrize("keep_checkpoint_commit", [True, False])
def test_log_starting_at_a_checkpoint(fixture_table, keep_checkpoint_commit):
    path = fixture_table(CP_TABLE)
    log_dir = path / "_delta_log"
    expected = _files(path)
    _drop_commits(log_dir, 10)
    if not keep_checkpoint_commit:
        (log_dir / f"{10:020d}.json").unlink()
    clear_caches()
    log = DeltaLog(str(path))
    snap = log.snapshot()
    assert snap.version == 10 and snap.checkpoint_version == 10
    assert _files(path) == expected
    assert _files(path, 10) == expected
    for v in (0, 5, 9):
        with pytest.raises(VersionNotFoundException) as err:
            log.snapshot(v)
        assert f"version {v}" in str(err.value) and str(path) in str(err.value)
    with pytest.raises(VersionNotFoundException):
        log.snapshot(11)


def test_appending_to_a_log_that_starts_at_a_checkpoint(fixture_table):
    path = fixture_table(CP_TABLE)
    _drop_commits(path / "_delta_log", 10)
    clear_caches()
    log = DeltaLog(str(path))
    before = set(log.snapshot().files_by_path)
    add = log.snapshot().files[0]
    txn = log.start_transaction()
    assert txn.commit([add.remove(1)], "DELETE") == 11
    clear_caches()
    assert set(DeltaLog(str(path)).snapshot().files_by_path) == before - {add.path}
    assert set(f.path for f in DeltaLog(str(path)).snapshot().files) == _deltalake_paths(path)


# --- stats_parsed only ----------------------------------------------------------------------------

STRUCT_STATS = "delta-1.2.1-only-struct-stats"


def test_stats_parsed_only_checkpoint_gives_the_same_stats_as_the_commits():
    from tests.support.fixtures import fixture_path
    path = fixture_path(STRUCT_STATS)
    cp = path / "_delta_log" / f"{10:020d}.checkpoint.parquet"
    add_type = pq.read_schema(cp).field("add").type
    assert add_type.get_field_index("stats") < 0 and add_type.get_field_index("stats_parsed") >= 0
    snap = DeltaLog(str(path)).snapshot(10)
    assert snap.checkpoint_version == 10
    # the same state replayed from the JSON commits alone
    replay = Replayer()
    for v in range(11):
        replay.apply(parse_commit((path / "_delta_log" / f"{v:020d}.json").read_bytes()))
    from_json = replay.snapshot(str(path), 10, None)
    assert set(snap.files_by_path) == set(from_json.files_by_path)
    for key, add in snap.files_by_path.items():
        got = json.loads(add.stats, parse_float=Decimal)
        want = json.loads(from_json.files_by_path[key].stats, parse_float=Decimal)
        assert got["numRecords"] == want["numRecords"]
        for kind in ("minValues", "maxValues"):
            for col in ("integer", "decimal", "string", "date", "timestamp"):
                assert got[kind][col] == want[kind][col], (kind, col)
        assert got["nullCount"] == {k: v for k, v in want["nullCount"].items() if v is not None}


def test_stats_parsed_only_checkpoint_prunes():
    from tests.support.fixtures import fixture_path
    snap = DeltaLog(str(fixture_path(STRUCT_STATS))).snapshot(10)
    assert len(snap.files) == 10
    integers = sorted(json.loads(f.stats)["minValues"]["integer"] for f in snap.files)
    assert integers == list(range(10))

    def survivors(pred):
        return Pruner(pred, snap.schema, snap.partition_columns).prune(snap.files)

    assert [json.loads(f.stats)["minValues"]["integer"] for f in survivors("integer = 3")] == [3]
    assert len(survivors("integer >= 8")) == 2
    assert len(survivors("integer < 0")) == 0
    assert len(survivors("decimal > -5.6")) == 0           # every decimal is -5.67800
    assert len(survivors("decimal = -5.678")) == 10
    assert len(survivors("string = 'strinG'")) == 0
    assert len(survivors("date = DATE'2022-10-24'")) == 10
    assert len(survivors("date > '2022-10-24'")) == 0
    assert len(survivors("timestamp > TIMESTAMP'2030-01-01 00:00:00'")) == 0
    assert len(survivors("`null` IS NULL")) == 10
    assert len(survivors("`null` IS NOT NULL")) == 0      # nullCount == numRecords


def test_checkpoint_decoding_keeps_unknown_columns_and_domains(tmp_path):
    # a checkpoint with a future add field and a domainMetadata row, as another engine may write
    add_type = pa.struct([("path", pa.string()),
                          ("partitionValues", pa.map_(pa.string(), pa.string())),
                          ("size", pa.int64()), ("modificationTime", pa.int64()),
                          ("dataChange", pa.bool_()), ("stats", pa.string()),
                          ("baseRowId", pa.int64()), ("clusteringProvider", pa.string())])
    schema = pa.schema([
        ("protocol", pa.struct([("minReaderVersion", pa.int32()), ("minWriterVersion", pa.int32())])),
        ("metaData", pa.struct([("id", pa.string()), ("schemaString", pa.string()),
                                ("partitionColumns", pa.list_(pa.string())),
                                ("format", pa.struct([("provider", pa.string()),
                                                      ("options", pa.map_(pa.string(), pa.string()))])),
                                ("configuration", pa.map_(pa.string(), pa.string()))])),
        ("add", add_type), ("txn", pa.struct([("appId", pa.string()), ("version", pa.int64())])),
        ("domainMetadata", pa.struct([("domain", pa.string()), ("configuration", pa.string()),
                                      ("removed", pa.bool_())]))])
    rows = [{"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
            {"metaData": {"id": "x", "schemaString": '{"type":"struct","fields":[]}',
                          "partitionColumns": [], "format": {"provider": "parquet", "options": []},
                          "configuration": [("k", "v")]}},
            {"add": {"path": "a%20b.parquet", "partitionValues": [("p", None)], "size": 5,
                     "modificationTime": 6, "dataChange": False, "stats": None, "baseRowId": 42,
                     "clusteringProvider": None}},
            {"add": {"path": "c.parquet", "partitionValues": None, "size": 7,
                     "modificationTime": 8, "dataChange": None, "stats": '{"numRecords":1}',
                     "baseRowId": None, "clusteringProvider": "liquid"}},
            {"txn": {"appId": "app", "version": 3}},
            {"domainMetadata": {"domain": "d1", "configuration": "{}", "removed": False}}]
    import io
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink)
    actions = read_checkpoint([sink.getvalue()])
    replay = Replayer()
    replay.apply(actions)
    snap = replay.snapshot("t", 0, 0)
    a, c = snap.files_by_path["a b.parquet"], snap.files_by_path["c.parquet"]
    assert a.partition_values == {"p": None} and a.extra == {"baseRowId": 42}
    assert a.data_change is False and a.stats is None
    assert c.partition_values == {} and c.extra == {"clusteringProvider": "liquid"}
    assert c.num_records == 1
    assert snap.metadata.configuration == {"k": "v"}
    assert snap.txn_version("app") == 3
    assert snap.domains == {"d1": {"domain": "d1", "configuration": "{}", "removed": False}}
    assert any(isinstance(x, UnknownAction) for x in actions)
    assert any(isinstance(x, SetTransaction) for x in actions)
