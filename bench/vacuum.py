"""VACUUM of a table with 10,000 files, half of them unreferenced.

The table (built with the kernel; file contents do not matter to VACUUM): ``--files`` (10,000)
data files in 10 partition directories; half are live, a quarter were removed by a commit 10 days
ago, a quarter are orphans no commit names; every file was written 10 days ago. VACUUM with the
default 7-day retention must delete exactly the unreferenced half. Each run works on a fresh
copy of the table and is timed in-process:

- sqlext: ``collect_garbage`` (the engine behind ``DeltaTable.vacuum`` and ``VACUUM``; it lists the
  table, diffs against the snapshot, commits VACUUM START / END, deletes);
- deltalake: ``DeltaTable.vacuum(dry_run=False, full=True)`` (delta-rs also lists, diffs, logs);
- floor: ``os.walk`` of the table plus ``os.unlink`` of the files known to be unreferenced (no log
  work at all).

    .venv/bin/python bench/vacuum.py [--files 10000 --runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sqlext.engine.maintenance.vacuum import collect_garbage  # noqa: E402
from sqlext.log.cache import LOG_CACHE  # noqa: E402
from sqlext.log.actions import AddFile, Metadata  # noqa: E402
from sqlext.log.protocol import protocol_for_new_table  # noqa: E402
from sqlext.log.schema import Field, schema_string  # noqa: E402
from sqlext.log.table import DeltaLog  # noqa: E402

DAY_MS = 86_400_000


def build(path: str, files: int) -> set[str]:
    """The table; returns the relative paths of the unreferenced files."""
    now = int(time.time() * 1000)
    log = DeltaLog(path)
    txn = log.start_transaction()
    txn.update_protocol(protocol_for_new_table({}))
    txn.update_metadata(Metadata.new(schema_string([Field("id", "long"), Field("p", "string")]),
                                     ["p"], {}, now))
    txn.commit([], "CREATE TABLE")
    ten_days_ago = (now - 10 * DAY_MS) / 1000
    adds, orphans = [], []
    for i in range(files):
        rel = f"p={i % 10}/part-{i:05d}-{uuid.uuid4()}.c000.snappy.parquet"
        full = os.path.join(path, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(b"PAR1" + bytes(60) + b"PAR1")
        os.utime(full, (ten_days_ago, ten_days_ago))
        if i % 4 == 3:
            orphans.append(rel)
        else:
            adds.append(AddFile(rel, {"p": str(i % 10)}, 68, now - 10 * DAY_MS))
    log.start_transaction().commit(adds, "WRITE")
    removed = adds[::3]
    log.start_transaction().commit([a.remove(now - 10 * DAY_MS) for a in removed], "DELETE")
    return set(orphans) | {a.path for a in removed}


def run_sqlext(path: str) -> int:
    LOG_CACHE.clear()
    return len(collect_garbage(DeltaLog(path)).files)


def run_deltalake(path: str) -> int:
    from deltalake import DeltaTable
    return len(DeltaTable(path).vacuum(dry_run=False, full=True))


def run_floor(path: str, doomed: set[str]) -> int:
    listed = sum(len(names) for _, _, names in os.walk(path))
    assert listed
    for rel in doomed:
        os.unlink(os.path.join(path, rel))
    return len(doomed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="sqlext-bench-vacuum-")
    template = os.path.join(root, "template")
    started = time.perf_counter()
    doomed = build(template, args.files)
    print(f"built {args.files} files ({len(doomed)} unreferenced) in "
          f"{time.perf_counter() - started:.1f} s; load average {os.getloadavg()[0]:.1f}")
    results: dict[str, list[float]] = {"sqlext": [], "deltalake": [], "floor": []}
    try:
        for run in range(args.runs):
            for name in results:                      # interleaved, fresh copy each time
                copy = os.path.join(root, f"{name}-{run}")
                shutil.copytree(template, copy, copy_function=shutil.copy2)
                start = time.perf_counter()
                deleted = (run_sqlext(copy) if name == "sqlext" else run_deltalake(copy)
                           if name == "deltalake" else run_floor(copy, doomed))
                elapsed = time.perf_counter() - start
                assert deleted == len(doomed), (name, deleted, len(doomed))
                results[name].append(elapsed)
                shutil.rmtree(copy)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    best = {name: min(times) for name, times in results.items()}
    print(f"\nVACUUM of {args.files} files, {len(doomed)} deleted (best of {args.runs}):")
    for name, t in best.items():
        print(f"  {name:10s} {t:7.3f} s  {len(doomed) / t:9.0f} files deleted/s  "
              f"sqlext/{name} = {best['sqlext'] / t:.2f}x")


if __name__ == "__main__":
    main()
