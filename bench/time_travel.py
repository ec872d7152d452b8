"""Time travel on a long log: loading an old version costs the replay from its checkpoint, not
from version 0.

The table: a CREATE TABLE commit and ``--commits`` (1,000) blind appends of ``--adds`` (10) files
each, written with the kernel, which checkpoints every 10 commits. For versions 5, 505, 995 and
the latest, with empty caches each time, it prints which checkpoint the kernel started from, how
many JSON commits it replayed, and the time; then the same versions replayed from version 0 with
every checkpoint ignored (what a kernel without checkpoints would pay), and delta-rs
(``DeltaTable(path, version=v)`` plus ``file_uris()``) as a peer. Times are the best of ``--runs``
loads in this process (the fastest run is the least disturbed by other work on the machine).

    .venv/bin/python bench/time_travel.py [--commits 1000 --adds 10 --runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import log_generator  # noqa: E402
from sqlext.log.segment import segment_for  # noqa: E402
from sqlext.log.snapshot import Replayer  # noqa: E402
from sqlext.log.table import DeltaLog  # noqa: E402


def _best_time(fn, runs: int):
    times, result = [], None
    for _ in range(runs):
        log_generator.clear_caches()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def _kernel_load(path: str, version: int | None):
    log = DeltaLog(path)
    replayed = []
    read_commit = log.read_commit

    def counting(v):
        replayed.append(v)
        return read_commit(v)

    log.read_commit = counting        # count the JSON commits the replay reads
    snap = log.snapshot(version)
    return snap, len(replayed)


def _from_version_zero(path: str, version: int):
    log = DeltaLog(path)
    listing = log.listing()
    every_checkpoint = frozenset(c.version for c in listing.checkpoints)
    segment = segment_for(listing, path, version, every_checkpoint)
    replay = Replayer()
    for v in segment.commits:
        replay.apply(log.read_commit(v))
    return replay.snapshot(log.location, version, None), len(segment.commits)


def _deltalake(path: str, version: int | None):
    from deltalake import DeltaTable
    return len(DeltaTable(path, version=version).file_uris())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--adds", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--path", default=os.path.join(tempfile.gettempdir(), "sqlext-bench-time-travel"))
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()

    marker = os.path.join(args.path, f".generated-{args.commits}x{args.adds}")
    if not os.path.exists(marker):
        shutil.rmtree(args.path, ignore_errors=True)
        print(f"generating {args.commits} commits x {args.adds} adds at {args.path} ...", flush=True)
        secs = log_generator.generate(args.path, args.commits, args.adds, quiet=True)
        open(marker, "w").close()
        print(f"generated in {secs:.1f}s")
    listing = DeltaLog(args.path).listing()
    print(f"log: {len(listing.commits)} commits, {len(listing.checkpoints)} checkpoints, "
          f"latest version {listing.latest_version}\n")

    print(f"{'version':>8s} {'files':>6s} | {'kernel: checkpoint':>18s} {'commits':>7s} {'ms':>8s} | "
          f"{'from v0: commits':>16s} {'ms':>8s} {'ratio':>6s} | {'deltalake ms':>12s}")
    for version in (5, 505, 995, None):
        t_kernel, (snap, replayed) = _best_time(lambda: _kernel_load(args.path, version), args.runs)
        v = snap.version
        t_zero, (snap0, replayed0) = _best_time(lambda: _from_version_zero(args.path, v), args.runs)
        assert set(snap0.files_by_path) == set(snap.files_by_path)
        t_dl, n_dl = _best_time(lambda: _deltalake(args.path, version), args.runs)
        assert n_dl == len(snap.files)
        cp = "none" if snap.checkpoint_version is None else str(snap.checkpoint_version)
        label = f"{v}" if version is not None else f"{v} (latest)"
        print(f"{label:>8s} {len(snap.files):6d} | {cp:>18s} {replayed:7d} {t_kernel * 1000:8.1f} | "
              f"{replayed0:16d} {t_zero * 1000:8.1f} {t_zero / t_kernel:5.1f}x | {t_dl * 1000:12.1f}",
              flush=True)
    if not args.keep:
        shutil.rmtree(args.path, ignore_errors=True)


if __name__ == "__main__":
    main()
