"""The Delta fixture tables kept in the repository (``tests/fixtures/delta-tables``).

The tables were written by delta-spark, Databricks and delta-rs (see ``tests/fixtures/README.md``).
Never write to them in place: :func:`copy_fixture` copies one to a temporary directory and
restores the commit files' modification times, which git does not keep and which timestamp
time travel depends on.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
_COMMIT_FILE = re.compile(r"^(\d{20})\.json$")


#: Directory holding one sub-directory per fixture table.
FIXTURES_DIR: Path = REPO_ROOT / "tests" / "fixtures" / "delta-tables"


def fixture_names() -> list[str]:
    """Sorted names of the fixture tables (directories with a ``_delta_log``); [] if none."""
    if not FIXTURES_DIR.is_dir():
        return []
    return sorted(p.name for p in FIXTURES_DIR.iterdir() if (p / "_delta_log").is_dir())


def fixture_path(name: str) -> Path:
    """Path of the read-only original of fixture ``name``; KeyError naming the known ones."""
    path = FIXTURES_DIR / name
    if not (path / "_delta_log").is_dir():
        raise KeyError(f"no fixture table {name!r} in {FIXTURES_DIR}; known: {fixture_names()}")
    return path


def commit_timestamps(table: str | os.PathLike) -> dict[int, int | None]:
    """``{version: commitInfo.timestamp in ms (None if absent)}`` for each json commit file."""
    log = Path(table) / "_delta_log"
    result: dict[int, int | None] = {}
    for entry in sorted(log.iterdir()):
        match = _COMMIT_FILE.match(entry.name)
        if match:
            result[int(match.group(1))] = _commit_info_timestamp(entry)
    return result


def _commit_info_timestamp(commit_file: Path) -> int | None:
    for line in commit_file.read_text().splitlines():
        if line.strip():
            action = json.loads(line)
            if "commitInfo" in action:
                return action["commitInfo"].get("timestamp")
    return None


def copy_fixture(name: str, dest: str | os.PathLike) -> Path:
    """Copy fixture table ``name`` to ``dest`` (must not exist yet) and return ``dest``, with
    its commit times restored (:func:`restore_commit_times`)."""
    dest = Path(dest)
    shutil.copytree(fixture_path(name), dest)
    restore_commit_times(dest)
    return dest


def restore_commit_times(table: str | os.PathLike) -> None:
    """Set the file times of a table's log as its writers left them (git and source archives do
    not keep them; sqlext times commits by file, timestamp time travel and change feeds too).

    Each ``_delta_log/NNN.json`` gets its mtime (atime too) set to its ``commitInfo.timestamp``;
    a commit without one gets the previous commit's time + 1 ms. A checkpoint
    ``NNN.checkpoint*.parquet`` gets the mtime of commit NNN. Idempotent.
    """
    log = Path(table) / "_delta_log"
    previous_ms: int | None = None
    mtimes: dict[int, int] = {}
    for version, ts_ms in commit_timestamps(table).items():
        if ts_ms is None:
            ts_ms = previous_ms + 1 if previous_ms is not None else _mtime_ms(log / f"{version:020d}.json")
        mtimes[version] = previous_ms = ts_ms
        _set_mtime_ms(log / f"{version:020d}.json", ts_ms)
    for checkpoint in log.glob("*.checkpoint*.parquet"):
        version = int(checkpoint.name[:20])
        if version in mtimes:
            _set_mtime_ms(checkpoint, mtimes[version])


def _mtime_ms(path: Path) -> int:
    return path.stat().st_mtime_ns // 1_000_000


def _set_mtime_ms(path: Path, ms: int) -> None:
    ns = ms * 1_000_000
    os.utime(path, ns=(ns, ns))
