"""delta-spark as an oracle: a worker process on pyspark 4.2 + delta-spark 4.4, driven over pipes.

sqlext runs on pyspark 4.3, which delta-spark does not support, so delta-spark lives in its own
virtualenv ``.venv-delta`` (``scripts/venv_delta.sh``, run by ``./test.sh``; :func:`ensure_venv`
runs it too, so a plain ``pytest`` works). :class:`DeltaSpark` starts
``tests/support/deltaspark_worker.py`` there once (its JVM takes 10-30 s to start) and sends it
JSON requests; tables come back as ``pyarrow.Table``. A failed request raises
:class:`DeltaSparkError` carrying delta-spark's exception class and error condition.

    ds = DeltaSpark.start()
    ds.sql("DELETE FROM delta.`/t` WHERE id = 1")            # -> pa.Table (the metrics row)
    ds.read_versions("/t", [0, 1, 2])                         # every version, one Spark job
    ds.changes("/t", 0)                                       # table_changes
    ds.history("/t")                                          # DESCRIBE HISTORY
    ds.batch([("sql", {"sql": ...}), ...])                    # many requests, one round trip
    pending = ds.submit("exec", code=...); ...; pending.result()   # overlap with other work
    ds.close()
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa

REPO_ROOT = Path(__file__).resolve().parents[2]
VENV = REPO_ROOT / ".venv-delta"
WORKER = Path(__file__).with_name("deltaspark_worker.py")
SETUP = REPO_ROOT / "scripts" / "venv_delta.sh"
_setup_lock = threading.Lock()


class DeltaSparkError(Exception):
    """A request delta-spark failed: ``java_class`` (e.g.
    ``io.delta.exceptions.ConcurrentAppendException``), ``condition`` (Spark's error class,
    e.g. ``DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE``) and the message."""

    def __init__(self, info: dict):
        self.info = info
        self.type = info.get("type")
        self.java_class = info.get("java_class")
        self.condition = info.get("condition")
        self.message = info.get("message", "")
        super().__init__(f"{self.java_class or self.type} [{self.condition}]: {self.message[:1500]}")


def ensure_venv() -> Path:
    """Create or refresh ``.venv-delta`` (no-op when its stamp is current); its python."""
    with _setup_lock:
        subprocess.run(["bash", str(SETUP)], check=True, cwd=REPO_ROOT)
    return VENV / "bin" / "python"


def _decode(value):
    if isinstance(value, dict) and set(value) == {"arrow"}:
        with pa.ipc.open_stream(base64.b64decode(value["arrow"])) as reader:
            return reader.read_all()
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


class Pending:
    """A request sent and not yet answered; :meth:`result` waits for the answer."""

    def __init__(self, owner: "DeltaSpark", request_id: int, then=None):
        self._owner = owner
        self._id = request_id
        self._then = then

    def result(self):
        answer = self._owner._receive(self._id)
        return self._then(answer) if self._then else answer


class DeltaSpark:
    """One delta-spark worker process (see the module docstring)."""

    def __init__(self, process: subprocess.Popen, log_path: Path | None):
        self._process = process
        self.log_path = log_path
        self._ids = itertools.count(1)
        self.versions = self._receive(0)

    @classmethod
    def start(cls, conf: dict[str, str] | None = None, log_path: Path | None = None) -> "DeltaSpark":
        """Start a worker (sets up ``.venv-delta`` first if needed) with extra Spark ``conf``.

        The worker's stderr (Spark's log) goes to ``log_path`` if given, else is discarded."""
        python = ensure_venv()
        conf = {"spark.sql.session.timeZone": "UTC",
                "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS", **(conf or {})}
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "SPARK_HOME", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
        env["PYSPARK_PYTHON"] = str(python)
        env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        stderr = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
        process = subprocess.Popen(
            [str(python), str(WORKER), json.dumps(conf)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env, text=True,
            cwd=str(log_path.parent) if log_path else None,
        )
        if log_path:
            stderr.close()
        return cls(process, log_path)

    def _receive(self, request_id: int):
        line = self._process.stdout.readline()
        if not line:
            code = self._process.wait()
            raise RuntimeError(f"delta-spark worker exited ({code}); its log: {self.log_path}")
        answer = json.loads(line)
        if answer.get("id") != request_id:
            raise RuntimeError(f"delta-spark worker answered request {answer.get('id')}, "
                               f"expected {request_id}")
        if "error" in answer:
            raise DeltaSparkError(answer["error"])
        return _decode(answer["ok"])

    def submit(self, op: str, **fields) -> Pending:
        """Send one request without waiting; answers come back in the order sent."""
        request_id = next(self._ids)
        self._process.stdin.write(json.dumps({"id": request_id, "op": op, **fields}) + "\n")
        self._process.stdin.flush()
        return Pending(self, request_id)

    def request(self, op: str, **fields):
        """Send one request and wait for its answer."""
        return self.submit(op, **fields).result()

    def sql(self, text: str) -> pa.Table:
        """Run one SQL statement; its result as a table."""
        return self.request("sql", sql=text)

    def read_versions(self, path, versions) -> pa.Table:
        """Rows of ``path`` at each of ``versions``, with a ``_version`` column."""
        return self.request("read_versions", path=str(path), versions=list(versions))

    def changes(self, path, start: int, end: int | None = None) -> pa.Table:
        """delta-spark's change feed of ``path`` for versions ``start..end``."""
        return self.request("changes", path=str(path), start=start, end=end)

    def history(self, path) -> pa.Table:
        """DESCRIBE HISTORY of ``path``."""
        return self.request("history", path=str(path))

    def exec(self, code: str):
        """Run Python in the worker (``spark``, ``DeltaTable``, ``F`` in scope); ``result``."""
        return self.request("exec", code=code)

    def submit_batch(self, requests) -> Pending:
        """:meth:`batch` without waiting: its ``result()`` is the list of answers."""
        pending = self.submit("batch", requests=[{"op": op, **fields} for op, fields in requests])
        return Pending(self, pending._id, then=lambda answers: [
            DeltaSparkError(a["error"]) if "error" in a else _decode(a["ok"]) for a in answers])

    def batch(self, requests, check: bool = False) -> list:
        """Run ``[(op, fields), ...]`` in one round trip; each item a value or a DeltaSparkError
        (with ``check``, the first error is raised instead)."""
        answers = self.submit_batch(requests).result()
        errors = [a for a in answers if isinstance(a, DeltaSparkError)]
        if check and errors:
            raise errors[0]
        return answers

    def close(self) -> None:
        """Stop the worker's SparkSession and wait for it to exit."""
        if self._process.poll() is None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


def delta_path(path) -> str:
    """``delta.`<path>``` for SQL on a table by path, backticks doubled."""
    return "delta.`" + str(path).replace("`", "``") + "`"


if __name__ == "__main__":  # manual check: python -m tests.support.deltaspark
    ds = DeltaSpark.start()
    print(ds.versions, file=sys.stderr)
    ds.close()


def run_on_both(spark, oracle: "DeltaSpark", source: str, table: str, checkpoints,
                cases: dict[str, dict]) -> tuple[dict, dict]:
    """``(theirs, ours)``: for each case ``name -> options``, the value of
    ``run(spark, table, checkpoint, options)`` that ``source`` defines, run by delta-spark
    (``oracle``) and by this process on ``spark``, each with checkpoints of its own under
    ``checkpoints`` (a streaming query read the same way by both engines)."""
    theirs = oracle.exec(source + f"""
result = {{name: run(spark, {table!r}, {str(Path(checkpoints) / 'delta-spark')!r} + "/" + name, opts)
          for name, opts in {cases!r}.items()}}
""")
    scope: dict = {}
    exec(source, scope)     # noqa: S102 - the same reader on sqlext
    ours = {name: scope["run"](spark, table, str(Path(checkpoints) / "sqlext" / name), opts)
            for name, opts in cases.items()}
    return theirs, ours

