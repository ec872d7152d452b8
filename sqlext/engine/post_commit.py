"""What runs after a commit, on the engine's side: it must never turn a committed operation into
an error.

Once ``N.json`` exists the change is in the table, whatever happens next. The kernel
transaction runs its post-commit hooks (:data:`sqlext.log.transaction.KERNEL_POST_COMMIT`: the
checkpoint and log cleanup) and the ones :func:`engine_hooks` gives it (the symlink manifest);
the result rows built here, and catalog registration (:mod:`sqlext.names`), go through the same
:func:`after_commit`: work that fails is logged (``logging`` logger ``sqlext``, a warning naming
the table and the version) and the caller gets the committed result.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from sqlext.engine.io.scan import local_frame
from sqlext.log.manifest import generate_symlink_manifest
from sqlext.log.table_properties import SYMLINK_MANIFEST
from sqlext.log.transaction import PostCommitHook, Transaction, after_commit

__all__ = ["after_commit", "engine_hooks", "result_row"]


def _regenerate_manifest(txn: Transaction, version: int) -> None:
    metadata = txn.new_metadata or (txn.snapshot.metadata if txn.snapshot else None)
    if metadata is not None and SYMLINK_MANIFEST.of(metadata.configuration):
        generate_symlink_manifest(txn.log, txn.log.snapshot(version))


_ENGINE_HOOKS = (PostCommitHook("regenerating the symlink manifest", _regenerate_manifest),)


def engine_hooks() -> tuple[PostCommitHook, ...]:
    """The hooks :func:`sqlext.engine.commit.commit` adds after the kernel's: a table with
    ``delta.compatibility.symlinkFormatManifest.enabled`` gets its symlink manifests regenerated,
    as delta-spark does."""
    return _ENGINE_HOOKS


def result_row(spark: SparkSession, row: tuple | list, schema: T.StructType, *,
               table: str = "", version: int | None = None) -> DataFrame:
    """A one-row result DataFrame (a local relation: collecting it runs no Spark job); when
    building it through Arrow fails, the same row built by ``createDataFrame``."""
    return after_commit(table, version, "building the result row",
                        lambda: local_frame(spark, [tuple(row)], schema),
                        lambda: spark.createDataFrame([tuple(row)], schema))
