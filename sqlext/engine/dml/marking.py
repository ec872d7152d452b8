"""Merge-on-read DML: mark rows deleted in deletion vectors instead of rewriting their files, as
delta-spark does on tables with ``delta.enableDeletionVectors=true``.

One Spark job finds the matching rows of the candidate files with their position in the file
(``_metadata.row_index``, :func:`matching_rows`); only (file, row index) pairs reach the driver.
(A DELETE with a simple condition on a few small files finds them on the driver instead:
:mod:`sqlext.engine.dml.local_match`.)
:func:`mark_rows` unions them with each file's current deletion vector, writes ONE deletion vector
file for the commit (``deletion_vector_<uuid>.bin`` at the table root, every bitmap in it) and
returns the actions: ``remove`` of each touched file with its old vector, ``add`` of the same
path with the new one (statistics kept: ``numRecords`` stays the file's physical row count). A
file whose every row is deleted is only removed. DELETE commits just these; UPDATE also writes
the new versions of the rows to new files.
"""

from __future__ import annotations

import dataclasses
import contextlib
import json
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sqlext.engine.dml.rewrite import discard, total_records
from sqlext.engine.io.scan import FILE_COLUMN, ROW_INDEX_COLUMN, scan
from sqlext.log.actions import AddFile
from sqlext.log.deletion_vectors import (DeletionVectorReader, RoaringBitmapArray,
                                         new_deletion_vector_file)
from sqlext.log.snapshot import Snapshot
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import now_ms

def uses_deletion_vectors(snapshot: Snapshot) -> bool:
    """Whether DML on the table marks rows in deletion vectors (the property is on and the
    protocol has the feature) rather than rewriting files."""
    return (snapshot.properties.deletion_vectors
            and "deletionVectors" in (snapshot.protocol.writer_features or []))


@dataclass
class Marking:
    """The actions of marking rows: ``removed`` (touched files, as they were), ``added`` (the
    same paths with their new deletion vectors; files left without live rows are absent), the
    deletion vector file written (None when nothing was marked) and metrics."""

    removed: list[AddFile] = field(default_factory=list)
    added: list[AddFile] = field(default_factory=list)
    vector_file: str | None = None
    metrics: dict[str, int] = field(default_factory=dict)

    def actions(self) -> list:
        """``remove`` then ``add`` actions, one deletion timestamp."""
        ts = now_ms()
        return [f.remove(ts) for f in self.removed] + list(self.added)


@contextlib.contextmanager
def discarded_on_failure(spark: SparkSession, log: DeltaLog, marking: Marking, written: list):
    """Delete the statement's deletion vector file and ``written`` files (not committed yet)
    when the block (the commit) fails, e.g. on a conflict with a concurrent writer."""
    try:
        yield
    except BaseException:
        if marking.vector_file:
            log.store.delete(log.data_path(marking.vector_file))
        discard(spark, log, written)
        raise


def matching_rows(spark: SparkSession, log: DeltaLog, snapshot: Snapshot,
                  candidates: list[AddFile], condition: Column, alias: str | None = None):
    """``{action path: numpy array of row indexes}`` of the live rows of ``candidates`` where
    ``condition`` is true (files without such rows absent). One Spark job; the pairs come back
    through Arrow."""
    if not candidates:
        return {}
    # one file (a narrow condition): no per-file column to join in, every row is the file's
    one = len(candidates) == 1
    df = scan(spark, log, snapshot, candidates, with_file_column=not one, with_row_index=True)
    df = df.alias(alias) if alias else df
    hits = df.filter(condition.eqNullSafe(F.lit(True)))
    file = F.lit(candidates[0].path).alias(FILE_COLUMN) if one else F.col(FILE_COLUMN)
    return rows_by_file(hits.select(file, ROW_INDEX_COLUMN), FILE_COLUMN, ROW_INDEX_COLUMN,
                        total_records(candidates))


# below this many candidate rows, pairs come back by collect(): Arrow's set-up costs more than
# it saves on a few rows
_COLLECT_BELOW = 200_000


def rows_by_file(pairs: DataFrame, file_column: str, row_column: str,
                 at_most: int | None = None) -> dict:
    """``{file: numpy array of row indexes}`` of a DataFrame of (file, row index) pairs,
    brought to the driver in one Spark job: through Arrow, or by ``collect()`` when there are
    ``at_most`` (an upper bound, when known) fewer than 200,000 of them."""
    import numpy as np
    import pyarrow as pa

    pairs = pairs.select(file_column, row_column)
    if at_most is not None and at_most < _COLLECT_BELOW:
        rows = pairs.collect()
        table = pa.table({file_column: pa.array([r[0] for r in rows], pa.string()),
                          row_column: pa.array([r[1] for r in rows], pa.int64())})
    else:
        table = pairs.toArrow()
    if table.num_rows == 0:
        return {}
    grouped = table.group_by(file_column).aggregate([(row_column, "list")])
    lists = grouped.column(f"{row_column}_list")
    return {path: np.asarray(lists[i].values.to_numpy(), dtype=np.int64)
            for i, path in enumerate(grouped.column(file_column).to_pylist())}


def mark_rows(log: DeltaLog, files: list[AddFile], rows_by_path: dict) -> Marking:
    """Mark ``rows_by_path`` (action path -> row indexes, e.g. from :func:`matching_rows`)
    deleted in the deletion vectors of ``files`` (the snapshot's actions of those paths), writing
    one deletion vector file. Nothing is committed."""
    by_path = {f.path: f for f in files}
    vectors = DeletionVectorReader.of(log)
    marking = Marking()
    kept: list[tuple[AddFile, RoaringBitmapArray]] = []
    deleted = removed_vectors = 0
    for path, rows in rows_by_path.items():
        f = by_path[path]
        new = RoaringBitmapArray.from_array(rows)
        deleted += len(new)
        old = None
        if f.deletion_vector:
            old = vectors.load(f.deletion_vector)
            removed_vectors += 1
        merged = new.union(old)
        marking.removed.append(f)
        stats = f.parsed_stats() or {}
        physical = stats.get("numRecords")
        if physical is not None and len(merged) >= int(physical):
            continue                         # no live row left: the file is just removed
        kept.append((f, merged))
    if kept:
        name, data, descriptors = new_deletion_vector_file([b for _, b in kept])
        log.store.write(log.data_path(name), data)
        marking.vector_file = name
        marking.added = [dataclasses.replace(f, deletion_vector=d.to_dict(), data_change=True,
                                             stats=_wide_bounds(f.stats))
                         for (f, _), d in zip(kept, descriptors)]
    fully = [f for f in marking.removed if f.path not in {a.path for a in marking.added}]
    marking.metrics = {
        "numDeletedRows": deleted,
        "numDeletionVectorsAdded": len(marking.added),
        "numDeletionVectorsRemoved": removed_vectors,
        "numDeletionVectorsUpdated": sum(1 for a in marking.added
                                         if by_path[a.path].deletion_vector),
        "numRemovedFiles": len(fully),
        "numRemovedBytes": sum(f.size for f in fully),
    }
    return marking


def _wide_bounds(stats: str | None) -> str | None:
    """The statistics of a file with a deletion vector: as they were (``numRecords`` is the
    physical count), but bounds no longer tight (``tightBounds: false``, as delta-spark) when
    the writer recorded that key."""
    if not stats or '"tightBounds"' not in stats:
        return stats
    parsed = json.loads(stats)
    if parsed.get("tightBounds") is not True:
        return stats
    parsed["tightBounds"] = False
    return json.dumps(parsed, separators=(",", ":"))
