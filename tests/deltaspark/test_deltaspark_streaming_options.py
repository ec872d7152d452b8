"""The Delta streaming source's startingTimestamp, maxBytesPerTrigger and excludeRegex against
delta-spark 4.4 (issue 28): on one table (written by sqlext: three commits of three files),
each option's batches (the ids of each micro-batch, in order) are the same in both engines, and
the refusals carry delta-spark's error conditions."""

from __future__ import annotations

import datetime
import os
import time


import sqlext
from tests.support.deltaspark import run_on_both

CASES = {
    "exact": {"startingTimestamp": "{ts1}"},
    "after": {"startingTimestamp": "{ts1_plus}"},
    "date": {"startingTimestamp": "2000-01-01"},
    "bytes1": {"maxBytesPerTrigger": "1"},
    "bytes1k": {"maxBytesPerTrigger": "1k"},
    "bytes_files": {"maxBytesPerTrigger": "100m", "maxFilesPerTrigger": "2"},
    "from_v1_bytes": {"startingVersion": "1", "maxBytesPerTrigger": "1"},
    "exclude": {"excludeRegex": "{first_file}"},
    "late": {"startingTimestamp": "2999-01-01 00:00:00"},
    "both": {"startingTimestamp": "2000-01-01", "startingVersion": "1"},
    "bad_ts": {"startingTimestamp": "not a time"},
    "bad_bytes": {"maxBytesPerTrigger": "abc"},
}
CONDITIONS = {"late": "DELTA_TIMESTAMP_GREATER_THAN_COMMIT",
              "both": "DELTA_STARTING_VERSION_AND_TIMESTAMP_BOTH_SET",
              "bad_ts": "DELTA_TIMESTAMP_INVALID", "bad_bytes": "DELTA_ILLEGAL_OPTION"}

RUN = r'''
def run(spark, table, ck, opts):
    seen = []
    reader = spark.readStream.format("delta")
    for k, v in opts.items():
        reader = reader.option(k, v)
    try:
        q = (reader.load(table).writeStream
             .foreachBatch(lambda df, i: seen.append(sorted(r.id for r in df.collect())))
             .option("checkpointLocation", ck).trigger(availableNow=True).start())
        q.awaitTermination()
        return seen
    except Exception as e:      # noqa: BLE001
        return "ERR " + str(e)
'''


def _outcome(value):
    if isinstance(value, str):
        return [c for c in CONDITIONS.values() if c in value][:1] or value[:300]
    return value



def test_stream_options_batches_as_delta_spark(drop_in, delta_spark, tmp_path):
    spark, table = drop_in, str(tmp_path / "t")
    for v in range(3):
        sqlext.write(spark.range(v * 10, v * 10 + 3).repartition(3), table)
        time.sleep(1.1)
    history = {r.version: r.timestamp for r in spark.sql(
        f"DESCRIBE HISTORY delta.`{table}`").collect()}
    ts1 = history[1].strftime("%Y-%m-%d %H:%M:%S.%f")
    ts1_plus = (history[1] + datetime.timedelta(milliseconds=1)).strftime("%Y-%m-%d %H:%M:%S.%f")
    first_file = sorted(f for f in os.listdir(table) if f.endswith(".parquet"))[0][:14]
    cases = {name: {k: v.format(ts1=ts1, ts1_plus=ts1_plus, first_file=first_file)
                    for k, v in opts.items()} for name, opts in CASES.items()}
    theirs, ours = run_on_both(spark, delta_spark, RUN, table, tmp_path / "ck", cases)
    assert theirs["exact"][0][:3] == [10, 11, 12] and theirs["after"] == [[20, 21, 22]]
    for name in cases:
        assert _outcome(ours[name]) == _outcome(theirs[name]), name
    for name, condition in CONDITIONS.items():
        assert _outcome(theirs[name]) == [condition], name
