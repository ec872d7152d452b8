"""One kernel writer of the S3 concurrency test, in its own process:
``python -m tests.support.s3_writer <location> <worker> <rounds>`` with boto3's environment
(``AWS_ENDPOINT_URL``...) set; prints ``{"op": "ready"}``, starts when a line arrives on stdin
(so that the writers overlap), then prints one JSON line per attempt.

Even rounds blind-append a file of one new row (these retry until they commit); odd rounds read
the whole table and rewrite one of its files (same rows, new file), which conflicts with any
concurrent change: a loser raises a ConcurrentModificationException, reported by its class name.
Any other error ends the process with a traceback.
"""

from __future__ import annotations

import io
import json
import random
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from sqlext.errors import ConcurrentModificationException  # noqa: E402
from sqlext.log.actions import AddFile  # noqa: E402
from sqlext.log.s3_store import S3LogStore  # noqa: E402
from sqlext.log.table import DeltaLog  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def put_file(store: S3LogStore, location: str, ids: list[int], name: str) -> AddFile:
    """Write ``ids`` as a parquet data file of the table; returns its ``add`` action."""
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([{"id": i, "name": name} for i in ids], schema=SCHEMA), buf)
    rel = f"part-00000-{uuid.uuid4()}.c000.snappy.parquet"
    store.write(store.join(location, rel), buf.getvalue())
    stats = {"numRecords": len(ids), "minValues": {"id": min(ids)}, "maxValues": {"id": max(ids)},
             "nullCount": {"id": 0, "name": 0}}
    return AddFile(rel, {}, len(buf.getvalue()), int(time.time() * 1000), True,
                   json.dumps(stats, separators=(",", ":")))


def read_ids(store: S3LogStore, location: str, add: AddFile) -> list[int]:
    data = store.read(store.join(location, add.path))
    return pq.read_table(pa.BufferReader(data)).column("id").to_pylist()


def main(location: str, worker: int, rounds: int) -> None:
    store = S3LogStore()
    log = DeltaLog(location)
    rng = random.Random(worker)
    log.snapshot()                          # connected and probed: wait for the others
    print(json.dumps({"op": "ready"}), flush=True)
    sys.stdin.readline()
    for i in range(rounds):
        if i % 2 == 0:
            row = worker * 1000 + i
            add = put_file(store, location, [row], f"w{worker}")
            version = log.start_transaction().commit([add], "WRITE", {"mode": "Append"})
            print(json.dumps({"op": "append", "version": version, "ids": [row]}), flush=True)
            continue
        txn = log.start_transaction()
        txn.read_whole_table()
        victim = rng.choice(txn.snapshot.files)
        add = put_file(store, location, read_ids(store, location, victim), f"w{worker}")
        try:
            version = txn.commit([victim.remove(int(time.time() * 1000)), add], "OPTIMIZE", {})
            print(json.dumps({"op": "rewrite", "version": version}), flush=True)
        except ConcurrentModificationException as exc:
            store.delete(store.join(location, add.path))
            print(json.dumps({"op": "rewrite", "conflict": type(exc).__name__}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
