"""Column mapping in the kernel, without Spark: logical <-> physical names (nested fields too),
partition values and statistics keyed by physical names translated for pruning, each version's
schema deciding the names, and the protocol: reads allowed, writes refused."""

from __future__ import annotations

import json

import pytest

from sqlext.errors import (AnalysisException, UnsupportedOperationError,
                           UnsupportedTableFeatureError)
from sqlext.log.actions import AddFile, Metadata, Protocol
from sqlext.log.column_mapping import (FIELD_ID_KEY, MAX_COLUMN_ID_KEY, PHYSICAL_NAME_KEY,
                                       ColumnMapping, assign_column_mapping, drop_fields,
                                       mapping_mode, rename_field, strip_mapping_metadata)
from sqlext.log.protocol import (check_readable, check_writable, protocol_for_new_table,
                                 unsupported_reader_features, unsupported_writer_features,
                                 upgrade_for_configuration)
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
def test_protocol_reads_both_modes_and_writes_name_mode(protocol):
    assert unsupported_reader_features(protocol, V1) == []
    check_readable("t", 3, protocol, V1)
    assert unsupported_writer_features(protocol, V1) == []
    check_writable("t", 3, protocol, V1)
    ids = _metadata(json.loads(V1.schema_string)["fields"], mode="id")
    assert unsupported_writer_features(protocol, ids) == ["columnMapping (mode id)"]
    with pytest.raises(UnsupportedTableFeatureError, match="'name' mode only") as raised:
        check_writable("t", 3, protocol, ids)
    assert "table t at version 3" in str(raised.value)
    # column mapping listed but its mode none: nothing to honour
    assert unsupported_writer_features(protocol, _metadata([], mode="none")) == []


def test_protocol_upgrade_for_column_mapping():
    """As delta-spark: legacy protocols move to reader 2 / writer 5; a table-features protocol
    lists columnMapping (and a reader-1 one moves to reader 2, a reader-3 one lists it as a
    reader feature too, as delta-spark 4.4 does)."""
    name = {"delta.columnMapping.mode": "name"}
    assert protocol_for_new_table(name) == Protocol(2, 5)
    assert upgrade_for_configuration(Protocol(1, 4), name) == Protocol(2, 5)
    assert upgrade_for_configuration(Protocol(2, 6), name) is None
    assert upgrade_for_configuration(Protocol(1, 7, None, ["changeDataFeed"]), name) == \
        Protocol(2, 7, None, ["changeDataFeed", "columnMapping"])
    dv = Protocol(3, 7, ["deletionVectors"], ["deletionVectors", "invariants"])
    assert upgrade_for_configuration(dv, name) == Protocol(
        3, 7, ["columnMapping", "deletionVectors"], ["columnMapping", "deletionVectors",
                                                     "invariants"])
    assert upgrade_for_configuration(upgrade_for_configuration(dv, name), name) is None


def _plain(fields, conf=None) -> Metadata:
    return Metadata("id-1", json.dumps({"type": "struct", "fields": fields}), [], conf or {})


def test_assigning_ids_and_physical_names():
    nested = {"type": "struct", "fields": [{"name": "a", "type": "integer", "nullable": True,
                                            "metadata": {}}]}
    fields = [{"name": "id", "type": "long", "nullable": True, "metadata": {"comment": "k"}},
              {"name": "l", "type": {"type": "array", "elementType": nested,
                                     "containsNull": True}, "nullable": True, "metadata": {}}]
    old = _plain(fields)
    name = {"delta.columnMapping.mode": "name"}
    # an existing table turning mapping on: its names become the physical names
    upgraded = assign_column_mapping(_plain(fields, name), old)
    got = json.loads(upgraded.schema_string)["fields"]
    assert got[0]["metadata"] == {"comment": "k", FIELD_ID_KEY: 1, PHYSICAL_NAME_KEY: "id"}
    inner = got[1]["type"]["elementType"]["fields"][0]["metadata"]
    assert inner == {FIELD_ID_KEY: 3, PHYSICAL_NAME_KEY: "a"}
    assert upgraded.configuration[MAX_COLUMN_ID_KEY] == "3"
    # a new table: col-<uuid>; a column added later: the next id, col-<uuid>; fields that
    # lost their metadata (a schema rebuilt from a DataFrame) keep theirs
    fresh = json.loads(assign_column_mapping(_plain(fields, name), None).schema_string)
    assert fresh["fields"][0]["metadata"][PHYSICAL_NAME_KEY].startswith("col-")
    evolved = _plain(fields + [{"name": "x", "type": "string", "nullable": True,
                                "metadata": {}}], upgraded.configuration)
    after = assign_column_mapping(evolved, upgraded)
    got = json.loads(after.schema_string)["fields"]
    assert got[0]["metadata"][PHYSICAL_NAME_KEY] == "id"
    assert got[2]["metadata"][FIELD_ID_KEY] == 4
    assert got[2]["metadata"][PHYSICAL_NAME_KEY].startswith("col-")
    assert assign_column_mapping(after, after) == after
    with pytest.raises(UnsupportedOperationError, match="from 'name' to 'none'"):
        assign_column_mapping(_plain(fields), after)
    with pytest.raises(UnsupportedOperationError, match="'name' mode only"):
        assign_column_mapping(_plain(fields, {"delta.columnMapping.mode": "id"}), None)
    assert assign_column_mapping(old, None) is old


def test_rename_and_drop_change_only_the_schema():
    renamed = rename_field(V1, ["part"], "zone")
    assert renamed.partition_columns == ["zone"]
    mapping = ColumnMapping.of(renamed)
    assert mapping.physical_name("zone") == "col-part" and mapping.logical_name("col-part") == "zone"
    nested = ColumnMapping.of(rename_field(V1, ["S", "a"], "alpha"))
    assert nested.logical_stats(json.loads(STATS))["minValues"]["s"] == {"alpha": 5, "b": "b"}
    with pytest.raises(AnalysisException, match="already exists"):
        rename_field(V1, ["v"], "ID")
    dropped = drop_fields(V1, [["v"], ["s", "b"]])
    assert [f.name for f in parse_schema(dropped.schema_string)] == ["id", "s", "part"]
    assert ColumnMapping.of(dropped).logical_stats(json.loads(STATS))["minValues"] == {
        "id": 100, "s": {"a": 5}}
    with pytest.raises(UnsupportedOperationError, match="partition column"):
        drop_fields(V1, [["part"]])
    with pytest.raises(AnalysisException, match="does not exist"):
        drop_fields(V1, [["nope"]])
    assert drop_fields(V1, [["nope"]], if_exists=True).schema_string == V1.schema_string
    with pytest.raises(UnsupportedOperationError, match="delta.columnMapping.mode"):
        rename_field(_plain([]), ["a"], "b")


def test_unknown_mode_is_refused():
    with pytest.raises(UnsupportedTableFeatureError, match="columnMapping .mode future"):
        check_readable("t", 0, Protocol(2, 5), _metadata([], mode="future"))
