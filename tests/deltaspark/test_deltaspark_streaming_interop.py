"""Streaming across engines against delta-spark 4.4 (issue 28): a table delta-spark's sink wrote
in several micro-batches reads through sqlext's source with the same batches as through
delta-spark's, every row once; ``startingTimestamp`` without an offset is read in the session's
time zone by both; a schema change between batches (ADD COLUMN, a column renamed or dropped
under column mapping, a widened type) stops or lets through both engines' streams alike, with
the same error conditions, running and restarted."""

from __future__ import annotations

import datetime
import json
import os
import time
from zoneinfo import ZoneInfo

import sqlext
from tests.deltaspark.test_deltaspark_streaming_options import RUN as OPTIONS_RUN
from tests.support.deltaspark import run_on_both

# the options test's reader, run in the session time zone opts["tz"], errors by condition
RUN = OPTIONS_RUN + r'''
_run = run
def run(spark, table, ck, opts):
    opts = dict(opts)
    spark.conf.set("spark.sql.session.timeZone", opts.pop("tz", "UTC"))
    try:
        out = _run(spark, table, ck, opts)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    if isinstance(out, str):
        import re
        found = re.search(r"\[(DELTA_[A-Z_]+)\]", out)
        return "ERR " + (found.group(1) if found else out[:300])
    return out
'''


def test_delta_spark_sink_output_through_sqlext_source(drop_in, delta_spark, tmp_path):
    spark, source, table = drop_in, tmp_path / "in", str(tmp_path / "t")
    os.makedirs(source)
    for b in range(4):
        with open(source / f"part-{b}.json", "w") as f:
            f.writelines(json.dumps({"id": b * 10 + j}) + "\n" for j in range(3))
    versions = delta_spark.exec(f"""
q = (spark.readStream.schema("id long").option("maxFilesPerTrigger", 1).json({str(source)!r})
     .writeStream.format("delta").option("checkpointLocation", {str(tmp_path / "sink-ck")!r})
     .trigger(availableNow=True).start({table!r}))
q.awaitTermination()
result = [r.operation for r in spark.sql("DESCRIBE HISTORY delta.`{table}`").collect()]
""")
    assert versions == ["STREAMING UPDATE"] * 4                 # four micro-batches
    cases = {"snapshot": {"maxFilesPerTrigger": "1"}, "from0": {"startingVersion": "0"},
             "from1_each": {"startingVersion": "1", "maxFilesPerTrigger": "1"}}
    theirs, ours = run_on_both(spark, delta_spark, RUN, table, tmp_path / "ck", cases)
    assert ours == theirs
    every = sorted(b * 10 + j for b in range(4) for j in range(3))
    assert sorted(i for batch in ours["snapshot"] for i in batch) == every
    assert sorted(i for batch in ours["from0"] for i in batch) == every
    assert len(ours["from1_each"]) == 3


def test_starting_timestamp_in_session_time_zone_as_delta_spark(drop_in, delta_spark, tmp_path):
    spark, table = drop_in, str(tmp_path / "t")
    for v in range(2):
        sqlext.write(spark.range(v * 10, v * 10 + 3), table)
        time.sleep(1.1)
    times = {r.version: r.timestamp for r in spark.sql(
        f"DESCRIBE HISTORY delta.`{table}`").collect()}         # UTC wall times
    zone = "America/Los_Angeles"

    def local(version, seconds=0):
        moment = times[version].replace(tzinfo=datetime.timezone.utc).astimezone(ZoneInfo(zone))
        return (moment + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S.%f")
    cases = {"v1": {"tz": zone, "startingTimestamp": local(1)},
             "v0": {"tz": zone, "startingTimestamp": local(0)},
             "after": {"tz": zone, "startingTimestamp": local(1, 1)},
             "utc_v1": {"startingTimestamp": times[1].strftime("%Y-%m-%d %H:%M:%S.%f")}}
    theirs, ours = run_on_both(spark, delta_spark, RUN, table, tmp_path / "ck", cases)
    assert theirs["v1"] == theirs["utc_v1"] == [[10, 11, 12]]
    assert theirs["after"] == "ERR DELTA_TIMESTAMP_GREATER_THAN_COMMIT"
    assert ours == theirs


SCENARIO = r'''
def scenario(spark, sql, t, ck, create, change, insert):
    """Stream t (running query), change its schema between batches, then restart twice from
    the checkpoint and once from a new one; each step's rows or error condition."""
    import re
    def condition(e):
        found = re.search(r"\[((?:DELTA|DIFFERENT)_[A-Z_]+)\]", str(e))
        return "ERR " + (found.group(1) if found else str(e)[:300])
    def start(checkpoint):
        seen = []
        q = (spark.readStream.format("delta").load(t).writeStream
             .foreachBatch(lambda df, i: seen.extend(sorted(tuple(r) for r in df.collect())))
             .option("checkpointLocation", checkpoint).start())
        return q, seen
    def once(checkpoint):
        q, seen = start(checkpoint)
        try:
            q.processAllAvailable()
            return sorted(seen)
        except Exception as e:      # noqa: BLE001
            return condition(e)
        finally:
            q.stop()
    sql(create.format(t=t))
    sql(f"INSERT INTO delta.`{t}` VALUES (1, 'a')")
    q, seen = start(ck)
    steps = []
    try:
        q.processAllAvailable()
        sql(f"INSERT INTO delta.`{t}` VALUES (2, 'b')")
        q.processAllAvailable()
        steps.append(sorted(seen))
        sql(change.format(t=t))
        sql(insert.format(t=t))
        try:
            q.processAllAvailable()
            steps.append(sorted(seen))
        except Exception as e:      # noqa: BLE001
            steps.append(condition(e))
    finally:
        q.stop()
    steps += [once(ck), once(ck), once(ck + "-new")]
    return [[list(r) for r in s] if isinstance(s, list) else s for s in steps]
'''
CHANGES = {
    "add": ("CREATE TABLE delta.`{t}` (id long, v string) USING delta",
            "ALTER TABLE delta.`{t}` ADD COLUMNS (w string)",
            "INSERT INTO delta.`{t}` VALUES (3, 'c', 'x')"),
    "rename": ("CREATE TABLE delta.`{t}` (id long, v string) USING delta "
               "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')",
               "ALTER TABLE delta.`{t}` RENAME COLUMN v TO v2",
               "INSERT INTO delta.`{t}` VALUES (3, 'c')"),
    "drop": ("CREATE TABLE delta.`{t}` (id long, v string) USING delta "
             "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')",
             "ALTER TABLE delta.`{t}` DROP COLUMN v",
             "INSERT INTO delta.`{t}` VALUES (3)"),
    "widen": ("CREATE TABLE delta.`{t}` (id int, v string) USING delta "
              "TBLPROPERTIES ('delta.enableTypeWidening' = 'true')",
              "ALTER TABLE delta.`{t}` ALTER COLUMN id TYPE bigint",
              "INSERT INTO delta.`{t}` VALUES (3, 'c')"),
}


def test_schema_change_between_batches_as_delta_spark(drop_in, delta_spark, tmp_path):
    """Both engines' streams over tables delta-spark creates and changes (sqlext cannot widen a
    type itself): the same rows and error conditions at each step."""
    theirs = delta_spark.exec(SCENARIO + f"""
result = {{name: scenario(spark, spark.sql, {str(tmp_path / 'theirs')!r} + "/" + name,
                          {str(tmp_path / 'theirs-ck')!r} + "/" + name, *steps)
          for name, steps in {CHANGES!r}.items()}}
""")
    scope: dict = {}
    exec(SCENARIO, scope)       # noqa: S102 - the same steps with sqlext's stream
    ours = {name: scope["scenario"](drop_in, delta_spark.sql, str(tmp_path / "ours" / name),
                                    str(tmp_path / "ours-ck" / name), *steps)
            for name, steps in CHANGES.items()}
    assert theirs["add"][1] == "ERR DELTA_SCHEMA_CHANGED_WITH_VERSION"
    assert theirs["add"][2] == [[3, "c", "x"]]
    assert theirs["rename"][1:4] == ["ERR DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG"
                                     ] * 3
    for name in CHANGES:
        assert ours[name] == theirs[name], name
