"""Connects the kernel's log stores to Spark: non-local table locations (hdfs://, s3a://, ...) go
through Hadoop's FileSystem API in the session's JVM; data files are moved with the same API.
A Spark Connect session has no JVM in this process: its data files are moved, listed and read
through pyarrow's file systems (local paths, s3://, gs://, abfs://, hdfs:// where pyarrow has
them), and its log through the kernel's Python stores.
"""

from __future__ import annotations

import os
import shutil

from pyspark.sql import SparkSession

from sqlext.log import s3_store, storage
from sqlext.engine.io.hadoop_store import HadoopLogStore


def _arrow(spark: SparkSession, path: str):
    """(pyarrow file system, path in it) for a non-local ``path`` of a Spark Connect session;
    None for a classic session (the JVM's Hadoop file systems serve it)."""
    from sqlext.engine.session import is_connect
    if not is_connect(spark):
        return None
    from pyarrow import fs
    return fs.FileSystem.from_uri(path.replace("s3a://", "s3://", 1))


def install(spark: SparkSession, conf=None) -> None:
    """Route non-local locations to a Hadoop log store bound to ``spark``'s JVM (``conf``: its
    Hadoop configuration, when the caller has it already)."""
    jvm = spark.sparkContext._jvm
    if conf is None:
        conf = spark.sparkContext._jsc.hadoopConfiguration()
    storage.LOG_STORES.install(lambda _location: HadoopLogStore(jvm, conf))
    s3_store.set_bucket_options(lambda bucket: s3a_client_options(conf, bucket))


def s3a_client_options(conf, bucket: str) -> dict:
    """boto3 client options for ``bucket`` from Spark's s3a settings (``fs.s3a.bucket.<b>.*``
    before ``fs.s3a.*``): endpoint, region and static keys, so that the S3 log store reaches the
    bucket the way the session's data files do. Unset settings leave boto3's own defaults."""
    def get(name: str):
        return conf.get(f"fs.s3a.bucket.{bucket}.{name}") or conf.get(f"fs.s3a.{name}")
    options = {}
    endpoint = get("endpoint")
    if endpoint:
        if "://" not in endpoint:
            ssl = (get("connection.ssl.enabled") or "true").lower() == "true"
            endpoint = ("https://" if ssl else "http://") + endpoint
        options["endpoint_url"] = endpoint
    if get("endpoint.region"):
        options["region_name"] = get("endpoint.region")
    if get("access.key") and get("secret.key"):
        options.update(aws_access_key_id=get("access.key"), aws_secret_access_key=get("secret.key"))
        if get("session.token"):
            options["aws_session_token"] = get("session.token")
    return options


def move_file(spark: SparkSession, source: str, target: str) -> None:
    """Move one data file into place (creating parent directories)."""
    if storage.is_local(source) and storage.is_local(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.replace(source, target)
        return
    arrow = _arrow(spark, target)
    if arrow is not None:
        filesystem, dst = arrow
        filesystem.create_dir(dst.rsplit("/", 1)[0], recursive=True)
        filesystem.move(_arrow(spark, source)[1], dst)
        return
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    src, dst = jvm.org.apache.hadoop.fs.Path(source), jvm.org.apache.hadoop.fs.Path(target)
    fs = dst.getFileSystem(conf)
    fs.mkdirs(dst.getParent())
    if not fs.rename(src, dst):
        raise OSError(f"could not move {source} to {target}")


def remove_tree(spark: SparkSession, path: str) -> None:
    """Delete a directory tree (a write's staging directory), or a single file."""
    if storage.is_local(path):
        local = storage.normalize_location(path)
        if os.path.isfile(local):
            os.remove(local)
            return
        shutil.rmtree(local, ignore_errors=True)
        return
    arrow = _arrow(spark, path)
    if arrow is not None:
        from pyarrow import fs
        filesystem, target = arrow
        kind = filesystem.get_file_info(target).type
        if kind == fs.FileType.Directory:
            filesystem.delete_dir(target)
        elif kind == fs.FileType.File:
            filesystem.delete_file(target)
        return
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).delete(p, True)


def remove_empty_dir(spark: SparkSession, path: str) -> None:
    """Delete a directory if it exists and is empty; otherwise leave it (no error)."""
    if storage.is_local(path):
        try:
            os.rmdir(storage.normalize_location(path))
        except OSError:
            pass
        return
    arrow = _arrow(spark, path)
    if arrow is not None:
        filesystem, target = arrow
        try:
            if not filesystem.get_file_info(_selector(target)):
                filesystem.delete_dir(target)
        except OSError:
            pass
        return
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    try:
        # not recursive: a non-empty directory raises (the FileSystem contract) and stays
        p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).delete(p, False)
    except Exception:  # noqa: BLE001 - py4j wraps PathIsNotEmptyDirectoryException
        pass


def list_files(spark: SparkSession, root: str) -> list[tuple[str, int, int]]:
    """(relative path, size, mtime ms) of every data file below ``root``, skipping hidden ones."""
    out = []
    if storage.is_local(root):
        root = storage.normalize_location(root)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "_"))]
            for name in filenames:
                if name.startswith((".", "_")):
                    continue
                full = os.path.join(dirpath, name)
                st = os.stat(full)
                out.append((os.path.relpath(full, root), st.st_size, st.st_mtime_ns // 1_000_000))
        return out
    arrow = _arrow(spark, root)
    if arrow is not None:
        from pyarrow import fs
        filesystem, base = arrow
        for info in filesystem.get_file_info(_selector(base, recursive=True)):
            rel = info.path[len(base.rstrip("/")) + 1:]
            if info.type != fs.FileType.File or any(
                    part.startswith((".", "_")) for part in rel.split("/")):
                continue
            out.append((rel, info.size, info.mtime_ns // 1_000_000 if info.mtime_ns else 0))
        return out
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    base = jvm.org.apache.hadoop.fs.Path(root)
    fs = base.getFileSystem(conf)
    it = fs.listFiles(base, True)
    prefix = fs.makeQualified(base).toString().rstrip("/") + "/"
    while it.hasNext():
        st = it.next()
        full = st.getPath().toString()
        rel = full[len(prefix):] if full.startswith(prefix) else st.getPath().getName()
        if any(part.startswith((".", "_")) for part in rel.split("/")):
            continue
        out.append((rel, st.getLen(), st.getModificationTime()))
    return out


def open_for_footer(spark: SparkSession, path: str):
    """Something pyarrow can read a parquet footer from: the path itself locally, else bytes."""
    if storage.is_local(path):
        return storage.normalize_location(path)
    import pyarrow as pa
    arrow = _arrow(spark, path)
    if arrow is not None:
        filesystem, target = arrow
        with filesystem.open_input_file(target) as handle:
            return pa.BufferReader(handle.read())
    jvm = spark.sparkContext._jvm
    return pa.BufferReader(HadoopLogStore(jvm, spark.sparkContext._jsc.hadoopConfiguration()).read(path))


def _selector(path: str, recursive: bool = False):
    from pyarrow import fs
    return fs.FileSelector(path, allow_not_found=True, recursive=recursive)
