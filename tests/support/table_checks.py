"""Helpers shared by the engine, DML and maintenance tests: cross-reader checks and snapshots of a
table's state.

Every check reads the table three times, independently: sqlext (Spark), delta-rs (``deltalake``)
and DuckDB's delta extension.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pyarrow as pa

import sqlext
from tests.support import assert_same_rows, read_deltalake, read_duckdb


def arrow(columns: list[str], rows: list[tuple]) -> pa.Table:
    """A pyarrow table of ``rows`` (tuples in ``columns`` order), for expected results."""
    return pa.Table.from_pylist([dict(zip(columns, r)) for r in rows])


def read_sqlext(spark, path, version: int | None = None) -> pa.Table:
    """The table (latest or ``version``) as sqlext reads it."""
    return sqlext.read(spark, str(path), versionAsOf=version).toArrow()


def assert_readers_agree(spark, path, expected=None, version: int | None = None,
                         duckdb: bool = True) -> pa.Table:
    """sqlext, deltalake and DuckDB read the same rows (equal to ``expected`` when given).

    Returns what sqlext read.
    """
    ours = read_sqlext(spark, path, version)
    assert_same_rows(ours, read_deltalake(path, version))
    if duckdb:
        assert_same_rows(ours, read_duckdb(path, version))
    if expected is not None:
        assert_same_rows(ours, expected)
    return ours


def commit_actions(path, version: int) -> list[dict]:
    """The actions of commit ``version`` as JSON objects, in file order."""
    text = (Path(path) / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def actions_of(path, version: int, kind: str) -> list[dict]:
    """The actions of one kind (``add``, ``remove``, ``metaData``, ...) in a commit."""
    return [a[kind] for a in commit_actions(path, version) if kind in a]


def commit_info(path, version: int) -> dict:
    return actions_of(path, version, "commitInfo")[0]


#: commitInfo metrics that differ between any two runs of one statement (times, byte counts)
VARYING_METRICS = {"executionTimeMs", "scanTimeMs", "rewriteTimeMs", "numRemovedBytes",
                   "numAddedBytes", "changeFileBytes", "numOutputBytes"}


def _file_action(action: dict) -> tuple:
    kind = next(iter(action))
    body = action[kind]
    stats = json.loads(body["stats"]) if body.get("stats") else None
    return (kind, json.dumps(body.get("partitionValues"), sort_keys=True),
            body.get("dataChange"), json.dumps(stats, sort_keys=True),
            json.dumps(body.get("deletionVector") is not None))


def commit_summary(path, version: int) -> dict:
    """Commit ``version`` as two engines' runs of one statement must agree on it: operation,
    parameters, metrics (times and byte counts aside) and the add/remove/cdc actions (file
    names, sizes and times aside: partition values, dataChange, statistics, deletion vector)."""
    actions = commit_actions(path, version)
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    metrics = {k: v for k, v in info.get("operationMetrics", {}).items()
               if k not in VARYING_METRICS}
    files = sorted(_file_action(a) for a in actions if {"add", "remove", "cdc"} & set(a))
    return {"operation": info["operation"], "parameters": info.get("operationParameters"),
            "metrics": metrics, "files": files}


def latest_version(path) -> int:
    """The newest commit's version, from the file names alone."""
    names = [n for n in os.listdir(Path(path) / "_delta_log") if n.endswith(".json")]
    return max(int(n[:20]) for n in names)


def table_state(path, rows: bool = True) -> dict:
    """What must not change when a write fails: every log file (name and content hash), every
    file under the table outside sqlext's staging area, and the rows deltalake reads."""
    root = Path(path)
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "_sqlext_staging"]
        for name in filenames:
            full = Path(dirpath) / name
            files[str(full.relative_to(root))] = hashlib.sha256(full.read_bytes()).hexdigest()
    state = {"files": files}
    if rows:
        state["rows"] = sorted(map(repr, read_deltalake(path).to_pylist()))
    return state
