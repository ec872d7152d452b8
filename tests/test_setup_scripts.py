"""The set-up around the suite (test.sh, scripts/): what a run of chosen tests builds, and that it
needs nothing outside the repository (no Maven, no team folder beside the clone). No Spark, no network: test.sh's
selection runs in its dry-run mode (SQLEXT_SETUP_DRY_RUN=1), which prints the steps."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALL = [".venv", ".venv-delta", ".venv-pyspark-*", "s3a jars", "delta-rs test tables"]


def dry_run(*args: str) -> tuple[list[str], str]:
    """(the set-up steps ./test.sh would run for ``args``, the pytest arguments line)."""
    out = subprocess.run(["bash", str(ROOT / "test.sh"), *args], capture_output=True, text=True,
                         check=True, env={**os.environ, "SQLEXT_SETUP_DRY_RUN": "1"}, timeout=60)
    lines = out.stderr.splitlines()
    steps = [line.split(": ")[1] for line in lines if line.startswith("setup (dry run): ")]
    pytest_line = next(line for line in lines if line.startswith("pytest (dry run):"))
    return steps, pytest_line.removeprefix("pytest (dry run):").strip()


@pytest.mark.parametrize("args, steps", [
    ((), ALL),                                                          # no path: everything
    (("-x", "-q"), ALL),
    (("tests",), ALL),
    ((".",), ALL),
    (("tests/log/x.py",), [".venv"]),
    (("tests/log", "-k", "deltaspark or compat"), [".venv"]),          # -k's value is no path
    (("tests/deltaspark",), [".venv", ".venv-delta"]),
    (("./tests/deltaspark/test_deltaspark_interop.py::test_x", "-x"), [".venv", ".venv-delta"]),
    ((str(ROOT / "tests" / "deltaspark") + "/",), [".venv", ".venv-delta"]),
    (("tests/compat",), [".venv", ".venv-pyspark-*", "delta-rs test tables"]),
    (("tests/compat/test_delta_rs_tables.py",), [".venv", "delta-rs test tables"]),
    (("tests/compat/test_pyspark_versions.py",), [".venv", ".venv-pyspark-*"]),
    (("tests/storage", "tests/log"), [".venv", "s3a jars"]),
    (("tests/storage/test_s3.py::test_y",), [".venv", "s3a jars"]),
    (("--quick",), [".venv", "s3a jars"]),                             # no slow suite, no peers
    (("--quick", "tests/deltaspark"), [".venv"]),
])
def test_setup_builds_what_the_selected_tests_need(args, steps):
    assert dry_run(*args)[0] == steps


def test_quick_passes_the_marker_and_the_rest_to_pytest():
    assert dry_run("--quick", "tests/log", "-x")[1] == r"-m not\ slow tests/log -x"
    assert dry_run("tests/log", "-x")[1] == "tests/log -x"


def test_slow_marker_covers_the_suites_quick_skips_building_for():
    conftest = (ROOT / "tests" / "conftest.py").read_text()
    assert 'SLOW_SUITES = ("deltaspark", "compat")' in conftest


def _files(*roots: str):
    for root in roots:
        path = ROOT / root
        if path.is_file():
            yield path
            continue
        for file in sorted(path.rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts:
                yield file


SET_UP = ("scripts", "test.sh", "demo.sh", ".ci")


def test_no_set_up_needs_maven():
    assert not list((ROOT / "scripts").rglob("pom.xml"))
    callers = [str(f.relative_to(ROOT)) for f in _files(*SET_UP) if b"mvn " in f.read_bytes()]
    assert callers == []


def test_nothing_reads_outside_the_repository():
    here = Path(__file__).resolve()
    # spelled in pieces so that this file, which names them, is not itself a reader to a grep
    outside = (b"../" + b"shared", b"SQLEXT_" + b"FIXTURES")
    readers = [str(f.relative_to(ROOT)) for f in _files(*SET_UP, "tests")
               if f != here and any(name in f.read_bytes() for name in outside)]
    assert readers == []
