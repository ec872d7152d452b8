"""Protocol upgrades compared with delta-spark 4.4: the same request (``upgradeTableProtocol``,
``addFeatureSupport``, ``delta.feature.*`` / ``delta.minWriterVersion`` properties) on two
copies of one delta-spark table, one changed by delta-spark and one by sqlext, gives the same
protocol action and configuration, and both refuse the same bad requests; delta-spark then
writes to the table sqlext upgraded."""

from __future__ import annotations

import json
import os

import pytest

import sqlext
from sqlext.errors import SqlextError
from tests.support.deltaspark import DeltaSparkError, delta_path

pytestmark = pytest.mark.slow

# (name, starting protocol (reader, writer, column mapping), delta-spark code, sqlext call)
CASES = [
    ("up_1_7", (1, 2), "dt.upgradeTableProtocol(1, 7)", lambda dt, p: dt.upgradeTableProtocol(1, 7)),
    ("up_3_7", (1, 2), "dt.upgradeTableProtocol(3, 7)", lambda dt, p: dt.upgradeTableProtocol(3, 7)),
    ("up_2_5", (1, 2), "dt.upgradeTableProtocol(2, 5)", lambda dt, p: dt.upgradeTableProtocol(2, 5)),
    ("up_2_3", (1, 2), "dt.upgradeTableProtocol(2, 3)", lambda dt, p: dt.upgradeTableProtocol(2, 3)),
    ("down_1_3", (1, 4), "dt.upgradeTableProtocol(1, 3)", lambda dt, p: dt.upgradeTableProtocol(1, 3)),
    ("up_3_5", (1, 2), "dt.upgradeTableProtocol(3, 5)", lambda dt, p: dt.upgradeTableProtocol(3, 5)),
    ("add_dv", (1, 2), "dt.addFeatureSupport('deletionVectors')",
     lambda dt, p: dt.addFeatureSupport("deletionVectors")),
    ("add_cdf", (1, 2), "dt.addFeatureSupport('changeDataFeed')",
     lambda dt, p: dt.addFeatureSupport("changeDataFeed")),
    ("add_dv_cm", (2, 5), "dt.addFeatureSupport('deletionVectors')",
     lambda dt, p: dt.addFeatureSupport("deletionVectors")),
    ("add_bogus", (1, 2), "dt.addFeatureSupport('bogus')",
     lambda dt, p: dt.addFeatureSupport("bogus")),
    ("prop_writer_4", (1, 2), "SET ('delta.minWriterVersion' = '4')", None),
    ("prop_feature_and_writer_7", (1, 2),
     "SET ('delta.minWriterVersion' = '7', 'delta.feature.changeDataFeed' = 'supported')", None),
    ("prop_feature_enabled", (1, 3), "SET ('delta.feature.appendOnly' = 'enabled')", None),
]


def _create(p: str, start) -> str:
    reader, writer = start
    cm = ", 'delta.columnMapping.mode' = 'name'" if writer == 5 else ""
    return (f"CREATE TABLE {delta_path(p)} (id BIGINT, v STRING) USING delta TBLPROPERTIES "
            f"('delta.minReaderVersion' = '{reader}', 'delta.minWriterVersion' = '{writer}'{cm})")


def _ds_code(p: str, code: str) -> str:
    if code.startswith("SET "):
        return f"spark.sql(\"ALTER TABLE {delta_path(p)} SET TBLPROPERTIES {code[4:]}\")"
    return f"from delta.tables import DeltaTable\ndt = DeltaTable.forPath(spark, {p!r})\n{code}"


def _sqlext_call(spark, p: str, code: str, call):
    if call is None:
        return sqlext.sql(spark, f"ALTER TABLE {delta_path(p)} SET TBLPROPERTIES {code[4:]}")
    return call(sqlext.DeltaTable.forPath(spark, p), p)


def _latest(p: str):
    """(version, protocol dict, configuration) of the table's last commit state."""
    protocol = conf = None
    log = os.path.join(p, "_delta_log")
    commits = sorted(f for f in os.listdir(log) if f.endswith(".json"))
    for name in commits:
        for line in open(os.path.join(log, name)):
            action = json.loads(line)
            protocol = action.get("protocol", protocol)
            conf = action.get("metaData", {}).get("configuration", conf) \
                if "metaData" in action else conf
    if protocol is not None:
        protocol = {k: sorted(v) if isinstance(v, list) else v for k, v in protocol.items()}
    return int(commits[-1].split(".")[0]), protocol, conf


def test_protocol_upgrades_match_delta_spark(spark, delta_spark, tmp_path):
    ours, theirs = {}, {}
    for name, start, code, _ in CASES:
        ours[name], theirs[name] = str(tmp_path / f"{name}_sqlext"), str(tmp_path / f"{name}_ds")
        delta_spark.batch([("sql", {"sql": _create(ours[name], start)}),
                           ("sql", {"sql": _create(theirs[name], start)})], check=True)
    outcomes = {}
    for name, start, code, call in CASES:
        try:
            delta_spark.exec(_ds_code(theirs[name], code))
            ds_error = None
        except DeltaSparkError as exc:
            ds_error = exc
        try:
            _sqlext_call(spark, ours[name], code, call)
            our_error = None
        except SqlextError as exc:
            our_error = exc
        outcomes[name] = (ds_error, our_error)
    for name, start, code, _ in CASES:
        ds_error, our_error = outcomes[name]
        assert (ds_error is None) == (our_error is None), (name, ds_error, our_error)
        ds_version, ds_protocol, ds_conf = _latest(theirs[name])
        our_version, our_protocol, our_conf = _latest(ours[name])
        assert our_protocol == ds_protocol, name
        assert our_version == ds_version, name       # a commit even when nothing changed
        assert our_conf == ds_conf, name


def test_delta_spark_writes_to_a_table_sqlext_upgraded(spark, delta_spark, tmp_path):
    p = str(tmp_path / "t")
    sqlext.write(spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string"), p,
                 configuration={"delta.enableChangeDataFeed": "false"})
    sqlext.DeltaTable.forPath(spark, p).addFeatureSupport("deletionVectors")
    sqlext.sql(spark, f"ALTER TABLE {delta_path(p)} SET TBLPROPERTIES "
                      "('delta.enableDeletionVectors' = 'true')")
    sqlext.DeltaTable.forPath(spark, p).delete("id = 1")
    delta_spark.sql(f"INSERT INTO {delta_path(p)} VALUES (3, 'c')")
    delta_spark.sql(f"DELETE FROM {delta_path(p)} WHERE id = 2")
    rows = delta_spark.sql(f"SELECT id FROM {delta_path(p)}").column("id").to_pylist()
    assert rows == [3]
    assert [r.id for r in sqlext.read(spark, p).collect()] == [3]
