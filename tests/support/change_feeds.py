"""Hand-built Delta tables for change feed tests: every version written exactly as a test wants it.

:class:`HandTable` writes parquet files with pyarrow and commits through sqlext's log kernel, so a
history takes no Spark job and each version holds precisely the changes a test describes: an
append, a whole-table overwrite whose changes are inferred from the removed and added files (copied
rows appear as a delete plus an identical insert), or a rewrite that records its changes in
``_change_data`` files (what DELETE, UPDATE and MERGE write). Commit files get their
``commitInfo.timestamp`` as modification time (strictly increasing), so sqlext, which times commits
by file, and delta-rs, which uses ``commitInfo``, agree on ``_commit_timestamp``.
"""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sqlext.log.actions import (AddCDCFile, AddFile, Metadata, Protocol, RemoveFile, encode_path)
from sqlext.log.schema import format_partition_value
from sqlext.log.table import DeltaLog

ARROW_TYPES = {"integer": pa.int32(), "long": pa.int64(), "string": pa.string(),
               "double": pa.float64(), "date": pa.date32(), "boolean": pa.bool_()}
CHANGE_COLUMNS = ["_change_type", "_commit_version", "_commit_timestamp"]


class HandTable:
    """A table whose versions are written by hand; ``states[v]`` is the rows after version v."""

    def __init__(self, path: str | os.PathLike, columns: list[tuple[str, str]],
                 partition_by: list[str] = (), cdf: bool = True,
                 configuration: dict[str, str] | None = None):
        self.path = Path(path)
        self.columns = list(columns)
        self.partition_by = list(partition_by)
        self.log = DeltaLog(str(self.path))
        self.states: list[list[tuple]] = []
        conf = {"delta.enableChangeDataFeed": "true" if cdf else "false", **(configuration or {})}
        txn = self.log.start_transaction(None)
        txn.update_protocol(Protocol(1, 4 if cdf else 2))
        txn.update_metadata(Metadata.new(self._schema_string(), self.partition_by, conf, 0))
        self._commit(txn, [], "CREATE TABLE", [])

    # --- operations ---------------------------------------------------------------------------

    def append(self, rows: list[tuple]) -> int:
        """Add a file holding ``rows`` (changes inferred: inserts)."""
        txn = self.log.start_transaction()
        return self._commit(txn, self._data_files(rows), "WRITE", self.rows + list(rows))

    def overwrite(self, rows: list[tuple], data_change: bool = True,
                  operation: str = "WRITE", metrics: dict | None = None) -> int:
        """Replace every file by files holding ``rows``, without change files: the changes are
        inferred, so rows present before and after show up as a delete and an insert."""
        txn = self.log.start_transaction()
        actions = self._removes(txn, data_change) + self._data_files(rows, data_change)
        return self._commit(txn, actions, operation, list(rows), metrics)

    def rewrite(self, rows: list[tuple], changes: list[tuple[tuple, str]],
                operation: str = "UPDATE") -> int:
        """Replace every file by files holding ``rows`` and record ``changes`` (row, change type)
        in change data files, as DELETE/UPDATE/MERGE do."""
        txn = self.log.start_transaction()
        actions = self._removes(txn, True) + self._data_files(rows) + self._cdc_files(changes)
        return self._commit(txn, actions, operation, list(rows))

    def update(self, key: int, **values) -> int:
        """UPDATE the rows whose first column is ``key`` (pre/post images recorded)."""
        names = [c for c, _ in self.columns]
        after, changes = [], []
        for row in self.rows:
            if row[0] == key:
                new = tuple(values.get(n, v) for n, v in zip(names, row))
                changes += [(row, "update_preimage"), (new, "update_postimage")]
                after.append(new)
            else:
                after.append(row)
        return self.rewrite(after, changes, "UPDATE")

    def delete(self, key: int) -> int:
        """DELETE the rows whose first column is ``key`` (deletes recorded)."""
        gone = [r for r in self.rows if r[0] == key]
        return self.rewrite([r for r in self.rows if r[0] != key], [(r, "delete") for r in gone],
                            "DELETE")

    def set_properties(self, **conf: str) -> int:
        """Change table properties (a metadata-only commit)."""
        txn = self.log.start_transaction()
        md = txn.snapshot.metadata
        txn.update_metadata(Metadata(md.id, md.schema_string, md.partition_columns,
                                     {**md.configuration, **conf}, created_time=md.created_time))
        return self._commit(txn, [], "SET TBLPROPERTIES", self.rows)

    def replace_schema(self, columns: list[tuple[str, str]], rows: list[tuple]) -> int:
        """Change the schema (add, drop or retype columns) and replace the rows, as an overwrite
        with overwriteSchema does."""
        txn = self.log.start_transaction()
        removes = self._removes(txn, True)
        self.columns = list(columns)
        md = txn.snapshot.metadata
        txn.update_metadata(Metadata(md.id, self._schema_string(), md.partition_columns,
                                     md.configuration, created_time=md.created_time))
        return self._commit(txn, removes + self._data_files(rows), "WRITE", list(rows))

    # --- state --------------------------------------------------------------------------------

    @property
    def rows(self) -> list[tuple]:
        return list(self.states[-1])

    @property
    def version(self) -> int:
        return len(self.states) - 1

    @property
    def names(self) -> list[str]:
        return [c for c, _ in self.columns]

    def commit_file(self, version: int) -> Path:
        return self.path / "_delta_log" / f"{version:020d}.json"

    def set_commit_time(self, version: int, ms: int) -> None:
        """Set a commit's file time (what sqlext times commits by)."""
        ns = ms * 1_000_000
        os.utime(self.commit_file(version), ns=(ns, ns))

    # --- files --------------------------------------------------------------------------------

    def _schema_string(self) -> str:
        return json.dumps({"type": "struct", "fields": [
            {"name": n, "type": t, "nullable": True, "metadata": {}} for n, t in self.columns]})

    def _write(self, rows: list[tuple], directory: str, prefix: str,
               change_types: list[str] | None = None) -> list[tuple[str, dict, int, int]]:
        """Write ``rows`` as one parquet file per partition: (path, partition values, size, rows)."""
        names, types = self.names, dict(self.columns)
        pidx = [names.index(c) for c in self.partition_by]
        groups: dict[tuple, list[int]] = {}
        for i, r in enumerate(rows):
            groups.setdefault(tuple(r[j] for j in pidx), []).append(i)
        out = []
        for key, idxs in groups.items():
            pv = {c: format_partition_value(v, types[c]) for c, v in zip(self.partition_by, key)}
            rel = "/".join([d for d in [directory, *[f"{c}={v}" for c, v in pv.items()]] if d]
                           + [f"{prefix}-00000-{uuid.uuid4()}.c000.snappy.parquet"])
            arrays = {n: pa.array([rows[i][names.index(n)] for i in idxs], ARROW_TYPES[t])
                      for n, t in self.columns if n not in self.partition_by}
            if change_types is not None:
                arrays["_change_type"] = pa.array([change_types[i] for i in idxs], pa.string())
            target = self.path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.table(arrays), target)
            out.append((rel, pv, target.stat().st_size, len(idxs)))
        return out

    def _data_files(self, rows: list[tuple], data_change: bool = True) -> list[AddFile]:
        return [AddFile(encode_path(rel), pv, size, 0, data_change, json.dumps({"numRecords": n}))
                for rel, pv, size, n in self._write(rows, "", "part")]

    def _cdc_files(self, changes: list[tuple[tuple, str]]) -> list[AddCDCFile]:
        written = self._write([r for r, _ in changes], "_change_data", "cdc",
                              [ct for _, ct in changes])
        return [AddCDCFile(encode_path(rel), pv, size) for rel, pv, size, _ in written]

    def _removes(self, txn, data_change: bool) -> list[RemoveFile]:
        files = txn.snapshot.files
        txn.read_files(files)
        return [f.remove(0, data_change) for f in files]

    def _commit(self, txn, actions, operation: str, state: list[tuple],
                metrics: dict | None = None) -> int:
        version = txn.commit(actions, operation, {}, metrics or {})
        self.states.append(list(state))
        info = self.log.commit_info(version)
        ms = info.timestamp
        if version > 0:
            previous = self.commit_file(version - 1).stat().st_mtime_ns // 1_000_000
            ms = max(ms, previous + 1)
        self.set_commit_time(version, ms)
        return version


def change_rows(df, columns: list[str] | None = None) -> Counter:
    """The rows of a change feed DataFrame as a multiset of (table columns..., change type,
    version) tuples, timestamps left out."""
    names = columns or [c for c in df.columns if c not in CHANGE_COLUMNS]
    return Counter(tuple(r) for r in df.select(*names, "_change_type", "_commit_version").collect())


def feeds(spark, path, cases: dict[str, dict]) -> dict[str, Counter]:
    """Several change feed reads of one table (``{name: options of sqlext.changes}``), run as
    ONE Spark job (their union), each as :func:`change_rows` would return it."""
    import sqlext
    from pyspark.sql import functions as F
    frames = {name: sqlext.changes(spark, str(path), **options) for name, options in cases.items()}
    names = [c for c in next(iter(frames.values())).columns if c not in CHANGE_COLUMNS]
    union = None
    for name, df in frames.items():
        part = df.select(*names, "_change_type", "_commit_version", F.lit(name).alias("__case"))
        union = part if union is None else union.unionByName(part)
    out: dict[str, Counter] = {name: Counter() for name in cases}
    for row in union.collect():
        out[row["__case"]][tuple(row)[:-1]] += 1
    return out


def deltalake_change_rows(path, start: int, end: int | None = None) -> Counter:
    """delta-rs's change feed as a multiset of (table columns..., change type, version)."""
    from tests.support import deltalake_cdf
    from tests.support.compare import rows as normalised
    table = deltalake_cdf(path, start, end)
    names = [f.name for f in DeltaLog(str(path)).snapshot().schema]   # delta-rs puts partition
    names = [n for n in names if n in table.column_names]              # columns last
    return Counter(normalised(table, names + ["_change_type", "_commit_version"]))


def expect(*rows: tuple) -> Counter:
    """An expected multiset of (columns..., change type, version) tuples."""
    return Counter(rows)
