"""A streaming query into a sqlext table, for the streaming fault tests: ``python
tests/faults/stream_worker.py <mode> <input> <table> <checkpoint> [<kill>]``.

``mode``: ``sink`` (``writeStream.format("delta")``, sqlext's sink) or ``merge`` (``foreachBatch``
upserting with the session's ``spark.databricks.delta.write.txnAppId``/``txnVersion``). The query
reads the JSON files of ``input`` one per batch (``Trigger.AvailableNow``). ``kill``
(``before:<batch>`` / ``after:<batch>``) makes the process SIGKILL itself (driver and, with it,
its JVM) just before or just after the commit of that batch: the batch's files written but not
committed, or committed with Spark's checkpoint not yet recording the batch."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def _arm(kill: str | None) -> None:
    if not kill:
        return
    from sqlext.log.transaction import Transaction
    when, batch = kill.split(":")
    original = Transaction.commit

    def commit(self, actions, operation, parameters=None, *args, **kwargs):
        actions = list(actions)
        ours = any(getattr(a, "version", None) == int(batch) and hasattr(a, "app_id")
                   for a in actions)
        if ours and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        version = original(self, actions, operation, parameters, *args, **kwargs)
        if ours and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
        return version
    Transaction.commit = commit


def main(mode: str, source: str, table: str, checkpoint: str, kill: str | None = None) -> None:
    import sqlext
    from sqlext.tables import DeltaTable
    spark = sqlext.session(master="local[1]", **{"spark.sql.shuffle.partitions": "1",
                                                 "spark.ui.enabled": "false"})
    if mode == "merge" and not os.path.isdir(os.path.join(table, "_delta_log")):
        sqlext.write(spark.range(0).selectExpr("id", "0L AS n"), table)
    sqlext.install(spark)
    _arm(kill)
    stream = (spark.readStream.schema("id long, n long").option("maxFilesPerTrigger", 1)
              .json(source))
    if mode == "sink":
        writer = stream.writeStream.format("delta")
        query = (writer.option("checkpointLocation", checkpoint).trigger(availableNow=True)
                 .start(table))
    else:
        def upsert(batch, batch_id):
            batch.sparkSession.conf.set("spark.databricks.delta.write.txnAppId", "upsert-t")
            batch.sparkSession.conf.set("spark.databricks.delta.write.txnVersion", str(batch_id))
            (DeltaTable.forPath(batch.sparkSession, table).alias("t")
             .merge(batch.alias("s"), "t.id = s.id")
             .whenMatchedUpdate(set={"n": "t.n + s.n"}).whenNotMatchedInsertAll().execute())
        query = (stream.writeStream.foreachBatch(upsert).option("checkpointLocation", checkpoint)
                 .trigger(availableNow=True).start())
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
