"""Operations on a small test table, two ways — with the kernel and pyarrow only (cheap, used by
most fault runs) or with sqlext on Spark — plus the replay that says what the table must hold.

The table: ``id long, grp string (partition), val long``; ``grp`` is a function of ``id``
(``g<id % 3>``) so that MERGE on ``id`` never moves a row between partitions. An operation is a
JSON-able dict:

- ``{"kind": "append", "rows": [[id, grp, val], ...]}``
- ``{"kind": "delete", "grp": g, "m": m, "r": r}``: rows of ``grp`` with ``id % m == r``
- ``{"kind": "update", "grp": g, "m": m, "r": r, "add": d}``: ``val += d`` on those rows
- ``{"kind": "merge", "rows": [[id, grp, val], ...]}``: upsert by ``id`` (matched: ``val`` set)

Workers write a journal of JSON lines: ``{"op": ..., "before": v}`` before running an operation
that reads version ``v``, and ``{"done": version | None, "conflict": name | None}`` after. Replaying
the journal against the log tells exactly which operation produced each version.
"""

from __future__ import annotations

import json
import os
import random
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sqlext.log.actions import AddFile, encode_path
from sqlext.log.pruning import Pruner
from sqlext.log.protocol import protocol_for_new_table
from sqlext.log.schema import Field, schema_string
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import now_ms

SCHEMA = [Field("id", "long"), Field("grp", "string"), Field("val", "long")]
ARROW_SCHEMA = pa.schema([("id", pa.int64()), ("val", pa.int64())])
GROUPS = ("g0", "g1", "g2")


def grp_of(row_id: int) -> str:
    return f"g{row_id % 3}"


# --- the table ----------------------------------------------------------------------------------


def create(path, checkpoint_interval: int = 2, isolation: str = "Serializable") -> DeltaLog:
    """Create the empty test table (version 0) with the kernel."""
    from sqlext.log.actions import Metadata
    conf = {"delta.checkpointInterval": str(checkpoint_interval),
            "delta.isolationLevel": isolation, "delta.enableChangeDataFeed": "true"}
    log = DeltaLog(str(path))
    txn = log.start_transaction()
    txn.update_protocol(protocol_for_new_table(conf))
    txn.update_metadata(Metadata.new(schema_string(SCHEMA), ["grp"], conf, now_ms()))
    txn.commit([], "CREATE TABLE", {"isManaged": False})
    return log


def rows_of_files(log: DeltaLog, files) -> list[tuple]:
    """(id, grp, val) of every row in ``files``, read with pyarrow."""
    out = []
    for f in files:
        table = pq.read_table(log.data_path(f.path))
        grp = f.partition_values["grp"]
        out += [(r["id"], grp, r["val"]) for r in table.to_pylist()]
    return out


def rows_at(log: DeltaLog, version: int | None = None) -> list[tuple]:
    """The table's rows at a version, sorted (duplicates kept)."""
    return sorted(rows_of_files(log, log.snapshot(version).files))


def deltalake_rows_at(path, version: int | None = None) -> list[tuple]:
    """The table's rows (id, grp, val), sorted, as delta-rs reads them (latest or ``version``)."""
    from tests.support import read_deltalake
    return sorted((r["id"], r["grp"], r["val"]) for r in read_deltalake(path, version).to_pylist())


def _write(log: DeltaLog, grp: str, rows: list[tuple], data_change: bool = True) -> AddFile:
    rel = f"grp={grp}/part-00000-{uuid.uuid4()}.c000.snappy.parquet"
    full = Path(log.location) / rel
    full.parent.mkdir(parents=True, exist_ok=True)
    ids, vals = [r[0] for r in rows], [r[2] for r in rows]
    pq.write_table(pa.table({"id": ids, "val": vals}, schema=ARROW_SCHEMA), full)
    stats = {"numRecords": len(rows), "minValues": {"id": min(ids), "val": min(vals)},
             "maxValues": {"id": max(ids), "val": max(vals)}, "nullCount": {"id": 0, "val": 0}}
    return AddFile(encode_path(rel), {"grp": grp}, full.stat().st_size, now_ms(), data_change,
                   json.dumps(stats, separators=(",", ":")))


# --- replay -------------------------------------------------------------------------------------


def apply(state: dict[int, tuple], op: dict) -> dict[int, tuple]:
    """The table state (id -> (grp, val)) after ``op``."""
    state = dict(state)
    kind = op["kind"]
    if kind == "append":
        for row_id, grp, val in op["rows"]:
            assert row_id not in state, f"append of an existing id {row_id}"
            state[row_id] = (grp, val)
    elif kind in ("delete", "update"):
        for row_id, (grp, val) in list(state.items()):
            if grp == op["grp"] and row_id % op["m"] == op["r"]:
                if kind == "delete":
                    del state[row_id]
                else:
                    state[row_id] = (grp, val + op["add"])
    elif kind == "merge":
        for row_id, grp, val in op["rows"]:
            state[row_id] = (state[row_id][0], val) if row_id in state else (grp, val)
    else:
        raise AssertionError(f"unknown op {op}")
    return state


def as_rows(state: dict[int, tuple]) -> list[tuple]:
    return sorted((i, g, v) for i, (g, v) in state.items())


def affects(state: dict[int, tuple], op: dict) -> bool:
    """Whether ``op`` changes anything (operations that change nothing commit nothing)."""
    return apply(state, op) != state or op["kind"] == "append"


# --- choosing operations ------------------------------------------------------------------------


class IdSource:
    """Unique ids for one worker: ``worker * 10**6 + n``."""

    def __init__(self, worker: int):
        self.next = worker * 1_000_000

    def take(self, n: int) -> list[int]:
        ids = list(range(self.next, self.next + n))
        self.next += n
        return ids


def random_op(rng: random.Random, ids: IdSource, current: list[tuple], kinds) -> dict:
    """A random operation of one of ``kinds`` on a table holding ``current`` rows."""
    kind = rng.choice(kinds)
    if kind == "append" or (kind == "merge" and not current):
        new = ids.take(rng.randint(1, 6))
        return {"kind": "append", "rows": [[i, grp_of(i), i] for i in new]}
    if kind in ("delete", "update"):
        op = {"kind": kind, "grp": rng.choice(GROUPS), "m": rng.randint(2, 5)}
        op["r"] = rng.randrange(op["m"])
        if kind == "update":
            op["add"] = rng.randint(1, 100)
        return op
    existing = rng.sample([r[0] for r in current], min(len(current), rng.randint(1, 3)))
    new = ids.take(rng.randint(0, 2))
    return {"kind": "merge",
            "rows": [[i, grp_of(i), rng.randint(-1000, 1000)] for i in existing + new]}


# --- kernel implementations ---------------------------------------------------------------------


def run_kernel(log: DeltaLog, snapshot: Snapshot, op: dict) -> int | None:
    """Run ``op`` reading ``snapshot`` with the kernel and pyarrow (copy-on-write, touched files
    only); returns the committed version, None when nothing changed. Conflicts raise."""
    txn = log.start_transaction(snapshot)
    kind = op["kind"]
    ts = now_ms()
    if kind == "append":
        by_grp: dict[str, list] = {}
        for row in op["rows"]:
            by_grp.setdefault(row[1], []).append(tuple(row))
        adds = [_write(log, g, rows) for g, rows in sorted(by_grp.items())]
        return txn.commit(adds, "WRITE", {"mode": "Append"})
    if kind in ("delete", "update"):
        grp, m, r = op["grp"], op["m"], op["r"]
        candidates = [f for f in snapshot.files if f.partition_values["grp"] == grp]
        txn.read_predicate(f"grp = '{grp}' AND id % {m} = {r}")
        txn.read_files(candidates)
        removes, adds = [], []
        for f in candidates:
            rows = rows_of_files(log, [f])
            hit = [x for x in rows if x[0] % m == r]
            if not hit:
                continue
            removes.append(f.remove(ts))
            if kind == "delete":
                kept = [x for x in rows if x[0] % m != r]
            else:
                kept = [(i, g, v + op["add"] if i % m == r else v) for i, g, v in rows]
            if kept:
                adds.append(_write(log, grp, kept))
        if not removes:
            return None
        return txn.commit(removes + adds, kind.upper(), {"predicate": json.dumps([f"{grp}"])})
    if kind == "merge":
        source = {row[0]: tuple(row) for row in op["rows"]}
        groups = sorted({row[1] for row in op["rows"]})
        # as the engine's MERGE: the rows the source's keys can match, found by partition values
        # and id statistics; appends of other ids do not conflict with it
        region = (f"grp IN ({', '.join(repr(g) for g in groups)}) "
                  f"AND id IN ({', '.join(str(i) for i in sorted(source))})")
        candidates = Pruner(region, snapshot.schema, snapshot.partition_columns).prune(
            snapshot.files)
        txn.read_predicate(region)
        txn.read_files(candidates)
        removes, adds, matched = [], [], set()
        for f in candidates:
            rows = rows_of_files(log, [f])
            if not any(x[0] in source for x in rows):
                continue
            removes.append(f.remove(ts))
            matched |= {x[0] for x in rows if x[0] in source}
            adds.append(_write(log, f.partition_values["grp"],
                               [(i, g, source[i][2] if i in source else v) for i, g, v in rows]))
        inserts: dict[str, list] = {}
        for row_id, row in source.items():
            if row_id not in matched:
                inserts.setdefault(row[1], []).append(row)
        adds += [_write(log, g, rows) for g, rows in sorted(inserts.items())]
        return txn.commit(removes + adds, "MERGE", {"predicate": json.dumps(["t.id = s.id"])})
    raise AssertionError(f"unknown op {op}")


# --- Spark implementations ----------------------------------------------------------------------


def run_spark(spark, log: DeltaLog, op: dict, announce) -> int | None:
    """Run ``op`` through sqlext on Spark; ``announce(read_version)`` is called once the version
    the operation reads is known (before any file is written). Returns the committed version
    (None: nothing changed). DML runs through the engine functions behind ``DeltaTable`` with a
    transaction started here, so that the version it read and committed are known exactly."""
    import sqlext
    from sqlext import DeltaTable
    from pyspark.sql import types as T
    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("grp", T.StringType()),
                           T.StructField("val", T.LongType())])
    kind = op["kind"]
    if kind == "append":
        announce(log.latest_version())
        df = spark.createDataFrame([tuple(r) for r in op["rows"]], schema)
        return sqlext.write(df, log.location, partitionBy=["grp"])
    txn = log.start_transaction()
    announce(txn.read_version)
    cond = f"grp = '{op.get('grp')}' AND id % {op.get('m')} = {op.get('r')}"
    if kind == "delete":
        from sqlext.engine.dml.delete import delete
        return delete(spark, log, cond, txn=txn).version
    if kind == "update":
        from sqlext.engine.dml.update import update
        return update(spark, log, cond, {"val": f"val + {op['add']}"}, txn=txn).version
    if kind == "merge":
        from sqlext.engine.merge.command import merge
        source = spark.createDataFrame([tuple(r) for r in op["rows"]], schema).alias("s")
        builder = (DeltaTable.forPath(spark, log.location).alias("t")
                   .merge(source, "t.id = s.id").whenMatchedUpdate(set={"val": "s.val"})
                   .whenNotMatchedInsertAll())
        return merge(spark, log, source, "t.id = s.id", builder.clauses, alias="t",
                     txn=txn).version
    raise AssertionError(f"unknown op {op}")


def spark_kinds() -> tuple[str, ...]:
    """The operations a Spark writer runs through sqlext's public API."""
    return ("append", "delete", "update", "merge")


# --- journals -----------------------------------------------------------------------------------


class Journal:
    """Append-only JSON lines, each flushed and fsync'ed before the operation it announces."""

    def __init__(self, path):
        self.file = open(path, "a", encoding="utf-8")

    def write(self, entry: dict) -> None:
        self.file.write(json.dumps(entry) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())


def read_journal(path) -> list[dict]:
    """The complete entries of a journal (a line cut short by a kill is dropped)."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def ops_by_version_single_writer(entries: list[dict], latest: int) -> dict[int, dict]:
    """For one writer: version v was produced by the LAST operation that read version v - 1
    (earlier ones reading the same version committed nothing)."""
    out: dict[int, dict] = {}
    for e in entries:
        if "op" in e and e["before"] + 1 <= latest:
            out[e["before"] + 1] = e["op"]
    return out


def wait_for(path: Path, timeout: float = 300) -> None:
    deadline = time.time() + timeout
    while not path.exists():
        if time.time() > deadline:
            raise TimeoutError(f"{path} did not appear")
        time.sleep(0.01)
