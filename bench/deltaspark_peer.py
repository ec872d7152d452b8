"""delta-spark as a benchmark peer (``--delta-spark`` in the bench scripts).

delta-spark 4.4 runs on pyspark 4.2 in ``.venv-delta`` (``scripts/venv_delta.sh``), in its own
process: the worker of ``tests/support/deltaspark.py``, started with the same Spark settings as
the benchmark's own session (master, shuffle partitions, time zone, timestamp type, driver
memory). Each operation is timed inside the worker (``time.perf_counter`` around the statement
and the collect of its result), so the pipe between the processes is not counted, as sqlext's
times do not count Python start-up either.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.support.deltaspark import DeltaSpark, delta_path  # noqa: E402

#: Settings copied from the benchmark's SparkSession to delta-spark's.
SHARED = ("spark.master", "spark.sql.shuffle.partitions", "spark.sql.session.timeZone",
          "spark.sql.parquet.outputTimestampType", "spark.driver.memory",
          "spark.sql.parquet.compression.codec", "spark.default.parallelism")

_TIMED = """
import time
_start = time.perf_counter()
_rows = spark.sql(STATEMENT).collect()
result = {"seconds": time.perf_counter() - _start, "rows": [r.asDict(recursive=True) for r in _rows][:5]}
"""

_TIMED_CODE = """
import time
value = None
{setup}
_start = time.perf_counter()
{code}
result = {{"seconds": time.perf_counter() - _start, "value": value}}
"""


class Peer:
    """A delta-spark worker for timing SQL statements next to sqlext."""

    def __init__(self, spark=None, log_path: str | None = None, settings: dict | None = None):
        """Start delta-spark with the SHARED settings of ``spark`` (a live session) or, for a
        benchmark without one, of ``settings`` (e.g. sqlext's ``LOCAL_DEFAULTS``)."""
        if spark is not None:
            settings = {k: spark.conf.get(k, None) for k in SHARED}
        conf = {k: str(v) for k, v in (settings or {}).items() if k in SHARED and v is not None}
        conf["spark.databricks.delta.retentionDurationCheck.enabled"] = "false"
        from pathlib import Path
        self.worker = DeltaSpark.start(conf=conf, log_path=Path(log_path) if log_path else None)

    def timed_sql(self, statement: str) -> tuple[float, list[dict]]:
        """Run one statement in delta-spark: (seconds, first rows of its result)."""
        answer = self.worker.exec(f"STATEMENT = {statement!r}\n" + _TIMED)
        return answer["seconds"], answer["rows"]

    def timed_code(self, code: str, setup: str = "") -> tuple[float, object]:
        """Run Python ``setup`` (untimed), then ``code`` (timed) in delta-spark's process, with
        ``spark`` in scope; (seconds, the value ``code`` leaves in ``value``)."""
        answer = self.worker.exec(_TIMED_CODE.format(setup=setup, code=code))
        return answer["seconds"], answer["value"]

    def close(self) -> None:
        self.worker.close()


def table(path: str) -> str:
    """``delta.`<path>``` for a statement on a table by path."""
    return delta_path(os.path.abspath(path))


def parquet(path: str) -> str:
    """``parquet.`<path>``` for a statement reading parquet files."""
    return "parquet.`" + os.path.abspath(path).replace("`", "``") + "`"
