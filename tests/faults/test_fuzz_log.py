"""Fuzzing the log reader: commit files, checkpoints and ``_last_checkpoint`` replaced by random
bytes, cut short, bit-flipped, or rewritten as well-formed JSON / parquet with wrong contents.
Reading the table (any version, history, time travel) and starting a commit either works or
raises a :class:`~sqlext.errors.SqlextError` whose message names the table; a failure writes
nothing."""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sqlext.errors import SqlextError
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import append, clear_caches, create_table, log_bytes

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=12)
ACTION_KEYS = ["add", "remove", "metaData", "protocol", "commitInfo", "txn", "cdc",
               "domainMetadata", "checkpointMetadata", "sidecar"]
FIELD_NAMES = ["path", "size", "partitionValues", "modificationTime", "dataChange", "stats",
               "deletionTimestamp", "schemaString", "partitionColumns", "configuration", "id",
               "minReaderVersion", "minWriterVersion", "readerFeatures", "writerFeatures",
               "appId", "version", "timestamp", "inCommitTimestamp", "format", "deletionVector"]
actions = st.builds(
    lambda key, fields: {key: fields},
    st.sampled_from(ACTION_KEYS),
    st.dictionaries(st.sampled_from(FIELD_NAMES), json_values, max_size=6)) | json_values


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A table with 7 commits and a checkpoint at version 5 (interval 5)."""
    path = tmp_path_factory.mktemp("fuzz") / "t"
    log = create_table(path, configuration={"delta.checkpointInterval": "5",
                                            "delta.enableChangeDataFeed": "true"})
    for i in range(6):
        append(log, [{"id": i, "name": f"r{i}"}], part="a" if i % 2 else None)
    return path


@contextlib.contextmanager
def _copy(template: Path):
    """A private copy of the template table, removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="sqlext-fuzz-"))
    try:
        shutil.copytree(template, root / "t")
        yield root / "t"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _exercise(path: Path) -> None:
    """Read everything a reader can ask for, then try a commit; failures must be SqlextErrors
    that name the table and leave the log as it was."""
    clear_caches()
    log = DeltaLog(str(path))
    before = log_bytes(path)
    steps = [lambda: log.snapshot(), lambda: log.history(), lambda: log.commit_timestamps(),
             lambda: log.version_at_timestamp(2**40)]
    steps += [lambda v=v: log.snapshot(v) for v in range(0, 8)]
    for step in steps:
        try:
            step()
        except SqlextError as exc:
            assert str(exc).strip(), "an error without a message"
            assert str(path) in str(exc), f"the message does not name the table: {exc}"
        assert log_bytes(path) == before, "a read wrote to the log"
    try:
        log.start_transaction().commit([], "WRITE", {"mode": "Append"})
    except SqlextError as exc:
        assert str(path) in str(exc), f"the message does not name the table: {exc}"
        assert log_bytes(path) == before, "a failed commit wrote to the log"


def _commit(path: Path, version: int) -> Path:
    return path / "_delta_log" / f"{version:020d}.json"


@SETTINGS
@given(version=st.integers(0, 6), data=st.binary(max_size=300))
def test_commit_replaced_by_random_bytes(template, version, data):
    with _copy(template) as path:
        _commit(path, version).write_bytes(data)
        _exercise(path)


@SETTINGS
@given(version=st.integers(0, 6), cut=st.floats(0, 1), flip=st.integers(0, 10**6),
       bit=st.integers(0, 7))
def test_commit_cut_or_bit_flipped(template, version, cut, flip, bit):
    with _copy(template) as path:
        original = _commit(path, version).read_bytes()
        if flip % 2:
            data = bytearray(original)
            data[flip % len(data)] ^= 1 << bit
            _commit(path, version).write_bytes(bytes(data))
        else:
            _commit(path, version).write_bytes(original[:int(len(original) * cut)])
        _exercise(path)


@SETTINGS
@given(version=st.integers(0, 6), lines=st.lists(actions, min_size=1, max_size=4),
       keep=st.booleans())
# found by this test: names that replay uses as dict keys, and schemas that are not schemas
@example(version=3, lines=[{"txn": {"appId": ["a"], "version": 1}}], keep=True)
@example(version=3, lines=[{"domainMetadata": {"domain": ["x"], "removed": False}}], keep=True)
@example(version=2, lines=[{"metaData": {"id": "x", "schemaString": "not json",
                                         "partitionColumns": []}}], keep=True)
@example(version=2, lines=[{"metaData": {"id": "x", "schemaString": '{"fields": 5}',
                                         "partitionColumns": []}}], keep=True)
def test_commit_with_wrong_but_wellformed_json(template, version, lines, keep):
    with _copy(template) as path:
        original = _commit(path, version).read_text().splitlines() if keep else []
        text = "\n".join(original + [json.dumps(line) for line in lines]) + "\n"
        _commit(path, version).write_text(text)
        _exercise(path)


@SETTINGS
@given(kind=st.sampled_from(["bytes", "cut", "other-parquet"]), data=st.binary(max_size=200),
       cut=st.floats(0, 1), columns=st.lists(st.sampled_from(ACTION_KEYS), max_size=3,
                                             unique=True))
def test_corrupt_checkpoint(template, kind, data, cut, columns):
    with _copy(template) as path:
        checkpoint = path / "_delta_log" / f"{5:020d}.checkpoint.parquet"
        if kind == "bytes":
            checkpoint.write_bytes(data)
        elif kind == "cut":
            checkpoint.write_bytes(checkpoint.read_bytes()[:int(checkpoint.stat().st_size * cut)])
        else:
            pq.write_table(pa.table({c: pa.array([str(data)] * 2) for c in columns or ["x"]}),
                           checkpoint)
        _exercise(path)
        # with its commits still there, the table reads as before, through them
        clear_caches()
        assert len(DeltaLog(str(path)).snapshot().files_by_path) == 6


@SETTINGS
@given(content=st.one_of(st.binary(max_size=100),
                         json_values.map(lambda v: json.dumps(v).encode()),
                         st.integers(-5, 10**12).map(
                             lambda v: json.dumps({"version": v, "size": 3}).encode())))
def test_corrupt_last_checkpoint(template, content):
    with _copy(template) as path:
        (path / "_delta_log" / "_last_checkpoint").write_bytes(content)
        _exercise(path)
        clear_caches()
        assert len(DeltaLog(str(path)).snapshot().files_by_path) == 6


@SETTINGS
@given(data=st.binary(max_size=200))
def test_log_starting_at_a_corrupt_checkpoint(template, data):
    with _copy(template) as path:
        for v in range(0, 5):
            _commit(path, v).unlink()
        (path / "_delta_log" / f"{5:020d}.checkpoint.parquet").write_bytes(data)
        _exercise(path)
