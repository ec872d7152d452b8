"""sqlext on every supported pyspark: the core of the suite (both README quick starts, which
write, time-travel, DELETE, UPDATE, MERGE and read change feeds; delta-spark idioms; change
feed ranges; Structured Streaming's source, sink and idempotent foreachBatch on a classic
session, where 4.0/4.1 refuse the options needing admission control)
run under each older minor line's newest
release (scripts/pyspark-versions.txt, venvs made by scripts/venv_pyspark.sh, which ./test.sh
runs), each in its own pytest process; the main run covers the newest pyspark. And the check
that refuses a pyspark outside the range."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sqlext.engine.pyspark_version import require_supported
from sqlext.errors import SqlextError, UnsupportedPysparkError

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = [line.strip() for line in (ROOT / "scripts" / "pyspark-versions.txt").read_text()
            .splitlines() if line.strip() and not line.startswith("#")]
CORE = ["tests/engine/test_readme_python.py", "tests/sql/test_readme_sql.py",
        "tests/drop_in/test_drop_in.py", "tests/changes/test_changes_range.py",
        *(f"tests/streaming/test_{name}.py" for name in (
            "streaming_sink", "streaming_source", "streaming_source_options", "idempotent_dml",
            "streaming_lines"))]
# restarted Spark Connect queries whose last batch runs again (the Delta sink, a foreachBatch
# MERGE): they hung on pyspark 4.2 (sqlext.engine.streaming.sink.release_connect_batch)
CONNECT_RERUN = [f"tests/connect/test_connect_streaming.py::test_{name}" for name in (
    "source_and_sink_batches_restart_and_rerun",
    "foreach_batch_merge_is_idempotent_with_txn_settings")]


def _passes_on(version: str, tests: list[str], tmp_path) -> None:
    """Run ``tests`` with pytest under pyspark ``version``'s venv; all must pass."""
    python = ROOT / f".venv-pyspark-{version.rsplit('.', 1)[0]}" / "bin" / "python"
    assert python.exists(), f"{python} missing: run scripts/venv_pyspark.sh (./test.sh does)"
    found = subprocess.run([python, "-c", "import pyspark; print(pyspark.__version__)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert found == version
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_HOME"))}
    # its own basetemp: pytest's clean-up of old numbered temp dirs must not reach this run's
    run = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          f"--basetemp={tmp_path / 'inner'}", *tests],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, f"pyspark {version}:\n{run.stdout[-6000:]}\n{run.stderr[-3000:]}"
    assert " passed" in run.stdout and " failed" not in run.stdout


@pytest.mark.parametrize("version", VERSIONS)
def test_core_suite_passes_on_pyspark(version, tmp_path):
    _passes_on(version, CORE, tmp_path)


@pytest.mark.parametrize("version", [v for v in VERSIONS if v.startswith("4.2.")])
def test_connect_stream_rerun_finishes_on_pyspark(version, tmp_path):
    _passes_on(version, CONNECT_RERUN, tmp_path)


@pytest.mark.parametrize("version", ["3.5.6", "5.0.0", "2.4.8"])
def test_pyspark_outside_the_range_is_refused(version):
    with pytest.raises(UnsupportedPysparkError, match=f"found pyspark {version}.*pip install"):
        require_supported(version)
    assert issubclass(UnsupportedPysparkError, SqlextError)
    assert issubclass(UnsupportedPysparkError, ImportError)


def test_supported_releases_are_accepted():
    require_supported()                 # the main venv's, checked without importing pyspark
    for version in ["4.0.0", *VERSIONS, "4.9.9"]:
        require_supported(version)
