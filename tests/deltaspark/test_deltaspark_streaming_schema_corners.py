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
  until ``allowSourceColumnTypeChange`` allows it;
- a rename and a widening merged into one entry: the same error, titled
  ``RENAME AND TYPE WIDENING`` and naming delta-spark's reader options and the ``.ckpt_<hash>``
  settings of the query's checkpoint (the hash of ``<checkpoint>/sources/0``), which let the
  restart read on; the entries' ``sourceMetadataPath`` is that path too;
- a tracking location outside the checkpoint: ``start()`` refuses it
  (``DELTA_STREAMING_SCHEMA_LOCATION_NOT_UNDER_CHECKPOINT``) unless
  ``allowSchemaLocationOutsideCheckpointLocation`` is on."""

from __future__ import annotations

import json
import re

import pytest

from sqlext.engine.streaming.schema_log import CONF_PREFIX as PREFIX, checkpoint_hash
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
    if kind == "rename_type":
        spark.sql(f"CREATE TABLE delta.`{t}` (id long, a int) USING delta TBLPROPERTIES "
                  "('delta.columnMapping.mode' = 'name', 'delta.enableTypeWidening' = 'true')")
        spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 1)")
        run("first")
        spark.sql(f"ALTER TABLE delta.`{t}` RENAME COLUMN a TO b")
        spark.sql(f"ALTER TABLE delta.`{t}` ALTER COLUMN b TYPE BIGINT")
        spark.sql(f"INSERT INTO delta.`{t}` VALUES (2, 3000000000)")
        run("run0")
        run("run1")
        run("run2", options={"allowSourceColumnRename": "always"})
        import re
        # the settings of this checkpoint (ckpt_<hash>) the error names, for version 3
        keys = {k: "3" for k in re.findall(r"SET (\S+\.ckpt_-?\d+) = 3;", out[-1][3])}
        run("allowed", conf=keys)
        run("after", conf=keys)
    if kind == "outside":
        spark.sql(f"CREATE TABLE delta.`{t}` (id long) USING delta")
        spark.sql(f"INSERT INTO delta.`{t}` VALUES (1)")
        log = base + "/outside"
        run("refused", track=log)
        spark.sql(f"INSERT INTO delta.`{t}` VALUES (2)")
        run("allowed", track=log, conf={
            "spark.databricks.delta.streaming.allowSchemaLocationOutsideCheckpointLocation":
                "true"})
    return {"runs": out, "entries": schema_log_entries(log)}
'''



@pytest.fixture(params=["consecutive", "protocol", "type", "rename_type", "outside"])
def outcomes(request, drop_in, delta_spark, tmp_path):
    """(scenario, delta-spark's outcome, sqlext's outcome) of :data:`SCRIPT`."""
    kind = request.param
    theirs = delta_spark.exec(SCRIPT + f"\nresult = scenario(spark, {str(tmp_path / 'ds')!r}, "
                                       f"{kind!r})\n")
    scope: dict = {}
    exec(SCRIPT, scope)     # noqa: S102 - the same script on sqlext
    ours = scope["scenario"](drop_in, str(tmp_path / "sqlext"), kind)
    return kind, json.loads(json.dumps(theirs)), json.loads(json.dumps(ours)), tmp_path


EXPECTED = {
    "consecutive": ["", "DELTA_STREAMING_METADATA_EVOLUTION", "", "", "", ""],
    "protocol": ["", "DELTA_STREAMING_METADATA_EVOLUTION", "", ""],
    "type": ["", "DELTA_STREAMING_METADATA_EVOLUTION",
             "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION",
             "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION", "", ""],
    "rename_type": ["", "DELTA_STREAMING_METADATA_EVOLUTION",
                    "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION",
                    "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION", "", ""],
    "outside": ["DELTA_STREAMING_SCHEMA_LOCATION_NOT_UNDER_CHECKPOINT", ""]}


def test_schema_tracking_corners_as_delta_spark(outcomes):
    kind, theirs, ours, tmp_path = outcomes
    base_of = {name: str(tmp_path / name) for name in ("ds", "sqlext")}
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
    if kind == "outside":
        # the same message, each naming its own paths (the checkpoint qualified)
        mine, delta = (r["runs"][0][3].replace(base_of[n], "B").replace(
            base_of[n].replace("/", "_"), "_B") for r, n in ((ours, "sqlext"), (theirs, "ds")))
        message = ("Schema location 'B/outside/_schema_log__B_t' must be placed under "
                   "checkpoint location 'file:B/ck'.")
        assert message in mine and message in delta, (mine, delta)
    if kind == "rename_type":
        # each names the settings of its own checkpoint (delta-spark's hash of
        # <checkpoint>/sources/0), and the restart with them set reads on (runs 4 and 5)
        for outcome, base in ((ours, base_of["sqlext"]), (theirs, base_of["ds"])):
            ckpt = checkpoint_hash(f"file:{base}/ck/sources/0")
            assert re.findall(r"SET (\S+) = 3;", outcome["runs"][2][3]) == [
                f"{PREFIX}allowSourceColumnRename.ckpt_{ckpt}",
                f"{PREFIX}allowSourceColumnTypeChange.ckpt_{ckpt}"]
            assert {e[1]["sourceMetadataPath"] for e in outcome["entries"]} == \
                {f"file:{base}/ck/sources/0"}
        # the same title, changes and reader options (delta-spark's list for a rename with a
        # widening names allowSourceColumnDrop); the physical names are the tables' own
        mine, delta = (_explained(r["runs"][2][3]) for r in (ours, theirs))
        assert mine == delta
        assert "(RENAME AND TYPE WIDENING) between Delta version 1 and 3" in mine
        assert "'a' -> 'b'" in mine and "'col-*': INT -> BIGINT" in mine


def _explained(error: str) -> str:
    """The text of a CANNOT_CONTINUE error from its title to its SQL settings (which name the
    checkpoint's hash), physical column names as ``col-*``."""
    text = error[error.index("We've detected"):error.index("Using SQL configuration")]
    return re.sub(r"col-[0-9a-f-]{36}", "col-*", text)
