"""Shared helpers for the transaction-log benchmarks: generate large Delta logs with the kernel.

The data files named in the log do not exist (snapshot loading never opens them). Each commit
is a blind append of ``adds_per_commit`` files with delta-spark-like paths, partition values and
statistics strings; commits go through :class:`sqlext.log.transaction.Transaction`, so the
kernel writes a classic checkpoint (and ``_last_checkpoint``) every ``delta.checkpointInterval``
commits, as it would for a real table.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sqlext.log.cache import LOG_CACHE  # noqa: E402
from sqlext.log.actions import AddFile, Metadata  # noqa: E402
from sqlext.log.protocol import protocol_for_new_table  # noqa: E402
from sqlext.log.schema import Field, schema_string  # noqa: E402
from sqlext.log.table import DeltaLog  # noqa: E402

SCHEMA = [Field("id", "long"), Field("customer", "string"), Field("amount", "decimal(18,2)"),
          Field("ts", "timestamp"), Field("score", "double"), Field("day", "date")]


def clear_caches() -> None:
    """Forget every snapshot and decoded commit, as a fresh process would."""
    LOG_CACHE.clear()


def _add(rng: random.Random, commit: int, i: int, now: int) -> AddFile:
    day = f"2024-{1 + commit % 12:02d}-{1 + i % 28:02d}"
    lo = commit * 1_000_000 + i * 1000
    stats = {"numRecords": 1000,
             "minValues": {"id": lo, "customer": f"customer-{rng.randrange(10**6):07d}",
                           "amount": round(rng.uniform(0, 100), 2),
                           "ts": f"{day}T00:00:{i % 60:02d}.123Z", "score": rng.random()},
             "maxValues": {"id": lo + 999, "customer": f"customer-{rng.randrange(10**6, 10**7):07d}",
                           "amount": round(rng.uniform(100, 10000), 2),
                           "ts": f"{day}T23:59:{i % 60:02d}.999Z", "score": 1 + rng.random()},
             "nullCount": {"id": 0, "customer": rng.randrange(3), "amount": 0, "ts": 0, "score": 1}}
    name = f"day={day}/part-{i:05d}-{uuid.UUID(int=rng.getrandbits(128))}.c000.snappy.parquet"
    return AddFile(name, {"day": day}, 40_000 + rng.randrange(10_000), now, True,
                   json.dumps(stats, separators=(",", ":")))


def generate(path: str, commits: int, adds_per_commit: int, interval: int = 10,
             seed: int = 7, quiet: bool = False) -> float:
    """Create a table at ``path`` with ``commits`` commits after the CREATE; return seconds taken."""
    rng = random.Random(seed)
    start = time.perf_counter()
    log = DeltaLog(path)
    conf = {"delta.checkpointInterval": str(interval)}
    txn = log.start_transaction()
    txn.update_protocol(protocol_for_new_table(conf))
    txn.update_metadata(Metadata.new(schema_string(SCHEMA), ["day"], conf, int(time.time() * 1000)))
    txn.commit([], "CREATE TABLE")
    for c in range(1, commits + 1):
        now = int(time.time() * 1000)
        txn = log.start_transaction()
        txn.commit([_add(rng, c, i, now) for i in range(adds_per_commit)], "WRITE",
                   {"mode": "Append"}, {"numFiles": adds_per_commit})
        if not quiet and c % 50 == 0:
            print(f"  generated {c}/{commits} commits ({time.perf_counter() - start:.1f}s)", flush=True)
    return time.perf_counter() - start
