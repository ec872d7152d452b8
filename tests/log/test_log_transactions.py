"""Transactions on tables built with the kernel alone: commits, checkpoints other engines read,
conflicts in Delta's order with the loser leaving the table unchanged, isolation levels, and
concurrent OS processes."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sqlext.errors import (ConcurrentAppendException, ConcurrentDeleteDeleteException,
                           ConcurrentDeleteReadException, ConcurrentModificationException,
                           ConcurrentTransactionException, MetadataChangedException,
                           ProtocolChangedException, SqlextError, UnsupportedOperationError)
from sqlext.log.actions import Metadata, Protocol, SetTransaction, UnknownAction
from sqlext.log.conflicts import SERIALIZABLE, WRITE_SERIALIZABLE
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import Transaction
from tests.support.kernel_tables import (SCHEMA, append, clear_caches, create_table, log_bytes,
                                         log_files, write_file)
from tests.support.compare import assert_same_rows as _assert_same_rows
from tests.support.readers import read_deltalake, read_duckdb


pytestmark = pytest.mark.usefixtures("fresh_caches")     # kernel caches cleared around each test


def assert_same_rows(actual, expected: list[dict], columns):
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("part", pa.string())])
    _assert_same_rows(actual, pa.Table.from_pylist(expected, schema=schema), columns=columns)


# --- commits and checkpoints, read by deltalake and DuckDB ----------------------------------------

def test_commits_and_checkpoints_are_read_by_deltalake_and_duckdb(tmp_path):
    path = tmp_path / "t"
    log = create_table(path)
    expected_by_version = {0: []}
    written: list[dict] = []
    for v in range(1, 24):
        rows = [{"id": v * 10 + k, "name": f"n{v}-{k}", "part": ["a", "b", None][v % 3]}
                for k in range(2)]
        assert append(log, [{"id": r["id"], "name": r["name"]} for r in rows],
                      part=rows[0]["part"]) == v
        written += rows
        expected_by_version[v] = list(written)
    names = log_files(path)
    assert f"{10:020d}.checkpoint.parquet" in names and f"{20:020d}.checkpoint.parquet" in names
    assert [n for n in names if n.endswith(".parquet")] == [
        f"{10:020d}.checkpoint.parquet", f"{20:020d}.checkpoint.parquet"]
    assert json.loads((path / "_delta_log" / "_last_checkpoint").read_text())["version"] == 20
    assert not [n for n in names if n.startswith(".")], "no temporary files left behind"
    # a delete of one file, then a checkpoint must carry the tombstone
    snap = log.snapshot()
    victim = next(f for f in snap.files if f.partition_values["part"] is None)
    txn = log.start_transaction()
    txn.read_files([victim])
    assert txn.commit([victim.remove(1)], "DELETE") == 24
    victim_version = _version_of(victim, log)
    expected_by_version[24] = [r for r in written if r["id"] // 10 != victim_version]
    for v in (0, 1, 9, 10, 11, 20, 23, 24):
        want = expected_by_version[v]
        cols = ["id", "name", "part"]
        if want:
            assert_same_rows(read_deltalake(path, v), want, columns=cols)
            assert_same_rows(read_duckdb(path, v), want, columns=cols)
        else:
            assert read_deltalake(path, v).num_rows == 0
    # a fresh kernel replay agrees with the checkpoint written for version 20
    clear_caches()
    snap20 = DeltaLog(str(path)).snapshot(20)
    assert snap20.checkpoint_version == 20 and len(snap20.files) == 20
    cp = pq.read_table(path / "_delta_log" / f"{20:020d}.checkpoint.parquet").to_pylist()
    adds = [r["add"] for r in cp if r["add"]]
    assert len(adds) == 20 and all(a["dataChange"] is False for a in adds)
    assert all(json.loads(a["stats"])["numRecords"] == 2 for a in adds)


def _version_of(add, log) -> int:
    for v in range(1, log.latest_version() + 1):
        if any(getattr(a, "path", None) == add.path for a in log.read_commit(v)):
            return v
    raise AssertionError(add.path)


def test_checkpoint_interval_property_and_state_kept(tmp_path):
    path = tmp_path / "t"
    log = create_table(path, configuration={"delta.checkpointInterval": "3",
                                            "delta.enableChangeDataFeed": "true"})
    append(log, [{"id": 1, "name": "a"}])
    txn = log.start_transaction()
    txn.commit([SetTransaction("stream-1", 5, 1),
                UnknownAction("domainMetadata", {"domain": "my.domain", "configuration": "{\"x\":1}",
                                                 "removed": False})], "STREAMING UPDATE")
    victim = log.snapshot().files[0]
    assert log.start_transaction().commit([victim.remove(2**62)], "DELETE") == 3
    names = log_files(path)
    assert f"{3:020d}.checkpoint.parquet" in names
    assert f"{10:020d}.checkpoint.parquet" not in names
    clear_caches()
    snap = DeltaLog(str(path)).snapshot()
    assert snap.checkpoint_version == 3
    assert snap.txn_version("stream-1") == 5
    assert snap.domains["my.domain"]["configuration"] == "{\"x\":1}"
    assert victim.path in {r.path for r in snap.tombstones.values()}   # within retention
    assert snap.files == []
    assert snap.protocol.min_writer_version == 4
    assert snap.metadata.configuration["delta.checkpointInterval"] == "3"
    for v in range(4, 7):
        append(log, [{"id": v, "name": "x"}])
    assert f"{6:020d}.checkpoint.parquet" in log_files(path)


def test_commit_info_and_actions_on_disk(tmp_path):
    path = tmp_path / "t"
    log = create_table(path)
    add = write_file(log, [{"id": 1, "name": "x"}], partition_values={"part": "a b"})
    assert add.path.startswith("part=a%20b/")                    # URI-encoded in the log
    txn = log.start_transaction()
    v = txn.commit([add], "WRITE", {"mode": "Append", "partitionBy": ["part"]},
                   {"numFiles": 1, "numOutputRows": 1}, user_metadata="hello")
    lines = [json.loads(x) for x in (path / "_delta_log" / f"{v:020d}.json").read_text().splitlines()]
    info = lines[0]["commitInfo"]
    assert info["operation"] == "WRITE" and info["readVersion"] == 0
    assert info["operationParameters"] == {"mode": "Append", "partitionBy": '["part"]'}
    assert info["operationMetrics"] == {"numFiles": "1", "numOutputRows": "1"}
    assert info["isBlindAppend"] is True and info["userMetadata"] == "hello"
    assert info["isolationLevel"] == SERIALIZABLE
    assert info["engineInfo"].startswith("sqlext/")
    assert lines[1]["add"]["path"] == add.path
    with pytest.raises(SqlextError, match="already committed"):
        txn.commit([], "WRITE")


def test_creating_a_table_needs_protocol_and_metadata(tmp_path):
    txn = DeltaLog(str(tmp_path / "t")).start_transaction()
    assert txn.snapshot is None and txn.read_version == -1
    with pytest.raises(SqlextError, match="protocol and metadata"):
        txn.commit([], "CREATE TABLE")


def test_append_only_table_refuses_removes(tmp_path):
    log = create_table(tmp_path / "t", configuration={"delta.appendOnly": "true"})
    append(log, [{"id": 1, "name": "x"}])
    before = log_bytes(log.location)
    f = log.snapshot().files[0]
    with pytest.raises(UnsupportedOperationError, match="append-only"):
        log.start_transaction().commit([f.remove(1)], "DELETE")
    assert log_bytes(log.location) == before
    compacted = dataclasses.replace(write_file(log, [{"id": 1, "name": "x"}],
                                               partition_values={"part": "a"}), data_change=False)
    assert log.start_transaction().commit([f.remove(1, data_change=False), compacted],
                                          "OPTIMIZE") == 2      # compaction is allowed


def test_unknown_isolation_level(tmp_path):
    log = create_table(tmp_path / "t")
    with pytest.raises(SqlextError, match="isolation level"):
        log.start_transaction(isolation_level="ReadCommitted")


def test_recreated_table_at_the_same_path_is_not_served_from_cache(tmp_path):
    path = tmp_path / "t"
    log = create_table(path)
    for i in range(3):
        append(log, [{"id": i, "name": "old"}])
    assert len(log.snapshot().files) == 3
    old_id = log.snapshot().metadata.id
    shutil.rmtree(path)
    log2 = create_table(path, partition_columns=())
    for i in range(4):
        add = write_file(log2, [{"id": i, "name": "new", "part": "z"}], partition_columns=())
        log2.start_transaction().commit([add], "WRITE")
    snap = DeltaLog(str(path)).snapshot()          # caches still hold the old table's versions
    assert snap.metadata.id != old_id and snap.partition_columns == []
    assert len(snap.files) == 4 and all(f.partition_values == {} for f in snap.files)
    assert DeltaLog(str(path)).snapshot(2).metadata.id == snap.metadata.id
    assert len(DeltaLog(str(path)).snapshot(2).files) == 2


# --- conflicts --------------------------------------------------------------------------------------

@pytest.fixture
def table(tmp_path):
    """A table with one file in partition a and one in b (versions 0-2)."""
    log = create_table(tmp_path / "t")
    append(log, [{"id": 1, "name": "a1"}], part="a")
    append(log, [{"id": 2, "name": "b1"}], part="b")
    return log


def _file_in(log, part):
    return next(f for f in log.snapshot().files if f.partition_values["part"] == part)


def _lose(log, loser: Transaction, actions, exc_type, operation="DELETE"):
    """Commit ``loser`` after a winner; assert the exception and that nothing changed."""
    before = log_bytes(log.location)
    latest = log.latest_version()
    with pytest.raises(exc_type) as err:
        loser.commit(actions, operation)
    assert log_bytes(log.location) == before, "the loser must leave the table unchanged"
    assert log.latest_version() == latest and loser.committed_version is None
    msg = str(err.value)
    assert log.location in msg and f"version {latest}" in msg
    assert isinstance(err.value, ConcurrentModificationException)
    return msg


def test_concurrent_append_into_what_was_read(table):
    log = table
    loser = log.start_transaction(isolation_level=SERIALIZABLE)
    loser.read_predicate("part = 'a'")
    loser.read_files([_file_in(log, "a")])
    append(log, [{"id": 3, "name": "a2"}], part="a")                       # winner: version 3
    msg = _lose(log, loser, [_file_in(log, "a").remove(1)], ConcurrentAppendException)
    assert "part = 'a'" in msg and "WRITE" in msg


def test_concurrent_append_elsewhere_lets_the_loser_retry(table):
    log = table
    txn = log.start_transaction(isolation_level=SERIALIZABLE)
    txn.read_predicate("part = 'a'")
    victim = _file_in(log, "a")
    txn.read_files([victim])
    append(log, [{"id": 3, "name": "b2"}], part="b")                       # version 3
    append(log, [{"id": 4, "name": "n"}], part=None)                       # version 4
    assert txn.commit([victim.remove(1)], "DELETE") == 5
    assert txn.attempts == 2
    info = log.commit_info(5).values
    assert info["readVersion"] == 2 and info["isBlindAppend"] is False
    assert sorted(f.partition_values["part"] or "-" for f in log.snapshot().files) == ["-", "b", "b"]


def test_concurrent_append_by_stats_not_by_partition(table):
    log = table
    loser = log.start_transaction(isolation_level=SERIALIZABLE)
    loser.read_predicate("id > 100")
    loser.read_files([])
    append(log, [{"id": 50, "name": "low"}], part="a")            # stats say no row > 100
    assert loser.commit([], "UPDATE") == 4
    loser = log.start_transaction(isolation_level=SERIALIZABLE)
    loser.read_predicate("id > 100")
    append(log, [{"id": 150, "name": "high"}], part="b")
    _lose(log, loser, [], ConcurrentAppendException, "UPDATE")


def test_concurrent_delete_read(table):
    log = table
    victim = _file_in(log, "a")
    loser = log.start_transaction()
    loser.read_predicate("id = 1")
    loser.read_files([victim])
    winner = log.start_transaction()
    winner.read_files([victim])
    winner.commit([victim.remove(1)], "DELETE")
    new = write_file(log, [{"id": 1, "name": "updated"}], partition_values={"part": "a"})
    msg = _lose(log, loser, [victim.remove(2), new], ConcurrentDeleteReadException, "UPDATE")
    assert victim.path in msg or victim.path.replace("%", "") in msg


def test_concurrent_delete_after_a_whole_table_read(table):
    log = table
    loser = log.start_transaction()
    loser.read_whole_table()
    b = _file_in(log, "b")
    log.start_transaction().commit([b.remove(1)], "DELETE")
    _lose(log, loser, [], ConcurrentDeleteReadException, "OPTIMIZE")


def test_concurrent_delete_delete(table):
    log = table
    victim = _file_in(log, "a")
    loser = log.start_transaction()
    loser.read_predicate("part = 'a'")               # a partition-only delete: no files read
    winner = log.start_transaction()
    winner.read_predicate("part = 'a'")
    winner.commit([victim.remove(1)], "DELETE")
    _lose(log, loser, [victim.remove(2)], ConcurrentDeleteDeleteException)


def test_metadata_changed(table):
    log = table
    loser = log.start_transaction()
    snap = log.snapshot()
    md = Metadata.from_dict(snap.metadata.to_dict())
    md.configuration = {**md.configuration, "delta.appendOnly": "false"}
    winner = log.start_transaction()
    winner.update_metadata(md)
    winner.commit([], "SET TBLPROPERTIES")
    add = write_file(log, [{"id": 9, "name": "x"}], partition_values={"part": "a"})
    _lose(log, loser, [add], MetadataChangedException, "WRITE")         # even a blind append


def test_protocol_changed(table):
    log = table
    loser = log.start_transaction()
    winner = log.start_transaction()
    winner.update_protocol(Protocol(1, 7, None, ["appendOnly", "changeDataFeed"]))
    winner.commit([], "UPGRADE PROTOCOL")
    add = write_file(log, [{"id": 9, "name": "x"}], partition_values={"part": "a"})
    _lose(log, loser, [add], ProtocolChangedException, "WRITE")


def test_concurrent_table_creation(tmp_path):
    log = DeltaLog(str(tmp_path / "t"))
    loser = log.start_transaction()
    create_table(tmp_path / "t")
    loser.update_protocol(Protocol(1, 2))
    loser.update_metadata(Metadata.new('{"type":"struct","fields":[]}', [], {}, 1))
    before = log_bytes(log.location)
    with pytest.raises(ProtocolChangedException, match="created the table"):
        loser.commit([], "CREATE TABLE")
    assert log_bytes(log.location) == before


def test_concurrent_transaction_same_app_id(table):
    log = table
    loser = log.start_transaction()
    add1 = write_file(log, [{"id": 9, "name": "x"}], partition_values={"part": "a"})
    add2 = write_file(log, [{"id": 9, "name": "x"}], partition_values={"part": "a"})
    log.start_transaction().commit([SetTransaction("etl", 7, 1), add1], "WRITE")
    msg = _lose(log, loser, [SetTransaction("etl", 7, 2), add2], ConcurrentTransactionException,
                "WRITE")
    assert "etl" in msg
    # other application ids do not conflict
    txn = log.start_transaction()
    log.start_transaction().commit([SetTransaction("etl", 8, 1)], "WRITE")
    assert txn.commit([SetTransaction("other", 1, 1)], "WRITE") == 5
    assert log.snapshot().txn_version("etl") == 8 and log.snapshot().txn_version("other") == 1


def test_conflict_order_protocol_before_metadata_before_files(table):
    log = table
    victim = _file_in(log, "a")
    loser = log.start_transaction()
    loser.read_whole_table()
    loser.read_files([victim])
    winner = log.start_transaction()
    winner.update_protocol(Protocol(1, 4))
    md = Metadata.from_dict(log.snapshot().metadata.to_dict())
    md.description = "changed"
    winner.update_metadata(md)
    winner.commit([victim.remove(1), write_file(log, [{"id": 5, "name": "y"}],
                                                partition_values={"part": "a"})], "UPDATE")
    _lose(log, loser, [victim.remove(2)], ProtocolChangedException)


def test_conflict_found_in_a_later_winner(table):
    log = table
    loser = log.start_transaction(isolation_level=SERIALIZABLE)
    loser.read_predicate("part = 'a'")
    append(log, [{"id": 3, "name": "b"}], part="b")       # harmless
    append(log, [{"id": 4, "name": "a"}], part="a")       # conflicting
    msg = _lose(log, loser, [], ConcurrentAppendException, "UPDATE")
    assert "version 4" in msg


# --- isolation levels ---------------------------------------------------------------------------------

@pytest.mark.parametrize("level", [SERIALIZABLE, WRITE_SERIALIZABLE])
def test_blind_append_ahead_of_a_reader(table, level):
    log = table
    victim = _file_in(log, "a")
    txn = log.start_transaction(isolation_level=level)
    txn.read_predicate("part = 'a'")
    txn.read_files([victim])
    append(log, [{"id": 3, "name": "a2"}], part="a")           # a blind append into what was read
    assert log.commit_info(3).values["isBlindAppend"] is True
    if level == SERIALIZABLE:
        _lose(log, txn, [victim.remove(1)], ConcurrentAppendException)
    else:
        assert txn.commit([victim.remove(1)], "DELETE") == 4
        assert [f.partition_values["part"] for f in log.snapshot().files].count("a") == 1


def test_write_serializable_still_conflicts_with_a_rewrite(table):
    log = table
    txn = log.start_transaction(isolation_level=WRITE_SERIALIZABLE)
    txn.read_predicate("part = 'a'")
    other = log.start_transaction()
    other.read_predicate("part = 'b'")
    b = _file_in(log, "b")
    other.read_files([b])
    # not a blind append: an UPDATE that moves a row into partition a
    other.commit([b.remove(1), write_file(log, [{"id": 2, "name": "moved"}],
                                          partition_values={"part": "a"})], "UPDATE")
    _lose(log, txn, [], ConcurrentAppendException, "UPDATE")


@pytest.mark.parametrize("level", [SERIALIZABLE, WRITE_SERIALIZABLE])
def test_blind_appends_never_conflict(table, level):
    log = table
    txns = [log.start_transaction(isolation_level=level) for _ in range(3)]
    versions = [t.commit([write_file(log, [{"id": 10 + i, "name": "x"}],
                                     partition_values={"part": "a"})], "WRITE")
                for i, t in enumerate(txns)]
    assert versions == [3, 4, 5]
    assert all(log.commit_info(v).values["isBlindAppend"] for v in versions)


def test_table_isolation_level_property(tmp_path):
    log = create_table(tmp_path / "t", configuration={"delta.isolationLevel": WRITE_SERIALIZABLE})
    assert log.start_transaction().isolation_level == WRITE_SERIALIZABLE
    assert log.start_transaction(isolation_level=SERIALIZABLE).isolation_level == SERIALIZABLE
    log2 = create_table(tmp_path / "u")
    assert log2.start_transaction().isolation_level == SERIALIZABLE


# --- concurrent OS processes ------------------------------------------------------------------------

def _appender(path: str, worker: int, commits: int) -> list[int]:
    log = DeltaLog(path)
    versions = []
    for i in range(commits):
        add = write_file(log, [{"id": worker * 1000 + i, "name": f"w{worker}"}],
                         partition_values={"part": f"w{worker}"})
        txn = log.start_transaction()
        versions.append(txn.commit([add], "WRITE", {"mode": "Append"}))
    return versions


def test_four_processes_append_concurrently(tmp_path):
    path = str(tmp_path / "t")
    create_table(path)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        results = pool.starmap(_appender, [(path, w, 25) for w in range(4)])
    all_versions = sorted(v for r in results for v in r)
    assert all_versions == list(range(1, 101))
    clear_caches()
    log = DeltaLog(path)
    snap = log.snapshot()
    assert snap.version == 100 and len(snap.files) == 100
    assert sorted(log.listing().commits) == list(range(101))
    expected = [{"id": w * 1000 + i, "name": f"w{w}", "part": f"w{w}"}
                for w in range(4) for i in range(25)]
    assert_same_rows(read_deltalake(path), expected, columns=["id", "name", "part"])
    assert_same_rows(read_duckdb(path), expected, columns=["id", "name", "part"])
    for v in range(1, 101):                         # every commit is one whole, blind append
        adds = [a for a in log.read_commit(v) if type(a).__name__ == "AddFile"]
        assert len(adds) == 1
    names = os.listdir(os.path.join(path, "_delta_log"))
    assert {f"{v:020d}.checkpoint.parquet" for v in range(10, 101, 10)} <= set(names)
    assert not [n for n in names if n.endswith(".tmp")]
