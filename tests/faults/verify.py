"""Checks after a fault: every version reads and holds exactly what replaying the committed
operations gives (so no commit is partly visible), deltalake agrees, VACUUM removes the orphans,
and the table takes new commits."""

from __future__ import annotations

import os
import random
from pathlib import Path

from sqlext.log.vacuum import collect_garbage
from sqlext.log.actions import decode_path
from sqlext.log.table import DeltaLog
from tests.support import fault_ops as ops
from tests.support.kernel_tables import clear_caches
from tests.support import read_deltalake


def verify_history(path, op_for_version: dict[int, dict], rng: random.Random | None = None,
                   deltalake_versions: int = 1) -> dict[int, tuple]:
    """Replay ``op_for_version`` (version -> operation) and compare every version of the table
    with it; deltalake reads the latest version and ``deltalake_versions`` random older ones.
    Returns the final state."""
    clear_caches()
    log = DeltaLog(str(path))
    latest = log.latest_version()
    assert ops.rows_at(log, 0) == []
    state: dict[int, tuple] = {}
    for v in range(1, latest + 1):
        assert v in op_for_version, f"version {v} was committed by no journaled operation"
        state = ops.apply(state, op_for_version[v])
        assert ops.rows_at(log, v) == ops.as_rows(state), f"version {v} differs from the replay"
    assert ops.deltalake_rows_at(path) == ops.as_rows(state)
    rng = rng or random.Random(0)
    for v in rng.sample(range(0, latest + 1), min(deltalake_versions, latest + 1)):
        replay: dict[int, tuple] = {}
        for u in range(1, v + 1):
            replay = ops.apply(replay, op_for_version[u])
        assert ops.deltalake_rows_at(path, v) == ops.as_rows(replay), f"deltalake at version {v}"
    return state


def data_files(path) -> set[str]:
    """Every file under the table outside ``_delta_log``, relative."""
    root = Path(path)
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) == root and d == "_delta_log")]
        out |= {(Path(dirpath) / n).relative_to(root).as_posix() for n in filenames}
    return out


def vacuum_then_append(path, state: dict[int, tuple]) -> dict:
    """VACUUM with no retention: afterwards the table directory holds exactly the live files
    (orphans of the killed writer gone) and the rows are unchanged; then one more append
    commits and reads back. Returns counts for the caller's report."""
    clear_caches()
    log = DeltaLog(str(path))
    before = data_files(path)
    result = collect_garbage(log, retention_hours=0, check_retention=False)
    live = {decode_path(p) for p in log.snapshot().files_by_path}
    assert data_files(path) == live, "VACUUM left unreferenced files, or removed live ones"
    assert ops.rows_at(log) == ops.as_rows(state)
    snapshot = log.snapshot()
    op = {"kind": "append", "rows": [[-1 - len(state), ops.grp_of(len(state)), 7]]}
    op["rows"][0][1] = ops.grp_of(op["rows"][0][0])
    version = ops.run_kernel(log, snapshot, op)
    assert version == snapshot.version + 1
    state = ops.apply(state, op)
    assert ops.rows_at(log) == ops.as_rows(state) == ops.deltalake_rows_at(path)
    orphans = before - live
    return {"orphans": len(orphans), "vacuumed": len(result.files),
            "staging": sum(1 for p in orphans if p.startswith("_sqlext_staging"))}
