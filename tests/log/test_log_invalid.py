"""Invalid logs are refused with the right SqlextError subclass and a message naming table and
version; nothing is guessed."""

from __future__ import annotations

import json
import os

import pytest

from sqlext.errors import (CorruptLogError, SqlextError, TableNotFoundError,
                           UnsupportedTableFeatureError, VersionNotFoundException)
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import append, clear_caches, create_table


pytestmark = pytest.mark.usefixtures("fresh_caches")     # kernel caches cleared around each test


def _commit(path, version: int) -> str:
    return os.path.join(str(path), "_delta_log", f"{version:020d}.json")


def _table(tmp_path, commits: int = 4):
    log = create_table(tmp_path / "t")
    for i in range(commits):
        append(log, [{"id": i, "name": "x"}])
    clear_caches()
    return DeltaLog(log.location)


def test_no_delta_log(tmp_path):
    (tmp_path / "plain").mkdir()
    for where in (tmp_path / "plain", tmp_path / "missing"):
        with pytest.raises(TableNotFoundError) as err:
            DeltaLog(str(where)).snapshot()
        assert str(where) in str(err.value) and "not a Delta table" in str(err.value)
    assert not DeltaLog(str(tmp_path / "plain")).exists()


def test_empty_delta_log(tmp_path):
    (tmp_path / "t" / "_delta_log").mkdir(parents=True)
    (tmp_path / "t" / "_delta_log" / "_last_checkpoint").write_text('{"version": 3}')
    with pytest.raises(TableNotFoundError, match="not a Delta table"):
        DeltaLog(str(tmp_path / "t")).snapshot()


def test_gap_in_versions(tmp_path):
    log = _table(tmp_path)
    os.unlink(_commit(log.location, 2))
    with pytest.raises(CorruptLogError) as err:
        log.snapshot()
    msg = str(err.value)
    assert log.location in msg and "[2]" in msg and "version 4" in msg and "not contiguous" in msg
    assert isinstance(err.value, SqlextError)
    with pytest.raises(CorruptLogError, match="version 3"):
        log.snapshot(3)
    assert len(log.snapshot(1).files) == 1          # versions before the gap are intact


def test_gap_after_a_checkpoint(tmp_path):
    log = _table(tmp_path, commits=13)
    assert os.path.exists(os.path.join(log.log_dir, f"{10:020d}.checkpoint.parquet"))
    os.unlink(_commit(log.location, 12))
    with pytest.raises(CorruptLogError, match=r"\[12\]"):
        log.snapshot()
    assert log.snapshot(11).version == 11


def test_missing_first_commit_without_checkpoint(tmp_path):
    log = _table(tmp_path)
    os.unlink(_commit(log.location, 0))
    with pytest.raises(VersionNotFoundException) as err:
        log.snapshot()
    assert log.location in str(err.value) and "version 4" in str(err.value)


@pytest.mark.parametrize("missing", ["protocol", "metaData"])
def test_no_protocol_or_metadata(tmp_path, missing):
    log = _table(tmp_path, commits=1)
    path = _commit(log.location, 0)
    lines = [x for x in open(path).read().splitlines() if missing not in json.loads(x)]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    with pytest.raises(CorruptLogError) as err:
        log.snapshot()
    msg = str(err.value)
    assert log.location in msg and "version 1" in msg and missing in msg


@pytest.mark.parametrize("content", [b'{"add": {"path": "x"', b"garbage\n", b'{"add": {}}\n',
                                     b'{"txn": {"appId": "a"}}\n', b"[1, 2]\n",
                                     b'{"add": {"path": "a"}, "remove": {"path": "a"}}\n',
                                     b"\xff\xfe\x00"])
def test_corrupt_commit_json(tmp_path, content):
    log = _table(tmp_path)
    with open(_commit(log.location, 3), "wb") as f:
        f.write(content)
    with pytest.raises(CorruptLogError) as err:
        log.snapshot()
    msg = str(err.value)
    assert log.location in msg and "version 3" in msg and "corrupt" in msg
    assert len(log.snapshot(2).files) == 2


def test_corrupt_commit_is_not_hidden_by_a_checkpoint_before_it(tmp_path):
    log = _table(tmp_path, commits=12)
    with open(_commit(log.location, 11), "w") as f:
        f.write("{oops")
    with pytest.raises(CorruptLogError, match="version 11"):
        log.snapshot()
    assert log.snapshot(10).checkpoint_version == 10


def test_version_out_of_range(tmp_path):
    log = _table(tmp_path)
    for v in (5, 100, -1):
        with pytest.raises(VersionNotFoundException) as err:
            log.snapshot(v)
        assert f"version {v}" in str(err.value) and log.location in str(err.value)
        assert "0..4" in str(err.value)


def test_unknown_reader_version_and_feature(tmp_path):
    log = _table(tmp_path, commits=0)
    path = _commit(log.location, 0)
    lines = open(path).read().splitlines()

    def rewrite(protocol):
        out = [json.dumps({"protocol": protocol}) if "protocol" in json.loads(x) else x
               for x in lines]
        with open(path, "w") as f:
            f.write("\n".join(out) + "\n")
        clear_caches()

    rewrite({"minReaderVersion": 4, "minWriterVersion": 7})
    with pytest.raises(UnsupportedTableFeatureError, match="readerVersion4"):
        log.snapshot()
    rewrite({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["vorder", "timestampNtz"],
             "writerFeatures": ["vorder", "timestampNtz"]})
    with pytest.raises(UnsupportedTableFeatureError) as err:
        log.snapshot()
    assert "vorder" in str(err.value) and "timestampNtz" not in str(err.value).split("feature(s)")[1].split("(")[0]
    rewrite({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["timestampNtz"],
             "writerFeatures": ["timestampNtz"]})
    assert log.snapshot().version == 0
    assert log.snapshot(check_protocol=False).version == 0


def test_column_mapping_id_mode_is_read_not_written(tmp_path):
    log = _table(tmp_path, commits=0)
    path = _commit(log.location, 0)
    out = []
    for line in open(path).read().splitlines():
        obj = json.loads(line)
        if "protocol" in obj:
            obj = {"protocol": {"minReaderVersion": 2, "minWriterVersion": 5}}
        if "metaData" in obj:
            obj["metaData"]["configuration"]["delta.columnMapping.mode"] = "id"
        out.append(json.dumps(obj))
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    clear_caches()
    assert log.snapshot().version == 0       # read (tests/log/test_log_column_mapping.py)
    with pytest.raises(UnsupportedTableFeatureError, match="columnMapping .mode id"):
        append(log, [{"id": 9, "name": "y"}])
    assert log.snapshot().version == 0
