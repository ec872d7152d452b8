"""The catalogue of operations (sqlext.log.operations, no Spark): each operation's name and
``operationParameters`` are byte for byte what sqlext wrote before the catalogue existed.

The expected maps were captured from commitInfo written by the code before the catalogue (issue
29 item 3), one per operation: CREATE TABLE through SQL, WRITE through sqlext.write, and so on.
Key order is part of the bytes, so the tests compare the JSON text of each map, not only the
maps. The RESTORE and VACUUM cases also commit through the kernel and read the log back.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from sqlext.log import operations as ops
from sqlext.log.restore import restore_table
from sqlext.log.table import DeltaLog
from sqlext.log.vacuum import collect_garbage
from tests.support.kernel_tables import append, create_table

pytestmark = pytest.mark.usefixtures("fresh_caches")     # kernel caches cleared around each test

FIELD = {"name": "v", "type": "string", "nullable": True, "metadata": {"comment": "new comment"}}

CASES = [
    (ops.CreateTable(False, ("p",), {"delta.appendOnly": "false", "x.y": "\u00e9"}, "hello"),
     "CREATE TABLE",
     {"isManaged": "false", "description": "hello", "partitionBy": '["p"]',
      "properties": '{"delta.appendOnly": "false", "x.y": "\\u00e9"}'}),
    (ops.CreateTable(False, replace=True), "CREATE OR REPLACE TABLE",
     {"isManaged": "false", "partitionBy": "[]", "properties": "{}"}),
    (ops.CreateTable(True, ("a", "b"), replace=True, as_select=True),
     "CREATE OR REPLACE TABLE AS SELECT",
     {"isManaged": "true", "partitionBy": '["a", "b"]', "properties": "{}"}),
    (ops.Write("Append", ("p",)), "WRITE", {"mode": "Append", "partitionBy": '["p"]'}),
    (ops.Write("Overwrite", ("p",), predicate="p = 'a'"), "WRITE",
     {"mode": "Overwrite", "partitionBy": '["p"]', "predicate": "p = 'a'"}),
    (ops.Write("Append", ("p",), can_merge_schema=True), "WRITE",
     {"mode": "Append", "partitionBy": '["p"]', "canMergeSchema": "true"}),
    (ops.Write("Overwrite", ("p", "q"), dynamic_partition_overwrite=True), "WRITE",
     {"mode": "Overwrite", "partitionBy": '["p", "q"]', "isDynamicPartitionOverwrite": "true"}),
    (ops.StreamingUpdate("Append", "q-1", 3), "STREAMING UPDATE",
     {"outputMode": "Append", "queryId": "q-1", "epochId": "3"}),
    (ops.WriteAs(ops.Write("Append", ("p",)), ops.StreamingUpdate("Complete", "q-2", 0)),
     "STREAMING UPDATE",
     {"mode": "Append", "partitionBy": '["p"]', "outputMode": "Complete", "queryId": "q-2",
      "epochId": "0"}),
    # CREATE TABLE AS SELECT: CreateTable's partitionBy keeps Write's place
    (ops.WriteAs(ops.Write("ErrorIfExists", ("p",)), ops.CreateTable(False, ("p",),
                                                                      as_select=True)),
     "CREATE TABLE AS SELECT",
     {"mode": "ErrorIfExists", "partitionBy": '["p"]', "isManaged": "false",
      "properties": "{}"}),
    (ops.AddColumns(({"name": "extra", "type": "string", "nullable": True, "metadata": {}},
                     {"name": "e2", "type": "integer", "nullable": True, "metadata": {}})),
     "ADD COLUMNS",
     {"columns": '[{"column": {"name": "extra", "type": "string", "nullable": true, '
                 '"metadata": {}}}, {"column": {"name": "e2", "type": "integer", '
                 '"nullable": true, "metadata": {}}}]'}),
    # the field's keys in delta-spark's order, whatever the dict's
    (ops.ChangeColumn({"metadata": {"comment": "new comment"}, "name": "v", "nullable": True,
                       "type": "string"}), "CHANGE COLUMN",
     {"column": '{"name":"v","type":"string","nullable":true,'
                '"metadata":{"comment":"new comment"}}'}),
    (ops.ChangeColumn({"name": "s.x", "type": "long", "nullable": True, "metadata": {}},
                      position="AFTER y"), "CHANGE COLUMN",
     {"column": '{"name":"s.x","type":"long","nullable":true,"metadata":{}}',
      "position": "AFTER y"}),
    (ops.RenameColumn(("s", "p"), ("s", "p2")), "RENAME COLUMN",
     {"oldColumnPath": "s.p", "newColumnPath": "s.p2"}),
    (ops.DropColumns(("p2", "s.x")), "DROP COLUMNS", {"columns": '["p2", "s.x"]'}),
    (ops.SetTableProperties({"a.b": "1", "delta.logRetentionDuration": "interval 30 days"}),
     "SET TBLPROPERTIES",
     {"properties": '{"a.b": "1", "delta.logRetentionDuration": "interval 30 days"}'}),
    (ops.UnsetTableProperties(("a.b", "c"), True), "UNSET TBLPROPERTIES",
     {"properties": '["a.b", "c"]', "ifExists": "true"}),
    (ops.AddConstraint("pos", "id > 0"), "ADD CONSTRAINT", {"name": "pos", "expr": "id > 0"}),
    (ops.DropConstraint("pos", "id > 0"), "DROP CONSTRAINT", {"name": "pos", "expr": "id > 0"}),
    (ops.DropConstraint("nothere"), "DROP CONSTRAINT", {"name": "nothere"}),
    (ops.Delete("(id = CAST(2 AS BIGINT))"), "DELETE",
     {"predicate": '["(id = CAST(2 AS BIGINT))"]'}),
    (ops.Delete(), "DELETE", {"predicate": "[]"}),
    (ops.Update("(id > CAST(3 AS BIGINT))"), "UPDATE",
     {"predicate": '["(id > CAST(3 AS BIGINT))"]'}),
    (ops.Update(), "UPDATE", {"predicate": "[]"}),
    (ops.Merge("(t.id = CAST(s.id AS BIGINT))",
               ({"predicate": "(s.p = 'a')", "actionType": "update"},),
               ({"actionType": "insert"},)), "MERGE",
     {"predicate": '["(t.id = CAST(s.id AS BIGINT))"]',
      "matchedPredicates": '[{"predicate":"(s.p = \'a\')","actionType":"update"}]',
      "notMatchedPredicates": '[{"actionType":"insert"}]',
      "notMatchedBySourcePredicates": "[]"}),
    (ops.Optimize("(p = 'a')", ("id",)), "OPTIMIZE",
     {"predicate": '["(p = \'a\')"]', "zOrderBy": '["id"]', "clusterBy": "[]",
      "auto": "false"}),
    (ops.Optimize(), "OPTIMIZE",
     {"predicate": "[]", "zOrderBy": "[]", "clusterBy": "[]", "auto": "false"}),
    (ops.Reorg(), "REORG", {"predicate": "[]", "applyPurge": "true"}),
    (ops.Restore(version=1), "RESTORE", {"version": "1"}),
    (ops.Restore(timestamp="2026-11-27 12:27:29.963000"), "RESTORE",
     {"timestamp": "2026-11-27 12:27:29.963000"}),
    (ops.VacuumStart(False, 604800000, 0), "VACUUM START",
     {"retentionCheckEnabled": "false", "defaultRetentionMillis": "604800000",
      "specifiedRetentionMillis": "0"}),
    (ops.VacuumStart(True, 604800000), "VACUUM START",
     {"retentionCheckEnabled": "true", "defaultRetentionMillis": "604800000"}),
    (ops.VacuumEnd(ops.VacuumEnd.COMPLETED), "VACUUM END", {"status": "COMPLETED"}),
    (ops.Convert(1, ("k",), True), "CONVERT",
     {"numFiles": "1", "partitionedBy": '["k"]', "collectStats": "true"}),
    (ops.Clone("delta.`/tmp/t`", 3), "CLONE",
     {"source": "delta.`/tmp/t`", "sourceVersion": "3", "isShallow": "true"}),
]


@pytest.mark.parametrize("operation,name,parameters", CASES,
                         ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_parameters_are_the_bytes_written_before(operation, name, parameters):
    assert operation.name == name
    assert json.dumps(operation.parameters()) == json.dumps(parameters)   # order too


def test_every_operation_is_covered_and_frozen():
    covered = {type(c[0]) for c in CASES}
    assert covered == set(ops.OPERATIONS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ops.Delete("x").predicate = "y"  # type: ignore[misc]


def _commit_infos(log: DeltaLog) -> list[dict]:
    out = []
    for version in range(log.latest_version() + 1):
        out += [a.values for a in log.read_commit(version) if type(a).__name__ == "CommitInfo"]
    return out


def test_kernel_commits_write_the_parameters(tmp_path):
    log = create_table(tmp_path / "t")
    append(log, [{"id": 1, "name": "x"}])
    append(log, [{"id": 2, "name": "y"}])
    restore_table(log, version=1)
    collect_garbage(log, retention_hours=0, check_retention=False)
    infos = _commit_infos(DeltaLog(str(tmp_path / "t")))[-3:]
    assert [(i["operation"], json.dumps(i["operationParameters"])) for i in infos] == [
        ("RESTORE", json.dumps({"version": "1"})),
        ("VACUUM START", json.dumps({"retentionCheckEnabled": "false",
                                     "defaultRetentionMillis": "604800000",
                                     "specifiedRetentionMillis": "0"})),
        ("VACUUM END", json.dumps({"status": "COMPLETED"}))]


def test_an_operation_brings_its_own_parameters(tmp_path):
    log = create_table(tmp_path / "t")
    txn = log.start_transaction()
    with pytest.raises(TypeError):
        txn.commit([], ops.Optimize(), {"predicate": "[]"})
    version = txn.commit([], ops.Optimize(), metrics={"numAddedFiles": 0})
    info = _commit_infos(DeltaLog(str(tmp_path / "t")))[version]
    assert (info["operation"], json.dumps(info["operationParameters"])) == (
        "OPTIMIZE", json.dumps(ops.Optimize().parameters()))
