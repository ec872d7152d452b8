"""Log stores: the file operations the transaction log needs, above all put-if-absent.

A commit is correct only if creating ``N.json`` fails when another writer created it first. On a
local disk that is ``os.link(tmp, final)``; other file systems supply a :class:`LogStore` (see
:mod:`sqlext.log.s3_store` for s3:// and s3a:// through S3's conditional writes, and
:mod:`sqlext.engine.io.hadoop_store` for hdfs:// and other Hadoop file systems through Spark's
JVM), registered by URL scheme in :data:`LOG_STORES`.
"""

from __future__ import annotations

import os
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, Iterable
from urllib.parse import unquote, urlparse


@dataclass(frozen=True)
class FileStatus:
    name: str            # the entry's name inside the listed directory
    size: int
    modification_time: int   # milliseconds since the epoch
    is_dir: bool = False


class LogStore(ABC):
    """File operations on one file system. Paths are the store's own (OS paths or URIs)."""

    @abstractmethod
    def read(self, path: str) -> bytes:
        """The whole file; raises FileNotFoundError when it is missing."""

    @abstractmethod
    def write_if_absent(self, path: str, data: bytes) -> None:
        """Create ``path`` atomically with ``data``; raise FileExistsError if it exists."""

    @abstractmethod
    def write(self, path: str, data: bytes) -> None:
        """Create or replace ``path`` with ``data`` (readers see the old or the new file whole)."""

    @abstractmethod
    def list_dir(self, path: str) -> list[FileStatus]:
        """The entries of a directory; raises FileNotFoundError when it is missing."""

    def list_names(self, path: str) -> list[str]:
        """The names of a directory's entries (cheaper than :meth:`list_dir` where a status
        costs a call per file); raises FileNotFoundError when it is missing."""
        return [e.name for e in self.list_dir(path)]

    @abstractmethod
    def exists(self, path: str) -> bool:
        """Whether a file or directory exists at ``path``."""

    @abstractmethod
    def delete(self, path: str) -> None:
        """Delete a file; a missing file is not an error."""

    @abstractmethod
    def join(self, base: str, *parts: str) -> str:
        """``base/part/...`` in this store's path syntax."""

    def mkdirs(self, path: str) -> None:
        """Create a directory and its parents (no-op where directories are implicit)."""


class LocalLogStore(LogStore):
    """The local file system; put-if-absent through a hard link."""

    def read(self, path: str) -> bytes:
        with open(path, "rb") as f:
            return f.read()

    def _write_tmp(self, path: str, data: bytes) -> str:
        directory, name = os.path.split(path)
        os.makedirs(directory, exist_ok=True)
        tmp = os.path.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
        try:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except BaseException:
            _unlink_quietly(tmp)     # a full disk must not leave a half-written temp file behind
            raise
        return tmp

    def write_if_absent(self, path: str, data: bytes) -> None:
        tmp = self._write_tmp(path, data)
        try:
            os.link(tmp, path)          # fails with FileExistsError if another writer won
        finally:
            os.unlink(tmp)

    def write(self, path: str, data: bytes) -> None:
        tmp = self._write_tmp(path, data)
        try:
            os.replace(tmp, path)
        except BaseException:
            _unlink_quietly(tmp)
            raise

    def list_dir(self, path: str) -> list[FileStatus]:
        out = []
        with os.scandir(path) as it:
            for entry in it:
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                out.append(FileStatus(entry.name, st.st_size, st.st_mtime_ns // 1_000_000,
                                      entry.is_dir(follow_symlinks=False)))
        return out

    def list_names(self, path: str) -> list[str]:
        return os.listdir(path)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def delete(self, path: str) -> None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass

    def join(self, base: str, *parts: str) -> str:
        return os.path.join(base, *parts)

    def mkdirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def is_local(location: str) -> bool:
    """Whether a table location is on the local file system (a plain path or ``file:`` URI)."""
    scheme = urlparse(location).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")


def normalize_location(location: str) -> str:
    """A canonical table location: an absolute OS path for local tables, the URI otherwise."""
    location = str(location)
    if is_local(location):
        if location.startswith("file:"):
            location = unquote(urlparse(location).path)
        return os.path.abspath(location).rstrip(os.sep) or os.sep
    return location.rstrip("/")


def qualified_path(path: str) -> str:
    """``path`` as Hadoop prints a qualified path: ``file:/abs/path`` for a local one (what
    delta-spark answers, e.g. VACUUM's ``path`` column), a URI unchanged."""
    return f"file:{path}" if is_local(path) and not path.startswith("file:") else path


class LogStores:
    """The log store for each kind of non-local location, chosen by URL scheme. A store
    registers its schemes with a factory (:mod:`sqlext.log.s3_store` registers ``s3`` and
    ``s3a`` when the kernel loads); the engine, which owns the JVM (this package never imports
    pyspark), installs a fallback for every other scheme (hdfs://, abfss://, ...: Hadoop's file
    systems, :mod:`sqlext.engine.io.hadoop_store`). One per process, as a PySpark process has one
    JVM: every session of it shares the Hadoop file systems, so the fallback installed last
    serves them all. :meth:`clear` removes the fallback."""

    def __init__(self):
        self._by_scheme: dict[str, Callable[[str], LogStore]] = {}
        self._fallback: Callable[[str], LogStore] | None = None

    def register(self, schemes: Iterable[str], factory: Callable[[str], LogStore]) -> None:
        """Use ``factory(location)`` for locations whose URL scheme is one of ``schemes``."""
        for scheme in schemes:
            self._by_scheme[scheme.lower()] = factory

    def install(self, factory: Callable[[str], LogStore] | None) -> None:
        """Use ``factory(location)`` for non-local locations no registered scheme serves
        (``None``: none)."""
        self._fallback = factory

    def clear(self) -> None:
        """Remove the fallback: locations of unregistered schemes fail until one is installed."""
        self._fallback = None

    def store_for(self, location: str) -> LogStore:
        """The store for a non-local location; raises when nothing serves its scheme."""
        factory = self._by_scheme.get(urlparse(location).scheme.lower(), self._fallback)
        if factory is None:
            from sqlext.errors import UnsupportedOperationError
            raise UnsupportedOperationError(
                f"no log store for {location!r}: tables outside the local file system need a "
                "SparkSession (sqlext.session()) whose Hadoop file system provides put-if-absent")
        return factory(location)


#: the process's log stores by scheme (the engine's fallback: :func:`sqlext.engine.io.storage_bridge.install`)
LOG_STORES = LogStores()


def store_for(location: str) -> LogStore:
    """The log store for a table location."""
    if is_local(location):
        return LocalLogStore()
    return LOG_STORES.store_for(location)
