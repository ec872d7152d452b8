"""Idempotent DML with delta-spark's session settings ``spark.databricks.delta.write.txnAppId``
/ ``txnVersion`` / ``txnVersion.autoReset.enabled``: the same statements on delta-spark 4.4 and
on sqlext commit the same versions with the same ``txn`` actions, skip the same commands (a
MERGE, DELETE, UPDATE, append and DeltaTable.delete with a pair already committed; a skipped
MERGE's ``execute()``, SQL DELETE and UPDATE return no row) and leave the same rows; the write's
own txnAppId/txnVersion options win over the settings; autoReset unsets the version once a
command read it, skipped or not; one setting without the other is
DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS."""

from __future__ import annotations

import pytest

from sqlext.tables import DeltaTable

SCRIPT = r'''
import json, os
A, V = "spark.databricks.delta.write.txnAppId", "spark.databricks.delta.write.txnVersion"
R = "spark.databricks.delta.write.txnVersion.autoReset.enabled"
spark.range(3).selectExpr("id", "'a' as v").write.format("delta").save(t)
spark.conf.set(A, "app1")
spark.conf.set(V, "5")
dt = DeltaTable.forPath(spark, t)
def upsert(v, hi):
    src = spark.range(2, hi).selectExpr("id", f"'{v}' as v")
    return [list(r) for r in dt.alias("t").merge(src.alias("s"), "t.id = s.id")
            .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute().collect()]
merges = [upsert("b", 5), upsert("c", 8)]
skipped = [[list(r) for r in spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 0").collect()],
           [list(r) for r in spark.sql(f"UPDATE delta.`{t}` SET v = 'z'").collect()]]
spark.sql(f"MERGE INTO delta.`{t}` t USING (SELECT 9L id, 'm' v) s ON t.id = s.id "
          "WHEN NOT MATCHED THEN INSERT *").collect()
spark.range(50, 51).selectExpr("id", "'w' as v").write.format("delta").mode("append").save(t)
spark.range(60, 61).selectExpr("id", "'o' as v").write.format("delta").mode("append") \
    .option("txnAppId", "app2").option("txnVersion", "1").save(t)
spark.range(61, 62).selectExpr("id", "'o' as v").write.format("delta").mode("append") \
    .option("txnAppId", "app1").option("txnVersion", "5").save(t)
spark.conf.set(V, "6")
spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 0").collect()
spark.conf.set(R, "true")
spark.sql(f"DELETE FROM delta.`{t}` WHERE id = 1").collect()      # skipped, version unset
after_skip = spark.conf.get(V, None)
spark.conf.set(V, "7")
spark.sql(f"UPDATE delta.`{t}` SET v = 'y' WHERE id = 1").collect()
after_run = spark.conf.get(V, None)
spark.conf.set(V, "4")
dt.delete("id = 1")
spark.conf.unset(V)
errors = []
try:
    spark.sql(f"UPDATE delta.`{t}` SET v = 'q'").collect()
except Exception as e:
    errors.append("DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS" in str(e))
spark.conf.unset(A)
spark.conf.unset(R)
log = os.path.join(t, "_delta_log")
txns = {}
for name in sorted(n for n in os.listdir(log) if n.endswith(".json")):
    for line in open(os.path.join(log, name)):
        a = json.loads(line)
        if "txn" in a:
            txns[str(int(name[:20]))] = [a["txn"]["appId"], a["txn"]["version"]]
result = {"merges": merges, "skipped": skipped, "after": [after_skip, after_run], "errors": errors, "txns": txns,
          "rows": sorted([r.id, r.v] for r in spark.read.format("delta").load(t).collect()),
          "ops": sorted([r.version, r.operation] for r in dt.history().collect())}
'''


@pytest.fixture
def drop_in(drop_in):
    """conftest's ``drop_in``, with the session's idempotent-write settings unset after it."""
    yield drop_in
    for key in ("txnAppId", "txnVersion", "txnVersion.autoReset.enabled"):
        drop_in.conf.unset(f"spark.databricks.delta.write.{key}")


def test_session_txn_settings_skip_as_delta_spark(drop_in, delta_spark, tmp_path):
    theirs = delta_spark.exec(f"t = {str(tmp_path / 'theirs')!r}\n" + SCRIPT)
    scope = {"spark": drop_in, "DeltaTable": DeltaTable, "t": str(tmp_path / "ours")}
    exec(SCRIPT, scope)     # noqa: S102 - the same statements on sqlext
    ours = scope["result"]
    assert theirs["merges"][1] == [] and len(theirs["merges"][0]) == 1
    assert theirs["skipped"] == [[], []]            # a skipped DELETE/UPDATE: no row
    assert theirs["after"] == [None, None]
    assert theirs["errors"] == [True]
    for key in ("merges", "skipped", "after", "errors", "txns", "rows", "ops"):
        assert ours[key] == theirs[key], key
