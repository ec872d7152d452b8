"""The Delta sink of a streaming query, as delta-spark's ``DeltaSink``: each micro-batch is one
commit carrying ``txn(appId=<query id>, version=<batch id>)``, so a batch Spark runs again after
a failure (its offsets logged, its commit not) is recognised from the table's log and skipped:
every row is written once. ``append`` adds the batch's rows; ``complete`` replaces the table's
rows with them. The commit's operation is ``STREAMING UPDATE`` with ``outputMode``, ``queryId``
and ``epochId``, as delta-spark records it.

Spark runs the query (its trigger, its checkpoint); sqlext gives it a ``foreachBatch`` function
(:func:`batch_writer`), so the checkpoint is Spark's own and nothing runs on the executors but
the batch's own write.
"""

from __future__ import annotations

from typing import Callable

from pyspark.sql import DataFrame

from sqlext.errors import SqlextError, UnsupportedOperationError
from sqlext.log import operations as ops
from sqlext.log.table_ref import TableRef

#: the SparkContext local property Spark's stream thread sets to the query's id (persisted in
#: the checkpoint's ``metadata`` file: the same id across restarts)
QUERY_ID_KEY = "sql.streaming.queryId"
#: delta-spark's name for the data source in its output-mode error
DELTA_SOURCE_CLASS = "org.apache.spark.sql.delta.sources.DeltaDataSource"
OUTPUT_MODES = {"append": "Append", "complete": "Complete"}
TRUE = ("true", "1", "yes")


def output_mode(mode: str | None) -> str:
    """delta-spark's name of a query's output mode (``Append``/``Complete``); ``update`` (or
    anything else) is refused as delta-spark refuses it, before the query starts."""
    key = str(mode or "append").lower()
    if key not in OUTPUT_MODES:
        name = key.capitalize()
        raise UnsupportedOperationError(
            f"[DELTA_UNSUPPORTED_OUTPUT_MODE] Data source {DELTA_SOURCE_CLASS} does not support "
            f"{name} output mode (a Delta sink takes append or complete)",
            error_class="DELTA_UNSUPPORTED_OUTPUT_MODE", sqlstate="0AKDC")
    return OUTPUT_MODES[key]


def sink_arguments(options: dict, complete: bool) -> dict:
    """:func:`sqlext.engine.write.write`'s arguments for the stream writer's options (keys
    lower-cased): ``mergeSchema``, ``overwriteSchema`` (complete mode only, as delta-spark),
    ``userMetadata``, ``delta.*`` table properties for a table the first batch creates. Spark's
    own options (``checkpointLocation``, ...) are Spark's; ``txnAppId``/``txnVersion`` are
    refused: the query's id and batch id are the stream's transaction."""
    if "txnappid" in options or "txnversion" in options:
        raise SqlextError("a streaming write to a Delta table is idempotent by itself (its "
                          "commits carry the query id and batch id): drop the txnAppId/"
                          "txnVersion options, or use foreachBatch with sqlext.write")
    arguments: dict = {}
    if str(options.get("mergeschema", "")).lower() in TRUE:
        arguments["mergeSchema"] = True
    if complete and str(options.get("overwriteschema", "")).lower() in TRUE:
        arguments["overwriteSchema"] = True
    if options.get("usermetadata") is not None:
        arguments["userMetadata"] = str(options["usermetadata"])
    configuration = {k: str(v) for k, v in options.items() if k.startswith("delta.")}
    if configuration:
        arguments["configuration"] = configuration
    return arguments


def batch_writer(table_ref: TableRef, mode: str, partition_by: list[str] | None,
                 arguments: dict, checkpoint: str | None = None, write: Callable | None = None
                 ) -> Callable[[DataFrame, int], None]:
    """The ``foreachBatch`` function of a query writing to ``table_ref`` (resolved when the
    query started) in output ``mode`` (:func:`output_mode`). ``checkpoint``: the query's
    checkpoint location, whose ``metadata`` gives the query id (Spark Connect, where the
    function runs in a server-side worker without the stream thread's properties); None: the
    stream thread's :data:`QUERY_ID_KEY`. ``write``: see :func:`write_micro_batch`."""
    complete = mode == "Complete"

    def write_batch(df: DataFrame, batch_id: int) -> None:
        query_id = checkpoint_query_id(checkpoint) if checkpoint is not None else None
        try:
            write_micro_batch(df, batch_id, table_ref, mode, partition_by, arguments, complete,
                              query_id, write)
        finally:
            if checkpoint is not None:
                release_connect_batch(df)
    return write_batch


class ReleasingBatchFunction:
    """A user's ``foreachBatch`` function on a Spark Connect session after ``sqlext.install``,
    followed by :func:`release_connect_batch` of its batch DataFrame, so that a batch the
    function leaves alone (a MERGE skipped by its ``txnVersion``) does not hang pyspark 4.2's
    worker. Pickled to the server by reference (sqlext is installed there)."""

    def __init__(self, func: Callable[[DataFrame, int], None]):
        self.func = func

    def __call__(self, df: DataFrame, batch_id: int):
        try:
            return self.func(df, batch_id)
        finally:
            release_connect_batch(df)


def release_connect_batch(df: DataFrame) -> None:
    """Release a Spark Connect foreachBatch worker's batch DataFrame (the server's cached
    relation) with an ordinary command, and disarm the release its garbage collection would
    make. pyspark's ``CachedRemoteRelation.__del__`` sends it as a unary gRPC call to the
    server-streaming ``ExecutePlan``; a pyspark 4.2 server answers it with more than one
    message and the call never returns, so a batch DataFrame collected inside the worker (a
    batch the sink skips, its DataFrame freed as the function returns) hangs the query for
    good. Nothing to do on a classic session."""
    plan = getattr(df, "_plan", None)
    if type(plan).__name__ != "CachedRemoteRelation" or plan._relation_id is None:
        return
    from pyspark.sql.connect.plan import RemoveRemoteCachedRelation
    client = df.sparkSession.client
    try:
        client.execute_command(RemoveRemoteCachedRelation(plan).command(session=client))
    finally:
        plan._relation_id = None


def checkpoint_query_id(checkpoint: str) -> str:
    """The id of the query whose checkpoint is at ``checkpoint`` (Spark writes it to the
    checkpoint's ``metadata`` file before the first batch; it stays across restarts)."""
    import json

    from sqlext.log.storage import is_local, normalize_location, store_for
    location = normalize_location(checkpoint) if is_local(checkpoint) else checkpoint.rstrip("/")
    store = store_for(location)
    try:
        return json.loads(store.read(store.join(location, "metadata")))["id"]
    except (OSError, KeyError, ValueError) as exc:
        raise SqlextError(f"writing a micro-batch: no streaming query id in the checkpoint "
                          f"{checkpoint} ({exc}); the query's checkpointLocation must be "
                          "readable where its foreachBatch runs") from None


def write_micro_batch(df: DataFrame, batch_id: int, table_ref: TableRef, mode: str,
                      partition_by: list[str] | None, arguments: dict,
                      complete: bool | None = None, query_id: str | None = None,
                      write: Callable | None = None) -> int:
    """Commit one micro-batch (skipped when the log already has this query's ``txn`` at
    ``batch_id`` or later); returns the table's version. ``query_id``: the stream thread's
    (:data:`QUERY_ID_KEY`) unless given. ``write``: the write command, called as
    :func:`sqlext.engine.write.write` (the caller's, e.g. one that registers a new table's
    name: :func:`sqlext.names.write`); None: the engine's."""
    if write is None:
        from sqlext.engine.write import write
    spark = df.sparkSession
    if query_id is None:
        query_id = spark.sparkContext.getLocalProperty(QUERY_ID_KEY)
    if not query_id:
        raise SqlextError(f"writing a micro-batch to {table_ref.display}: no streaming query "
                          "id on this thread (call it from a query's foreachBatch, or pass "
                          "query_id)")
    complete = mode == "Complete" if complete is None else complete
    return write(spark, df, table_ref, "overwrite" if complete else "append", partition_by,
                 txnAppId=query_id, txnVersion=int(batch_id), partitionOverwriteMode="static",
                 operation=ops.StreamingUpdate(mode, query_id, int(batch_id)),
                 **arguments)
