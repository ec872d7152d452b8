"""Actions: parse and serialize commit lines as PROTOCOL.md says, keeping what is not understood."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sqlext.log.actions import (AddCDCFile, AddFile, CommitInfo, Metadata, Protocol, RemoveFile,
                                SetTransaction, UnknownAction, action_from_json_obj,
                                action_to_json_obj, decode_path, encode_path, parse_commit,
                                serialize_commit)

ADD = {"path": "part=a/file%20one.parquet", "partitionValues": {"part": "a", "n": None},
       "size": 123, "modificationTime": 1700000000000, "dataChange": True,
       "stats": '{"numRecords":3,"minValues":{"id":1},"maxValues":{"id":3},"nullCount":{"id":0}}',
       "tags": {"INSERTION_TIME": "1700000000000000"}}
REMOVE = {"path": "part=a/file%20one.parquet", "deletionTimestamp": 1700000000001,
          "dataChange": True, "extendedFileMetadata": True, "partitionValues": {"part": "a"},
          "size": 123}
METADATA = {"id": "3b1c0c2a-0000-4000-8000-000000000000", "name": "t", "description": "d",
            "format": {"provider": "parquet", "options": {}},
            "schemaString": '{"type":"struct","fields":[]}', "partitionColumns": ["part"],
            "configuration": {"delta.enableChangeDataFeed": "true"}, "createdTime": 1700000000000}
PROTOCOL = {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["timestampNtz"],
            "writerFeatures": ["timestampNtz", "appendOnly"]}
TXN = {"appId": "app-1", "version": 7, "lastUpdated": 1700000000000}
CDC = {"path": "_change_data/cdc-00000.snappy.parquet", "partitionValues": {}, "size": 9,
       "dataChange": False}
COMMIT_INFO = {"timestamp": 1700000000000, "operation": "WRITE",
               "operationParameters": {"mode": "Append"}, "isBlindAppend": True,
               "engineInfo": "Apache-Spark/3.5.0 Delta-Lake/3.1.0", "txnId": "x"}

ALL = [("add", ADD, AddFile), ("remove", REMOVE, RemoveFile), ("metaData", METADATA, Metadata),
       ("protocol", PROTOCOL, Protocol), ("txn", TXN, SetTransaction), ("cdc", CDC, AddCDCFile),
       ("commitInfo", COMMIT_INFO, CommitInfo)]


@pytest.mark.parametrize("key,value,cls", ALL, ids=[k for k, _, _ in ALL])
def test_round_trip_is_exact(key, value, cls):
    action = action_from_json_obj({key: value})
    assert type(action) is cls
    assert action_to_json_obj(action) == {key: value}


@pytest.mark.parametrize("key,value,cls", ALL, ids=[k for k, _, _ in ALL])
def test_unknown_fields_survive_a_round_trip(key, value, cls):
    extended = {**value, "futureField": {"nested": [1, 2, {"x": None}]}, "rowIdHighWater": 17}
    action = action_from_json_obj({key: extended})
    out = action_to_json_obj(action)[key]
    assert out["futureField"] == {"nested": [1, 2, {"x": None}]}
    assert out["rowIdHighWater"] == 17
    assert out == extended


def test_unknown_action_types_are_preserved_verbatim():
    lines = [{"domainMetadata": {"domain": "delta.rowTracking", "configuration": "{}",
                                 "removed": False}},
             {"checkpointMetadata": {"version": 3, "tags": None}},
             {"sidecar": {"path": "x.parquet", "sizeInBytes": 1, "modificationTime": 2}},
             {"add": None}]
    data = "\n".join(json.dumps(x) for x in lines)
    actions = parse_commit(data)
    assert all(isinstance(a, UnknownAction) for a in actions)
    assert [a.key for a in actions] == ["domainMetadata", "checkpointMetadata", "sidecar", "add"]
    again = parse_commit(serialize_commit(actions))
    assert [action_to_json_obj(a) for a in again] == lines


def test_commit_file_round_trip_keeps_order_and_types():
    lines = [{"commitInfo": COMMIT_INFO}, {"protocol": PROTOCOL}, {"metaData": METADATA},
             {"add": ADD}, {"remove": REMOVE}, {"cdc": CDC}, {"txn": TXN},
             {"mysteryAction": {"a": 1}}]
    data = ("\n".join(json.dumps(x) for x in lines) + "\n").encode()
    actions = parse_commit(data)
    assert [type(a).__name__ for a in actions] == [
        "CommitInfo", "Protocol", "Metadata", "AddFile", "RemoveFile", "AddCDCFile",
        "SetTransaction", "UnknownAction"]
    out = serialize_commit(actions)
    assert out.endswith(b"\n") and b"\n\n" not in out
    assert [json.loads(x) for x in out.decode().splitlines()] == lines


def test_parse_commit_skips_blank_lines_and_accepts_crlf():
    data = b'{"txn":{"appId":"a","version":1}}\r\n\r\n{"txn":{"appId":"b","version":2}}\r\n'
    assert [a.app_id for a in parse_commit(data)] == ["a", "b"]


def test_typed_fields_and_defaults():
    add = AddFile.from_dict({"path": "f.parquet", "partitionValues": {}, "size": "10",
                             "modificationTime": 5, "dataChange": False})
    assert add.size == 10 and add.data_change is False and add.stats is None
    assert add.num_records is None
    add.stats = '{"numRecords": 42}'
    assert add.num_records == 42
    add.stats = "not json"
    assert add.parsed_stats() is None
    rm = RemoveFile.from_dict({"path": "f.parquet"})
    assert rm.data_change is True and rm.partition_values is None
    assert rm.to_dict() == {"path": "f.parquet", "dataChange": True}
    p = Protocol.from_dict({"minReaderVersion": 1, "minWriterVersion": 2})
    assert p.to_dict() == {"minReaderVersion": 1, "minWriterVersion": 2}
    md = Metadata.from_dict({"id": "x", "schemaString": "{}", "format": {"provider": "parquet"}})
    assert md.partition_columns == [] and md.configuration == {}
    assert CommitInfo.from_dict({"inCommitTimestamp": 5, "timestamp": 4}).in_commit_timestamp == 5


def test_remove_of_an_add_keeps_the_path_byte_for_byte():
    add = AddFile.from_dict(ADD)
    rm = add.remove(1700000000999)
    d = rm.to_dict()
    assert d["path"] == ADD["path"]
    assert d["extendedFileMetadata"] is True and d["dataChange"] is True
    assert d["partitionValues"] == ADD["partitionValues"] and d["size"] == 123
    assert add.remove(1, data_change=False).data_change is False


def test_metadata_new_gets_a_fresh_id():
    a = Metadata.new("{}", ["p"], {}, 1)
    b = Metadata.new("{}", ["p"], {}, 1)
    assert a.id != b.id and a.partition_columns == ["p"]
    assert a.to_dict()["format"] == {"provider": "parquet", "options": {}}


@pytest.mark.parametrize("bad", ["[1]", '{"a":1,"b":2}', '"text"', "{not json"])
def test_malformed_lines_raise_value_error(bad):
    with pytest.raises(ValueError):
        parse_commit(bad)


def test_non_ascii_is_written_as_utf8():
    add = AddFile("p=%C3%A9t%C3%A9/f.parquet", {"p": "été ☃"}, 1, 1)
    data = serialize_commit([add])
    assert "été ☃".encode() in data
    assert parse_commit(data)[0].partition_values == {"p": "été ☃"}


# --- paths ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw,encoded", [
    ("part-0000.parquet", "part-0000.parquet"),
    ("x=A%2FA/f.parquet", "x=A%252FA/f.parquet"),          # escaped directory, as delta-spark
    ("x=B B/f.parquet", "x=B%20B/f.parquet"),
    ("d=2021-01-01 10:00:00/f.parquet", "d=2021-01-01%2010:00:00/f.parquet"),
    ("s=été/f.parquet", "s=%C3%A9t%C3%A9/f.parquet"),
    ("a=x#y?z/f.parquet", "a=x%23y%3Fz/f.parquet"),
    ("p=__HIVE_DEFAULT_PARTITION__/f.parquet", "p=__HIVE_DEFAULT_PARTITION__/f.parquet"),
])
def test_uri_encoded_paths(raw, encoded):
    assert encode_path(raw) == encoded
    assert decode_path(encoded) == raw


def test_decode_handles_absolute_uris():
    assert decode_path("s3://bucket/t/a%20b.parquet") == "s3://bucket/t/a b.parquet"
    assert decode_path("file:/tmp/t/x%3Dy.parquet") == "file:/tmp/t/x=y.parquet"


def test_kernel_never_imports_pyspark():
    code = ("import sys, importlib, pkgutil, sqlext.log as L\n"
            "for m in pkgutil.iter_modules(L.__path__):\n"
            "    importlib.import_module('sqlext.log.' + m.name)\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(_repo_root()))


def _repo_root():
    from pathlib import Path
    return Path(__file__).resolve().parents[2]
