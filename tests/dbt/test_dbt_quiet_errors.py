"""A failing dbt model reports its Spark error once (issue 27): dbt's error, without pyspark's
query context log (``SQLQueryContextLogger``, a JSON block with the JVM's stack) on standard
error first. The adapter's connection is prepared by sqlext, which keeps that log out of the
errors it reports; the test takes the log's filter away first, so the run must put it back."""

from __future__ import annotations

import logging
import uuid

import yaml

from sqlext.engine import session as sqlext_session


class _Records(logging.Handler):
    """The records a logger lets through to its handlers."""

    def __init__(self):
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _unquiet() -> list:
    """Take sqlext's filter off pyspark's query context loggers; a handler on each that
    collects what they log (their own handlers write to the standard error of the moment
    they were made)."""
    from pyspark.logger import PySparkLogger

    collected = _Records()
    for name in sqlext_session.QUERY_CONTEXT_LOGGERS:
        logger = PySparkLogger.getLogger(name)
        for f in [f for f in logger.filters if type(f).__module__ == sqlext_session.__name__]:
            logger.removeFilter(f)
        logger.addHandler(collected)
    sqlext_session._QUIETED = False
    return collected


def _remove(collected: logging.Handler) -> None:
    from pyspark.logger import PySparkLogger

    for name in sqlext_session.QUERY_CONTEXT_LOGGERS:
        PySparkLogger.getLogger(name).removeHandler(collected)


def test_a_failing_model_prints_no_query_context_log(spark, tmp_path, capfd):
    from dbt.cli.main import dbtRunner

    schema = f"quiet_{uuid.uuid4().hex[:8]}"
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "bad.sql").write_text("select nope from range(1)")
    (tmp_path / "dbt_project.yml").write_text(yaml.safe_dump({
        "name": "quiet", "version": "1.0", "config-version": 2, "profile": "quiet",
        "models": {"quiet": {"+materialized": "table"}}}))
    (tmp_path / "profiles.yml").write_text(yaml.safe_dump({"quiet": {
        "target": "dev", "outputs": {"dev": {"type": "sqlext", "schema": schema, "threads": 1}}}}))
    collected = _unquiet()
    try:
        capfd.readouterr()
        result = dbtRunner().invoke(["run", "--project-dir", str(tmp_path),
                                     "--profiles-dir", str(tmp_path)])
        out, err = capfd.readouterr()
    finally:
        _remove(collected)
        sqlext_session.quiet_query_context_logs()
    assert not result.success
    assert [r.name for r in collected.records] == []
    assert "SQLQueryContextLogger" not in out + err and '{"ts"' not in err, err[:3000]
    assert "nope" in out + err          # dbt's own report of the model's error
