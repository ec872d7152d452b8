"""``schemaTrackingLocation`` against delta-spark 4.4, the corners (issue 28): the same script
runs on both engines, each on a table of its own, and both give the same batches (ids, columns,
rows), the same error conditions and the same schema log entries when

- consecutive commits change only metadata (two renames and an added column): the stream stops
  once (``DELTA_STREAMING_METADATA_EVOLUTION`` at the first), and the restart merges the rest
  into one entry replacing it (``previousMetadataSeqNum``) and reads on;
- a commit changes only the protocol (a table feature made supported): the stream stops once and
  the entry records the new protocol;
- a column's type is widened (``delta.enableTypeWidening``): after the stop the stream refuses to
  go on (``DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION``, TYPE WIDENING)
  until ``allowSourceColumnTypeChange`` allows it."""

from __future__ import annotations

import json

import pytest

from tests.deltaspark.test_deltaspark_streaming_schema_tracking import (RUNNER, _error_class,
                                                                     _logical)

SCRIPT = RUNNER + r'''
def scenario(spark, base, kind):
    t, log, out, run = runner(spark, base)
    allow = {"spark.databricks.delta.streaming.allowSourceColumnRenameAndDrop": "always"}
    if kind == "consecutive":
        spark.sql(f"CREATE TABLE delta.`{t}` (id long, a string, b string) USING delta "
                  "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
        spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a1', 'b1')")
        run("first")
        spark.sql(f"ALTER TABLE delta.`{t}` RENAME COLUMN a TO c")
        spark.sql(f"ALTER TABLE delta.`{t}` RENAME COLUMN b TO d")
        spark.sql(f"ALTER TABLE delta.`{t}` ADD COLUMN e string")
        spark.sql(f"INSERT INTO delta.`{t}` VALUES (2, 'c2', 'd2', 'e2')")
        for i in range(5):
            run(f"run{i}", conf=allow)
    if kind == "protocol":
        spark.sql(f"CREATE TABLE delta.`{t}` (id long, a string) USING delta "
                  "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
        spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a1')")
        run("first")
        spark.sql(f"ALTER TABLE delta.`{t}` SET TBLPROPERTIES "
                  "('delta.feature.deletionVectors' = 'supported')")
        spark.sql(f"INSERT INTO delta.`{t}` VALUES (2, 'a2')")
        for i in range(3):
            run(f"run{i}")
    if kind == "type":
        spark.sql(f"CREATE TABLE delta.`{t}` (id long, a int) USING delta "
                  "TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
        spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 1)")
        run("first")
        spark.sql(f"ALTER TABLE delta.`{t}` ALTER COLUMN a TYPE BIGINT")
        spark.sql(f"INSERT INTO delta.`{t}` VALUES (2, 3000000000)")
        run("run0")
        run("run1")
        run("run2")
        run("allowed", options={"allowSourceColumnTypeChange": "always"})
        run("after", options={"allowSourceColumnTypeChange": "always"})
    return {"runs": out, "entries": schema_log_entries(log)}
'''



@pytest.fixture(params=["consecutive", "protocol", "type"])
def outcomes(request, drop_in, delta_spark, tmp_path):
    """(scenario, delta-spark's outcome, sqlext's outcome) of :data:`SCRIPT`."""
    kind = request.param
    theirs = delta_spark.exec(SCRIPT + f"\nresult = scenario(spark, {str(tmp_path / 'ds')!r}, "
                                       f"{kind!r})\n")
    scope: dict = {}
    exec(SCRIPT, scope)     # noqa: S102 - the same script on sqlext
    ours = scope["scenario"](drop_in, str(tmp_path / "sqlext"), kind)
    return kind, json.loads(json.dumps(theirs)), json.loads(json.dumps(ours))


EXPECTED = {
    "consecutive": ["", "DELTA_STREAMING_METADATA_EVOLUTION", "", "", "", ""],
    "protocol": ["", "DELTA_STREAMING_METADATA_EVOLUTION", "", ""],
    "type": ["", "DELTA_STREAMING_METADATA_EVOLUTION",
             "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION",
             "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION", "", ""]}


def test_schema_tracking_corners_as_delta_spark(outcomes):
    kind, theirs, ours = outcomes
    assert [_error_class(r[3]) for r in theirs["runs"]] == EXPECTED[kind]
    assert len(ours["runs"]) == len(theirs["runs"])
    for mine, delta in zip(ours["runs"], theirs["runs"]):
        assert mine[:3] == delta[:3], (mine, delta)
        assert _error_class(mine[3]) == _error_class(delta[3]), (mine[0], mine[3], delta[3])
    # every row once
    rows = [row[0] for run in ours["runs"] for _, _, batch in run[2] for row in batch]
    assert rows == [1, 2]
    assert len(ours["entries"]) == len(theirs["entries"])
    for mine, delta in zip(ours["entries"], theirs["entries"]):
        mine, delta = mine[1], delta[1]
        assert sorted(mine) == sorted(delta)
        assert mine["deltaCommitVersion"] == delta["deltaCommitVersion"]
        assert mine.get("previousMetadataSeqNum") == delta.get("previousMetadataSeqNum")
        assert _logical(mine["dataSchemaJson"]) == _logical(delta["dataSchemaJson"])
        assert json.loads(mine["dataSchemaJson"]) == json.loads(delta["dataSchemaJson"]) \
            or kind != "type"           # type changes recorded in the field's metadata
    if kind == "protocol":
        features = [json.loads(e[1]["protocolJson"])["protocol"].get("readerFeatures") or []
                    for e in ours["entries"]]
        assert ["deletionVectors" in f for f in features] == [False, True]
    if kind == "type":
        mine, delta = ours["runs"][2][3], theirs["runs"][2][3]
        for text in (mine, delta):
            assert "(TYPE WIDENING) between Delta version 1 and 2" in text
            assert "'a': INT -> BIGINT" in text
            assert '.option("allowSourceColumnTypeChange", "2")' in text
            assert "SET spark.databricks.delta.streaming.allowSourceColumnTypeChange = " \
                   '"always";' in text
