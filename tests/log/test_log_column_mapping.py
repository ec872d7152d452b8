"""Column mapping in the kernel, without Spark: logical <-> physical names (nested fields too),
partition values and statistics keyed by physical names translated for pruning, each version's
schema deciding the names, and the protocol: reads allowed, writes refused."""

from __future__ import annotations

import json

import pytest

from sqlext.errors import UnsupportedTableFeatureError
from sqlext.log.actions import AddFile, Metadata, Protocol
from sqlext.log.column_mapping import ColumnMapping, mapping_mode, strip_mapping_metadata
from sqlext.log.protocol import (check_readable, check_writable, unsupported_reader_features,
                                 unsupported_writer_features)
from sqlext.log.pruning import Pruner
from sqlext.log.schema import parse_schema


def _field(name, type_, physical, id_, nullable=True):
    return {"name": name, "type": type_, "nullable": nullable,
            "metadata": {"delta.columnMapping.id": id_,
                         "delta.columnMapping.physicalName": physical}}


def _metadata(fields, mode="name", partition_columns=()) -> Metadata:
    return Metadata("id-1", json.dumps({"type": "struct", "fields": fields}),
                    list(partition_columns), {"delta.columnMapping.mode": mode})


# version 1: id, v, s struct<a, b>, part; version 2: v renamed to w, s.a to alpha, part to region
V1 = _metadata([_field("id", "long", "col-id", 1), _field("v", "string", "col-v", 2),
                _field("s", {"type": "struct", "fields": [_field("a", "integer", "col-a", 4),
                                                          _field("b", "string", "col-b", 5)]},
                       "col-s", 3),
                _field("part", "string", "col-part", 6)], partition_columns=["part"])
V2 = _metadata([_field("id", "long", "col-id", 1), _field("w", "string", "col-v", 2),
                _field("s", {"type": "struct", "fields": [_field("alpha", "integer", "col-a", 4),
                                                          _field("b", "string", "col-b", 5)]},
                       "col-s", 3),
                _field("region", "string", "col-part", 6)], partition_columns=["region"])
STATS = json.dumps({"numRecords": 10,
                    "minValues": {"col-id": 100, "col-v": "m", "col-s": {"col-a": 5, "col-b": "b"},
                                  "col-gone": 1},
                    "maxValues": {"col-id": 199, "col-v": "q", "col-s": {"col-a": 9, "col-b": "c"},
                                  "col-gone": 2},
                    "nullCount": {"col-id": 0, "col-v": 3, "col-s": {"col-a": 0, "col-b": 0}},
                    "tightBounds": True})
FILE = AddFile("ab/part-0.parquet", {"col-part": "p1"}, 1, 1, True, STATS)


def test_names_follow_each_versions_schema():
    m1, m2 = ColumnMapping.of(V1), ColumnMapping.of(V2)
    assert m1.physical_name("V") == "col-v" and m2.physical_name("w") == "col-v"
    assert m2.physical_name("v") == "v"             # no such column at version 2
    assert m1.logical_name("col-v") == "v" and m2.logical_name("COL-V") == "w"
    assert m2.logical_name("col-dropped") is None
    assert m1.logical_partition_values(FILE.partition_values) == {"part": "p1"}
    assert m2.logical_partition_values({"col-part": None, "other": "x"}) == {"region": None,
                                                                            "other": "x"}
    stats = m2.logical_stats(json.loads(STATS))
    assert stats["minValues"] == {"id": 100, "w": "m", "s": {"alpha": 5, "b": "b"}}
    assert stats["maxValues"]["s"] == {"alpha": 9, "b": "c"}
    assert stats["nullCount"] == {"id": 0, "w": 3, "s": {"alpha": 0, "b": 0}}
    assert stats["numRecords"] == 10 and stats["tightBounds"] is True
    assert strip_mapping_metadata(parse_schema(V1.schema_string)[0].metadata) == {}


def test_modes():
    assert ColumnMapping.of(_metadata([], mode="none")) is None
    assert ColumnMapping.of(Metadata("x", '{"type":"struct","fields":[]}', [], {})) is None
    assert mapping_mode(_metadata([], mode="ID")) == "id"
    assert ColumnMapping.of(_metadata([], mode="id")).mode == "id"


@pytest.mark.parametrize("predicate, metadata, keeps", [
    ("id >= 150", V1, True), ("id > 199", V1, False), ("id < 100", V2, False),
    ("w = 'z'", V2, False), ("w = 'n'", V2, True), ("w IS NULL", V2, True), ("id IS NULL", V2, False),
    ("v > 'q'", V1, False), ("part = 'p1'", V1, True), ("part = 'p2'", V1, False),
    ("region = 'p2'", V2, False), ("region IS NULL", V2, False), ("region = 'p1'", V2, True),
])
def test_pruning_by_physical_stats_and_partition_values(predicate, metadata, keeps):
    pruner = Pruner(predicate, parse_schema(metadata.schema_string), metadata.partition_columns,
                    ColumnMapping.of(metadata))
    assert pruner.might_match(FILE) is keeps


def test_without_the_mapping_physical_keys_are_not_read_as_names():
    # what the mapping prevents: a physical key is no column, so nothing prunes by stats
    pruner = Pruner("id > 199", parse_schema(V1.schema_string), V1.partition_columns)
    assert pruner.might_match(FILE) is True


@pytest.mark.parametrize("protocol", [
    Protocol(2, 5), Protocol(3, 7, ["columnMapping"], ["columnMapping", "changeDataFeed"])])
def test_protocol_reads_but_does_not_write(protocol):
    assert unsupported_reader_features(protocol, V1) == []
    check_readable("t", 3, protocol, V1)
    assert unsupported_writer_features(protocol, V1) == ["columnMapping"]
    with pytest.raises(UnsupportedTableFeatureError, match="does not write them yet") as raised:
        check_writable("t", 3, protocol, V1)
    assert "table t at version 3" in str(raised.value)
    # column mapping listed but its mode none: nothing to honour
    assert unsupported_writer_features(protocol, _metadata([], mode="none")) == []


def test_unknown_mode_is_refused():
    with pytest.raises(UnsupportedTableFeatureError, match="columnMapping .mode future"):
        check_readable("t", 0, Protocol(2, 5), _metadata([], mode="future"))
