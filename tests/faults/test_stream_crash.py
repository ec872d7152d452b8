"""A streaming query into a sqlext table killed (SIGKILL of its driver process, JVM included)
just before or just after a batch's commit, then restarted on the same checkpoint: every input
row is in the table exactly once (issue 28). Through sqlext's Delta sink (txn = query id and
batch id) and through the idempotent MERGE in foreachBatch (the session's txnAppId/txnVersion).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sqlext.log.actions import SetTransaction
from sqlext.log.table import DeltaLog

WORKER = Path(__file__).with_name("stream_worker.py")
BATCHES = 4


def _inputs(folder: Path) -> None:
    folder.mkdir()
    for b in range(BATCHES):
        # ids 0..2 in every batch (merge: counts add up), and one id new in each
        (folder / f"part-{b}.json").write_text("".join(
            json.dumps({"id": i, "n": 1}) + "\n" for i in (0, 1, 2, 10 + b)))


def _run(*args) -> int:
    proc = subprocess.run([sys.executable, str(WORKER), *map(str, args)], timeout=400,
                          capture_output=True, text=True)
    if proc.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(proc.stderr[-3000:])
    return proc.returncode


def _txns(table: str) -> list[int]:
    """The batch ids the table's commits record, one entry a commit."""
    log = DeltaLog(table)
    out = []
    for v in range(log.latest_version() + 1):
        out += [a.version for a in log.read_commit(v) if isinstance(a, SetTransaction)]
    return out


def _rows(table: str) -> list[dict]:
    log = DeltaLog(table)
    files = log.snapshot().files
    assert all(f.deletion_vector is None for f in files)
    return [r for f in files for r in pq.read_table(log.data_path(f.path)).to_pylist()]


@pytest.mark.slow
@pytest.mark.parametrize("kill", ["before:2", "after:2"])
@pytest.mark.parametrize("mode", ["sink", "merge"])
def test_killed_stream_restarted_writes_every_row_once(tmp_path, mode, kill):
    source, table, ck = tmp_path / "in", str(tmp_path / "t"), tmp_path / "ck"
    _inputs(source)
    assert _run(mode, source, table, ck, kill) == -signal.SIGKILL
    committed = _txns(table)
    assert committed == ([0, 1] if kill.startswith("before") else [0, 1, 2])
    assert _run(mode, source, table, ck) == 0
    assert sorted(_txns(table)) == list(range(BATCHES))     # each batch committed once
    rows = sorted((r["id"], r["n"]) for r in _rows(table))
    if mode == "sink":
        expected = sorted([(i, 1) for i in (0, 1, 2) for _ in range(BATCHES)]
                          + [(10 + b, 1) for b in range(BATCHES)])
    else:
        expected = [(0, BATCHES), (1, BATCHES), (2, BATCHES)] + [(10 + b, 1)
                                                                  for b in range(BATCHES)]
    assert rows == expected
    assert os.path.isdir(ck / "commits")
