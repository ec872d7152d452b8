"""Symlink manifests (delta-spark's ``GENERATE symlink_format_manifest``): text files listing the
data files of the current version, for engines that read a table through manifests (Presto,
Trino, Athena, Redshift Spectrum) rather than through the Delta log.

Layout, as delta-spark writes it: ``<table>/_symlink_format_manifest/manifest`` for an
unpartitioned table; for a partitioned one, one ``manifest`` per partition under the Hive-style
partition path (``_symlink_format_manifest/p=a/q=1/manifest``, names and values escaped as Hive
escapes them, NULL as ``__HIVE_DEFAULT_PARTITION__``). Each line is a data file's absolute URI.
Manifests of partitions the version no longer has are deleted. Rows a deletion vector deletes
would be read back by such engines, and column-mapped files carry physical names they do not
know, so tables with either are refused, as delta-spark refuses them.
"""

from __future__ import annotations

from sqlext.errors import UnsupportedOperationError
from sqlext.log.column_mapping import mapping_mode
from sqlext.log.layout import HIVE_NULL
from sqlext.log.snapshot import Snapshot
from sqlext.log.storage import qualified_path
from sqlext.log.table import DeltaLog

MANIFEST_DIR = "_symlink_format_manifest"
MANIFEST_FILE = "manifest"
MODE = "symlink_format_manifest"
MANIFEST_PROPERTY = "delta.compatibility.symlinkFormatManifest.enabled"   # regenerate per commit

# Hive's ExternalCatalogUtils.escapePathName: these characters become %XX
_ESCAPED = {chr(c) for c in range(0x01, 0x20)} | set("\"#%'*/:=?\\\x7f{[]^")


def escape_path_name(name: str) -> str:
    """A partition column name or value as Hive writes it in a directory name."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in name)


def partition_path(columns: list[str], values: dict[str, str | None]) -> str:
    """``c1=v1/c2=v2`` for a file's partition values (empty for an unpartitioned table)."""
    return "/".join(f"{escape_path_name(c)}="
                    f"{HIVE_NULL if values.get(c) is None else escape_path_name(values[c])}"
                    for c in columns)


def _file_uri(log: DeltaLog, action_path: str) -> str:
    return qualified_path(log.data_path(action_path))


def manifests(log: DeltaLog, snapshot: Snapshot) -> dict[str, list[str]]:
    """Relative manifest path (under the table) -> the file URIs it lists, for ``snapshot``."""
    if mapping_mode(snapshot.metadata) != "none":
        raise UnsupportedOperationError(
            f"GENERATE {MODE} on {log.name} (version {snapshot.version}): the table uses column "
            "mapping, whose data files engines reading manifests cannot map to columns; "
            "delta-spark refuses it too")
    with_vectors = [f.path for f in snapshot.files if f.deletion_vector]
    if with_vectors:
        raise UnsupportedOperationError(
            f"GENERATE {MODE} on {log.name} (version {snapshot.version}): {len(with_vectors)} "
            "file(s) have deletion vectors, whose deleted rows engines reading manifests would "
            "return; purge them first (OPTIMIZE, or REORG TABLE ... APPLY (PURGE))")
    columns = snapshot.partition_columns
    out: dict[str, list[str]] = {}
    for add in snapshot.files:
        directory = partition_path(columns, add.partition_values)
        name = f"{MANIFEST_DIR}/{directory}/{MANIFEST_FILE}" if directory \
            else f"{MANIFEST_DIR}/{MANIFEST_FILE}"
        out.setdefault(name, []).append(_file_uri(log, add.path))
    if not columns:
        out.setdefault(f"{MANIFEST_DIR}/{MANIFEST_FILE}", [])
    return {name: sorted(uris) for name, uris in out.items()}


def _existing_manifests(log: DeltaLog, directory: str, prefix: str = "") -> list[str]:
    try:
        entries = log.store.list_dir(directory)
    except FileNotFoundError:
        return []
    found = []
    for entry in entries:
        rel = f"{prefix}{entry.name}"
        if entry.is_dir:
            found += _existing_manifests(log, log.store.join(directory, entry.name), rel + "/")
        elif entry.name == MANIFEST_FILE:
            found.append(f"{MANIFEST_DIR}/{rel}")
    return found


def generate_symlink_manifest(log: DeltaLog, snapshot: Snapshot) -> list[str]:
    """Write the manifests of ``snapshot`` and delete those of partitions it no longer has;
    returns the relative paths written. Nothing is written when the table is refused."""
    wanted = manifests(log, snapshot)
    for name, uris in wanted.items():
        path = log.store.join(log.location, *name.split("/"))
        log.store.mkdirs(path.rsplit("/", 1)[0])
        log.store.write(path, "".join(uri + "\n" for uri in uris).encode())
    for stale in set(_existing_manifests(log, log.store.join(log.location, MANIFEST_DIR))) \
            - set(wanted):
        log.store.delete(log.store.join(log.location, *stale.split("/")))
    return sorted(wanted)
