"""delta-spark worker: a long-lived process in ``.venv-delta`` that runs delta-spark commands.

Started by :mod:`tests.support.deltaspark` (never imported by the test suite: it runs on
pyspark 4.2 with delta-spark's jars, which sqlext's own virtualenv does not have). It reads one
JSON request per line on stdin and answers each with one JSON line on the stdout it was started
with. Spark's and the JVM's own output goes to stderr: fd 1 is pointed at stderr before the JVM
starts, so nothing but answers reaches the reader.

Argument: a JSON object of Spark settings (added to the Delta extension, ``spark.jars`` and
the quiet defaults below).

Requests (``{"id": n, "op": ..., ...}``); every answer is ``{"id": n, "ok": <value>}`` or
``{"id": n, "error": {"type", "java_class", "condition", "message"}}``. Tables travel as
``{"arrow": <base64 Arrow IPC stream>}``.

- ``sql``: ``{"sql": text}`` -> the statement's result (query rows, or a command's result row).
- ``batch``: ``{"requests": [...]}`` -> a list of answers, each ``{"ok": ...}`` or ``{"error": ...}``.
- ``read_versions``: ``{"path", "versions": [..]}`` -> every version's rows in one table with
  a ``_version`` column (one Spark job).
- ``changes``: ``{"path", "start", "end"}`` -> the change feed of versions start..end.
- ``history``: ``{"path"}`` -> DESCRIBE HISTORY.
- ``exec``: ``{"code": text}`` -> runs Python with ``spark``, ``DeltaTable``, ``F`` in scope;
  answers the value the code leaves in ``result`` (a DataFrame or pyarrow Table travels as a
  table, anything else as JSON).
"""

from __future__ import annotations

import base64
import glob
import json
import os
import sys
import traceback

_QUIET = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    # Delta's log replay runs as a Spark job with this many partitions (default 50).
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


def _session(conf: dict[str, str]):
    from pyspark.sql import SparkSession

    jars_dir = os.path.join(sys.prefix, "jars")
    jars = sorted(glob.glob(os.path.join(jars_dir, "*.jar")))
    if not any(os.path.basename(j).startswith("delta-spark_") for j in jars):
        raise SystemExit(f"no delta-spark jar in {jars_dir}: run scripts/venv_delta.sh")
    builder = SparkSession.builder.master(conf.pop("spark.master", "local[2]"))
    for key, value in {**_QUIET, "spark.jars": ",".join(jars), **conf}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _table(value) -> dict:
    import pyarrow as pa

    if not isinstance(value, pa.Table):
        value = value.toArrow()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, value.schema) as writer:
        writer.write_table(value)
    return {"arrow": base64.b64encode(sink.getvalue().to_pybytes()).decode("ascii")}


def _error(exc: BaseException) -> dict:
    java = getattr(exc, "_origin", None) or getattr(exc, "java_exception", None)
    java_class = None
    if java is not None:
        try:
            java_class = java.getClass().getName()
        except Exception:  # noqa: BLE001 - best effort: the message still says what happened
            java_class = None
    condition = None
    if hasattr(exc, "getCondition"):
        try:
            condition = exc.getCondition()
        except Exception:  # noqa: BLE001
            condition = None
    message = str(exc)
    if not message.strip():
        message = "".join(traceback.format_exception(exc))
    return {"type": type(exc).__name__, "java_class": java_class, "condition": condition,
            "message": message[:4000]}


class Worker:
    """Answers requests against one SparkSession with delta-spark loaded."""

    def __init__(self, spark):
        self.spark = spark

    def handle(self, request: dict):
        return getattr(self, "op_" + request["op"])(request)

    def op_ping(self, request):
        import delta
        import pyspark

        jar = glob.glob(os.path.join(sys.prefix, "jars", "delta-spark_*.jar"))[0]
        return {"pyspark": pyspark.__version__,
                "delta_jar": os.path.basename(jar)[: -len(".jar")].rsplit("-", 1)[1],
                "delta_pip": getattr(delta, "__version__", None)}

    def op_sql(self, request):
        return _table(self.spark.sql(request["sql"]))

    def op_batch(self, request):
        answers = []
        for sub in request["requests"]:
            try:
                answers.append({"ok": self.handle(sub)})
            except Exception as exc:  # noqa: BLE001 - each answer carries its own error
                answers.append({"error": _error(exc)})
        return answers

    def op_read_versions(self, request):
        from pyspark.sql import functions as F

        frames = [
            self.spark.read.format("delta").option("versionAsOf", v).load(request["path"])
            .withColumn("_version", F.lit(v))
            for v in request["versions"]
        ]
        union = frames[0]
        for frame in frames[1:]:
            union = union.unionByName(frame, allowMissingColumns=True)
        return _table(union)

    def op_changes(self, request):
        reader = (self.spark.read.format("delta").option("readChangeFeed", "true")
                  .option("startingVersion", request["start"]))
        if request.get("end") is not None:
            reader = reader.option("endingVersion", request["end"])
        return _table(reader.load(request["path"]))

    def op_history(self, request):
        path = request["path"].replace("`", "``")
        return _table(self.spark.sql(f"DESCRIBE HISTORY delta.`{path}`"))

    def op_exec(self, request):
        import pyarrow as pa
        from delta.tables import DeltaTable
        from pyspark.sql import DataFrame
        from pyspark.sql import functions as F

        scope = {"spark": self.spark, "DeltaTable": DeltaTable, "F": F, "pa": pa, "result": None}
        exec(request["code"], scope)  # noqa: S102 - test harness: code comes from the tests
        result = scope["result"]
        if isinstance(result, (DataFrame, pa.Table)):
            return _table(result)
        return result


def main() -> None:
    conf = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the JVM and Spark inherit fd 1: keep their output off the answer channel
    sys.stdout = sys.stderr
    worker = Worker(_session(conf))
    answers.write(json.dumps({"id": 0, "ok": worker.op_ping({})}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = {"id": request.get("id"), "ok": worker.handle(request)}
        except Exception as exc:  # noqa: BLE001 - reported to the caller, the worker goes on
            answer = {"id": request.get("id"), "error": _error(exc)}
        answers.write(json.dumps(answer, default=str) + "\n")
    worker.spark.stop()


if __name__ == "__main__":
    main()
