"""Delta's shallow clone: a new table whose log points at another table's data files.

``CREATE TABLE t SHALLOW CLONE src [VERSION AS OF n | TIMESTAMP AS OF ts]`` (and
:meth:`sqlext.DeltaTable.clone`) commits one version of ``t`` with the source snapshot's schema,
partitioning, properties and description, and one ``add`` per source file whose path is the
file's absolute URI: no data is copied. The commit's ``commitInfo`` is delta-spark's: operation
``CLONE`` with ``source``, ``sourceVersion`` and ``isShallow``, and the ``sourceTableSize``,
``sourceNumOfFiles``, ``numCopiedFiles``, ... metrics.

Writes to the clone add files under the clone's own directory; VACUUM of the clone never deletes
the source's files (they lie outside its directory). VACUUM of the source does not know about
the clone: once the source removes a file and vacuums it, a clone still pointing at it breaks,
as with delta-spark.
"""

from __future__ import annotations

import dataclasses
from pathlib import PurePosixPath
from urllib.parse import quote

from pyspark.sql import SparkSession

from sqlext.engine.commit import commit
from sqlext.engine.read import resolve_snapshot
from sqlext.errors import (AnalysisException, ConcurrentModificationException,
                           TableAlreadyExistsError, UnsupportedOperationError,
                           UnsupportedTableFeatureError)
from sqlext.log import operations as ops
from sqlext.log.actions import AddFile, Metadata
from sqlext.log.protocol import table_features
from sqlext.log.storage import is_local
from sqlext.log.table import DeltaLog
from sqlext.log.table_ref import TableRef
from sqlext.log.transaction import now_ms

OPERATION = ops.Clone.name


@dataclasses.dataclass(frozen=True)
class CloneSource:
    """What to clone: a table, at a version or timestamp (both None: the latest)."""

    ref: TableRef
    label: str                      # how the commit names the source (delta-spark's ``source``)
    version: int | None = None
    timestamp: object = None


def absolute_file_uri(log: DeltaLog, action_path: str) -> str:
    """The absolute URI of a file an action names: for a local table the URI-encoded absolute
    path without a scheme (``/data/t/part-0.parquet``, which delta-spark, delta-rs and DuckDB's
    delta extension all resolve; DuckDB's does not resolve ``file:`` URIs), else the store's
    URI (``s3://bucket/t/part-0.parquet``)."""
    if "://" in action_path or action_path.startswith(("file:", "/")):
        return action_path
    if is_local(log.location):
        return quote(str(PurePosixPath(log.data_path(action_path))), safe="/")
    return log.location.rstrip("/") + "/" + action_path   # the action path is URI-encoded already


def shallow_clone(spark: SparkSession, source: CloneSource, target: TableRef,
                  replace: bool = False, if_not_exists: bool = False,
                  properties: dict[str, str] | None = None) -> int | None:
    """Clone ``source`` into ``target``; return the target's new version (None when it existed
    and ``if_not_exists``). ``replace`` makes the clone the next version of an existing target
    (its files removed, history kept)."""
    src_log, src = resolve_snapshot(spark, source.ref, source.version, source.timestamp)
    if "deletionVectors" in table_features(src.protocol):
        # not implemented: the clone's adds would have to carry the vectors, their ``u`` paths
        # turned into absolute ``p`` ones pointing into the source
        raise UnsupportedTableFeatureError(
            f"CLONE {source.label} (version {src.version}): the source table has the Delta "
            "table feature deletionVectors; sqlext reads and changes tables with deletion "
            f"vectors but does not clone them yet, so it cannot clone it into {target.display}. "
            "Clone it with delta-spark, or copy its rows (CREATE TABLE ... AS SELECT)",
            table=source.label, version=src.version)
    if _same_location(source.ref.location, target.location):
        raise AnalysisException(f"CLONE {source.label}: the target {target.display} is the source "
                                "table itself; clone into another table", table=target.display)
    log = DeltaLog(target.location, name=target.display)
    existing = log.snapshot() if log.exists() else None
    if existing is not None and not replace:
        if if_not_exists:
            return None
        raise TableAlreadyExistsError(
            f"CLONE {source.label}: table {target.display} already exists (version "
            f"{existing.version}); use CREATE OR REPLACE TABLE ... SHALLOW CLONE, CREATE TABLE IF "
            "NOT EXISTS, or another name", table=target.display, version=existing.version)
    configuration = {**src.configuration, **(properties or {})}
    metadata = dataclasses.replace(
        Metadata.new(src.metadata.schema_string, src.partition_columns, configuration, now_ms(),
                     name=target.name, description=src.metadata.description),
        format_provider=src.metadata.format_provider,
        format_options=dict(src.metadata.format_options))
    txn = log.start_transaction(existing)
    removes = []
    if existing is None:
        txn.update_protocol(src.protocol)
    else:
        metadata = dataclasses.replace(metadata, id=existing.metadata.id,
                                       created_time=existing.metadata.created_time)
        if _protocol_rank(src.protocol) > _protocol_rank(existing.protocol):
            txn.update_protocol(src.protocol)
        txn.read_whole_table()
        ts = now_ms()
        removes = [f.remove(ts) for f in existing.files]
    txn.update_metadata(metadata)
    adds = [AddFile(absolute_file_uri(src_log, f.path), dict(f.partition_values), f.size,
                    f.modification_time, True, f.stats, f.tags)
            for f in src.files]
    size = sum(f.size for f in src.files)
    metrics = {"sourceTableSize": size, "sourceNumOfFiles": len(adds),
               "numRemovedFiles": len(removes), "numCopiedFiles": 0,
               "removedFilesSize": sum(r.size or 0 for r in removes), "copiedFilesSize": 0}
    try:
        done = ops.Clone(source.label, src.version)
        return commit(spark, txn, removes + adds, done, metrics=metrics)
    except ConcurrentModificationException as exc:
        if existing is None:
            raise TableAlreadyExistsError(f"CLONE {source.label}: table {target.display} was "
                                          "created by a concurrent writer",
                                          table=target.display) from exc
        raise


def require_shallow(is_shallow: bool, source: str) -> None:
    """Refuse a deep clone (sqlext makes shallow clones only)."""
    if not is_shallow:
        raise UnsupportedOperationError(
            f"DEEP CLONE of {source} is not supported: sqlext makes shallow clones (SHALLOW CLONE, "
            "DeltaTable.clone(target, isShallow=True)); to copy the data, use CREATE TABLE t AS "
            f"SELECT * FROM {source}", table=source)


def _protocol_rank(protocol) -> tuple[int, int]:
    return protocol.min_reader_version, protocol.min_writer_version


def _same_location(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")
