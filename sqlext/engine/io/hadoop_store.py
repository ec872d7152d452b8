"""A log store over Hadoop's FileSystem API, driven through a JVM gateway (Spark's py4j JVM).

Put-if-absent is Hadoop's ``FileContext.rename(tmp, final, Options.Rename.NONE)``, which fails when
``final`` exists: atomic on HDFS and on local/POSIX file systems. Object stores do not make rename
atomic: s3:// and s3a:// tables use :mod:`sqlext.log.s3_store` (conditional writes) instead, and
other object stores (gs://, abfss://) need one writer per table (see README, "Clusters and storage").

The gateway is passed in (``jvm`` and a Hadoop ``Configuration``), so this module does not import
pyspark.
"""

from __future__ import annotations

import uuid

from sqlext.log.storage import FileStatus, LogStore


def _java_class_name(exc: Exception) -> str:
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return java.getClass().getName()
        except Exception:  # noqa: BLE001 - a dead gateway leaves only the text
            pass
    return str(exc)


class HadoopLogStore(LogStore):
    """Files under any Hadoop file system URI, through the JVM of a running SparkSession."""

    def __init__(self, jvm, hadoop_conf):
        self._jvm = jvm
        self._conf = hadoop_conf

    def _path(self, path: str):
        return self._jvm.org.apache.hadoop.fs.Path(path)

    def _fs(self, path: str):
        return self._path(path).getFileSystem(self._conf)

    def read(self, path: str) -> bytes:
        p = self._path(path)
        fs = p.getFileSystem(self._conf)
        if not fs.exists(p):
            raise FileNotFoundError(path)
        stream = fs.open(p)
        try:
            length = fs.getFileStatus(p).getLen()
            buf = self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream, length)
            return bytes(buf)
        finally:
            stream.close()

    def _create(self, path: str, data: bytes, overwrite: bool) -> None:
        p = self._path(path)
        out = p.getFileSystem(self._conf).create(p, overwrite)
        try:
            out.write(bytearray(data))
        finally:
            out.close()

    def write_if_absent(self, path: str, data: bytes) -> None:
        final = self._path(path)
        tmp = self._path(f"{final.getParent().toString()}/.{final.getName()}.{uuid.uuid4().hex}.tmp")
        try:
            self._create(tmp.toString(), data, overwrite=False)
        except Exception:  # noqa: BLE001 - a full disk must not leave the temp file behind
            self._delete_quietly(tmp)
            raise
        fc = self._jvm.org.apache.hadoop.fs.FileContext.getFileContext(final.toUri(), self._conf)
        # rename(Path, Path, Options.Rename...) takes a Java array; py4j would pass a Python
        # list as a java.util.ArrayList, which matches no overload
        rename = self._jvm.org.apache.hadoop.fs.Options.Rename
        options = self._jvm.java.lang.reflect.Array.newInstance(rename._java_lang_class, 1)
        options[0] = rename.NONE
        try:
            fc.rename(tmp, final, options)
        except Exception as exc:  # noqa: BLE001 - py4j raises its own error type
            self._delete_quietly(tmp)
            if "FileAlreadyExistsException" in _java_class_name(exc) or "already exists" in str(exc):
                raise FileExistsError(path) from exc
            raise

    def _delete_quietly(self, p) -> None:
        try:
            p.getFileSystem(self._conf).delete(p, False)
        except Exception:  # noqa: BLE001 - the original error matters more
            pass

    def write(self, path: str, data: bytes) -> None:
        self._create(path, data, overwrite=True)

    def list_dir(self, path: str) -> list[FileStatus]:
        p = self._path(path)
        fs = p.getFileSystem(self._conf)
        if not fs.exists(p):
            raise FileNotFoundError(path)
        return [FileStatus(s.getPath().getName(), s.getLen(), s.getModificationTime(), s.isDirectory())
                for s in fs.listStatus(p)]

    def exists(self, path: str) -> bool:
        return bool(self._fs(path).exists(self._path(path)))

    def delete(self, path: str) -> None:
        self._fs(path).delete(self._path(path), False)

    def join(self, base: str, *parts: str) -> str:
        return "/".join([base.rstrip("/"), *parts])

    def mkdirs(self, path: str) -> None:
        self._fs(path).mkdirs(self._path(path))
