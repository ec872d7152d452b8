"""Protocol changes a user asks for (:mod:`sqlext.log.protocol_changes`): the normal form, the
merge of requested features, and the refusals. The expected protocols are what delta-spark 4.4
commits for the same requests (tests/deltaspark/test_deltaspark_protocol_upgrade.py checks them
against delta-spark itself)."""

from __future__ import annotations

import pytest

from sqlext.errors import InvalidProtocolChangeError, UnsupportedTableFeatureError
from sqlext.log.actions import Protocol
from sqlext.log.protocol_changes import (check_feature_names, implied_features, merged,
                                         normalized, requested_by_versions,
                                         split_protocol_properties)


def _upgrade(current: Protocol, reader: int, writer: int) -> Protocol:
    return merged(current, requested_by_versions("t", 0, reader, writer)) or current


@pytest.mark.parametrize("current, reader, writer, expected", [
    (Protocol(1, 2), 1, 7, Protocol(1, 2)),          # table features add nothing by themselves
    (Protocol(1, 2), 3, 7, Protocol(1, 2)),
    (Protocol(1, 2), 2, 5, Protocol(2, 5)),
    (Protocol(1, 4), 1, 3, Protocol(1, 4)),          # lower versions change nothing
    (Protocol(1, 2), 2, 3, Protocol(1, 3)),          # reader 2 alone implies nothing
    (Protocol(1, 2), 1, 6, Protocol(1, 6)),
])
def test_upgrade_by_versions(current, reader, writer, expected):
    assert _upgrade(current, reader, writer) == expected


def test_adding_a_feature_lists_the_implied_ones():
    assert merged(Protocol(1, 2), {"deletionVectors"}) == Protocol(
        3, 7, ["deletionVectors"], ["appendOnly", "deletionVectors", "invariants"])
    # 1/4 would also support generatedColumns, so the change feed alone needs writer 7
    assert merged(Protocol(1, 2), {"changeDataFeed"}) == Protocol(
        1, 7, None, ["appendOnly", "changeDataFeed", "invariants"])
    assert merged(Protocol(1, 4), {"appendOnly"}) is None
    assert merged(Protocol(2, 5), {"deletionVectors"}) == Protocol(
        3, 7, ["columnMapping", "deletionVectors"],
        sorted(implied_features(Protocol(2, 5)) | {"deletionVectors"}))


def test_normal_form_prefers_the_lowest_legacy_protocol():
    assert normalized(set()) == Protocol(1, 1)
    assert normalized({"appendOnly", "invariants", "checkConstraints"}) == Protocol(1, 3)
    assert normalized(implied_features(Protocol(2, 6))) == Protocol(2, 6)
    assert normalized({"columnMapping"}) == Protocol(2, 7, None, ["columnMapping"])


def test_implied_features_of_table_feature_protocols_are_the_listed_ones():
    p = Protocol(3, 7, ["deletionVectors"], ["deletionVectors", "domainMetadata"])
    assert implied_features(p) == {"deletionVectors", "domainMetadata"}
    assert "columnMapping" not in implied_features(Protocol(1, 6))


def test_properties_are_split_from_the_configuration():
    conf = {"delta.minWriterVersion": "4", "delta.appendOnly": "false",
            "delta.feature.deletionVectors": "supported"}
    rest, features = split_protocol_properties("t", 3, conf, Protocol(1, 2))
    assert rest == {"delta.appendOnly": "false"}
    assert features == implied_features(Protocol(1, 4)) | {"deletionVectors"}
    assert split_protocol_properties("t", 3, {"a": "b"}, Protocol(1, 2)) == ({"a": "b"}, set())


@pytest.mark.parametrize("reader, writer", [(3, 5), (4, 7), (1, 8), (0, 2)])
def test_undefined_versions_are_refused(reader, writer):
    with pytest.raises(InvalidProtocolChangeError, match="table t \\(version 4\\)"):
        requested_by_versions("t", 4, reader, writer)


def test_bad_property_values_are_refused():
    with pytest.raises(InvalidProtocolChangeError, match="'disabled'"):
        split_protocol_properties("t", 0, {"delta.feature.appendOnly": "disabled"},
                                  Protocol(1, 2))
    with pytest.raises(InvalidProtocolChangeError, match="not a protocol version"):
        split_protocol_properties("t", 0, {"delta.minWriterVersion": "seven"}, Protocol(1, 2))


def test_unknown_and_unwritable_features_are_refused():
    with pytest.raises(InvalidProtocolChangeError, match="unknown table feature.*bogus"):
        check_feature_names("t", 2, {"bogus"})
    with pytest.raises(UnsupportedTableFeatureError, match="clustering.*table t \\(version 2\\)"):
        check_feature_names("t", 2, {"clustering"})
    check_feature_names("t", 2, {"deletionVectors", "changeDataFeed", "generatedColumns",
                                 "rowTracking"})
