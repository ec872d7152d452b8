"""``schemaTrackingLocation`` against delta-spark 4.4 (issue 28): a stream over a column-mapped
table goes on over a column rename and a column drop when the reader has a schema tracking log
(:mod:`sqlext.engine.streaming.schema_log`). The same script runs on both engines, each on a
table of its own: without the log the stream stops
(``DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG``); with it the stream reads up to
the change, records the new schema and stops (``DELTA_STREAMING_METADATA_EVOLUTION``), refuses to
go on until the rename is allowed (``DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_
EVOLUTION``), then reads on with the new schema. Both engines give the same batches (ids,
columns, rows), the same errors and the same schema log entries."""

from __future__ import annotations

import json
import re

import pytest

ALLOW = "spark.databricks.delta.streaming.allowSourceColumnRenameAndDrop"

RUNNER = r'''
import json
import os


def runner(spark, base):
    """(table, schema log, out, run) under base: run(tag, track, conf, options) is one
    Trigger.AvailableNow run of the table's stream (track: with the schema log, or the
    schemaTrackingLocation given), its batches and error appended to out."""
    t, ck = base + "/t", base + "/ck"
    log = ck + "/_schema_log"
    out = []

    def run(tag, track=True, conf=None, options=None):
        for k, v in (conf or {}).items():
            spark.conf.set(k, v)
        seen = []
        reader = spark.readStream.format("delta")
        if track:
            reader = reader.option("schemaTrackingLocation", log if track is True else track)
        for k, v in (options or {}).items():
            reader = reader.option(k, v)
        try:
            q = (reader.load(t).writeStream
                 .foreachBatch(lambda df, i: seen.append(
                     (i, df.columns, sorted(map(tuple, df.collect())))))
                 .option("checkpointLocation", ck).trigger(availableNow=True).start())
            q.awaitTermination()
            out.append([tag, "ok", seen, ""])
        except Exception as e:
            out.append([tag, "error", seen, str(e)])
        finally:
            for k in (conf or {}):
                spark.conf.unset(k)
    return t, log, out, run


def schema_log_entries(log):
    """[format line, entry JSON] of each schema log entry under log."""
    entries = []
    root = log + "/" + [n for n in os.listdir(log) if n.startswith("_schema_log_")][0]
    for name in sorted((n for n in os.listdir(root) if n.isdigit()), key=int):
        head, body = open(os.path.join(root, name)).read().split("\n", 1)
        entries.append([head, json.loads(body)])
    return entries
'''

SCRIPT = RUNNER + r'''
def scenario(spark, base, allow_option):
    t, log, out, run = runner(spark, base)

    spark.sql(f"CREATE TABLE delta.`{t}` (id long, a string, b string) USING delta "
              "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a1', 'b1')")
    run("first")
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (2, 'a2', 'b2')")
    spark.sql(f"ALTER TABLE delta.`{t}` RENAME COLUMN a TO c")
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (3, 'c3', 'b3')")
    run("no schema log", track=False)
    run("evolve rename")
    run("rename not allowed")
    run("rename allowed", conf={ALLOW: "always"})
    spark.sql(f"ALTER TABLE delta.`{t}` DROP COLUMN b")
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (4, 'c4')")
    run("evolve drop", conf={ALLOW: "always"})
    run("drop not allowed")
    run("drop allowed by option", options={"allowSourceColumnDrop": allow_option})
    spark.sql(f"INSERT INTO delta.`{t}` VALUES (5, 'c5')")
    run("after", options={"allowSourceColumnDrop": allow_option})
    return {"runs": out, "entries": schema_log_entries(log)}
'''


def _logical(schema_json: str) -> list:
    """A schemaString's fields without their physical names (each table has its own)."""
    return [(f["name"], f["type"], f["metadata"].get("delta.columnMapping.id"))
            for f in json.loads(schema_json)["fields"]]


def _error_class(text: str) -> str:
    found = re.findall(r"\[(DELTA_[A-Z_]+)\]", text)
    return found[0] if found else ""


@pytest.fixture
def outcomes(drop_in, delta_spark, tmp_path):
    """(delta-spark's, sqlext's) outcome of :data:`SCRIPT`."""
    code = f"ALLOW = {ALLOW!r}\n" + SCRIPT
    theirs = delta_spark.exec(code + f"\nresult = scenario(spark, {str(tmp_path / 'ds')!r}, "
                                     "'always')\n")
    scope: dict = {}
    exec(code, scope)       # noqa: S102 - the same script on sqlext
    ours = scope["scenario"](drop_in, str(tmp_path / "sqlext"), "always")
    return json.loads(json.dumps(theirs)), json.loads(json.dumps(ours))


def test_stream_goes_on_over_rename_and_drop_as_delta_spark(outcomes):
    theirs, ours = outcomes
    for mine, delta in zip(ours["runs"], theirs["runs"]):
        assert mine[:3] == delta[:3], (mine, delta)
        assert _error_class(mine[3]) == _error_class(delta[3]), (mine[0], mine[3], delta[3])
    assert len(ours["runs"]) == len(theirs["runs"])
    classes = [_error_class(r[3]) for r in theirs["runs"]]
    assert classes == ["", "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG",
                       "DELTA_STREAMING_METADATA_EVOLUTION",
                       "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION", "",
                       "DELTA_STREAMING_METADATA_EVOLUTION",
                       "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION", "", ""]
    # every row once, in the schema of its batch
    rows = [tuple(row) for run in ours["runs"] for _, _, batch in run[2] for row in batch]
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5]


def test_schema_log_entries_as_delta_spark(outcomes):
    theirs, ours = outcomes
    assert [e[0] for e in ours["entries"]] == ["v1"] * len(theirs["entries"])
    for mine, delta in zip(ours["entries"], theirs["entries"]):
        mine, delta = mine[1], delta[1]
        assert mine["deltaCommitVersion"] == delta["deltaCommitVersion"]
        assert _logical(mine["dataSchemaJson"]) == _logical(delta["dataSchemaJson"])
        assert mine["partitionSchemaJson"] == delta["partitionSchemaJson"]
        assert sorted(mine) == sorted(delta)
    assert [_logical(e[1]["dataSchemaJson"])[1][0] for e in ours["entries"]] == ["a", "c", "c"]


def test_cannot_continue_message_names_the_settings(outcomes):
    theirs, ours = outcomes
    mine, delta = ours["runs"][3][3], theirs["runs"][3][3]
    for text in (mine, delta):
        assert "non-additive schema change(s) (RENAME COLUMN) between Delta version 1 and 3" \
            in text
        assert "'a' -> 'c'" in text
        assert '.option("allowSourceColumnRename", "3")' in text
        assert 'SET spark.databricks.delta.streaming.allowSourceColumnRename = "always";' in text
