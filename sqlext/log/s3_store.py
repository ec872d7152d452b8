"""A log store for ``s3://`` and ``s3a://`` tables, talking to S3 directly with boto3.

Put-if-absent is S3's conditional write: ``PutObject`` with ``If-None-Match: *`` creates the
object only if the key does not exist, and fails with 412 Precondition Failed when another writer
created it first. Since S3 made that atomic (2024), concurrent writers on one table are safe with
no coordination service (delta-spark's default S3 log store is single-writer and needs DynamoDB
for more).

A server that ignores the header would let a second writer silently replace a commit. Before its
first commit to a bucket, the store therefore probes the bucket once per process: it creates a
scratch object next to the commit (``_delta_log/.sqlext-probe-<uuid>``, so no permission beyond
the table's is needed) with ``If-None-Match: *`` and tries again; if the second put also
succeeds, the server does not honour the condition and every commit is refused with
:class:`~sqlext.errors.UnsafeObjectStoreError` (nothing is written).

Client options, first that applies: :func:`configure` (set in code); with a SparkSession, the
session's ``fs.s3a.*`` endpoint, region and keys (installed by the engine through
:func:`set_bucket_options`); boto3's own configuration (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_REGION``, ``~/.aws``...) for whatever those leave unset. ``boto3``
comes with the ``s3`` extra (``pip install sqlext[s3]``).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from urllib.parse import urlparse

from sqlext.errors import UnsafeObjectStoreError, UnsupportedOperationError
from sqlext.log.storage import LOG_STORES, FileStatus, LogStore

SCHEMES = ("s3", "s3a")

_client_options: dict = {}
_bucket_resolver = None     # bucket -> client options, installed by the engine (Spark's fs.s3a.*)
_bucket_options: dict = {}  # the resolver's answer per bucket, asked once
_clients: dict = {}
_probed: dict = {}          # (endpoint, bucket) -> True (honoured) / False (ignored)
_lock = threading.Lock()


def configure(**client_options) -> None:
    """Options for the boto3 S3 client of every S3 table in this process (``endpoint_url``,
    ``aws_access_key_id``, ``region_name``...); replaces earlier options."""
    with _lock:
        _client_options.clear()
        _client_options.update(client_options)
        _clients.clear()


def set_bucket_options(resolver) -> None:
    """Install ``resolver(bucket) -> client options``, used for buckets when :func:`configure`
    set nothing (the engine derives them from the session's ``fs.s3a.*`` settings); ``None``
    removes it. Each bucket's options are asked for once."""
    global _bucket_resolver
    with _lock:
        _bucket_resolver = resolver
        _bucket_options.clear()


def _options_for(bucket: str) -> dict:
    with _lock:
        if _client_options or _bucket_resolver is None:
            return dict(_client_options)
        if bucket in _bucket_options:
            return dict(_bucket_options[bucket])
        resolver = _bucket_resolver
    options = dict(resolver(bucket) or {})
    with _lock:
        _bucket_options[bucket] = options
    return dict(options)


def _client(bucket: str):
    options = _options_for(bucket)
    key = tuple(sorted(options.items())) + (os.environ.get("AWS_ENDPOINT_URL"), os.getpid())
    with _lock:
        client = _clients.get(key)
        if client is None:
            try:
                import boto3
                from botocore.config import Config
            except ImportError as exc:
                raise UnsupportedOperationError(
                    "s3:// tables need boto3: pip install 'sqlext[s3]'") from exc
            endpoint = options.get("endpoint_url") or os.environ.get("AWS_ENDPOINT_URL")
            # S3-compatible servers on a host:port (MinIO, moto, Ceph) need path-style addressing
            style = "path" if endpoint else "auto"
            options.setdefault("config", Config(s3={"addressing_style": style},
                                                retries={"max_attempts": 5, "mode": "standard"}))
            client = _clients[key] = boto3.session.Session().client("s3", **options)
        return client


def _split(path: str) -> tuple[str, str]:
    parsed = urlparse(path)
    if parsed.scheme not in SCHEMES or not parsed.netloc:
        raise ValueError(f"not an S3 path: {path!r}")
    return parsed.netloc, parsed.path.lstrip("/")


def _status(exc) -> int:
    return exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)


def _code(exc) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


class S3LogStore(LogStore):
    """Files under ``s3://bucket/...`` (or ``s3a://``), through boto3 on the driver."""

    def __init__(self, client=None):
        self._given = client

    def _s3(self, bucket: str):
        return self._given if self._given is not None else _client(bucket)

    def read(self, path: str) -> bytes:
        from botocore.exceptions import ClientError
        bucket, key = _split(path)
        try:
            return self._s3(bucket).get_object(Bucket=bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if _code(exc) in ("NoSuchKey", "404") or _status(exc) == 404:
                raise FileNotFoundError(path) from exc
            raise

    def write_if_absent(self, path: str, data: bytes) -> None:
        from botocore.exceptions import ClientError
        bucket, key = _split(path)
        self._require_conditional_put(path, bucket, key.rsplit("/", 1)[0] if "/" in key else "")
        for attempt in range(6):
            try:
                self._s3(bucket).put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
                return
            except ClientError as exc:
                if _status(exc) == 412:
                    # boto3 retries a put whose response was lost; if the lost attempt created
                    # the object, the retry sees it. Same bytes (a commit carries a fresh txnId)
                    # means the object is ours: reporting a lost race would commit it twice.
                    if self._holds(bucket, key, data):
                        return
                    raise FileExistsError(path) from exc
                # 409 ConditionalRequestConflict: another conditional put on the key is in flight;
                # S3 asks the caller to retry, which then either wins or gets 412
                if _status(exc) != 409 or attempt == 5:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _holds(self, bucket: str, key: str, data: bytes) -> bool:
        from botocore.exceptions import ClientError
        try:
            return self._s3(bucket).get_object(Bucket=bucket, Key=key)["Body"].read() == data
        except ClientError:
            return False

    def _require_conditional_put(self, path: str, bucket: str, directory: str) -> None:
        endpoint = self._s3(bucket).meta.endpoint_url
        with _lock:
            honoured = _probed.get((endpoint, bucket))
        if honoured is None:
            honoured = probe_conditional_put(self._s3(bucket), bucket, directory)
            with _lock:
                _probed[(endpoint, bucket)] = honoured
        if not honoured:
            raise UnsafeObjectStoreError(
                f"refusing to commit {path}: the S3 endpoint {endpoint} ignores conditional writes "
                f"(PutObject with If-None-Match: *) in bucket {bucket!r}, so a concurrent writer "
                "could silently replace this commit. Nothing was written; use an S3 service that "
                "supports conditional writes (AWS S3 does since August 2024).")

    def write(self, path: str, data: bytes) -> None:
        bucket, key = _split(path)
        self._s3(bucket).put_object(Bucket=bucket, Key=key, Body=data)

    def list_dir(self, path: str) -> list[FileStatus]:
        bucket, key = _split(path)
        prefix = key.rstrip("/") + "/" if key else ""
        out = []
        pages = self._s3(bucket).get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix, Delimiter="/")
        for page in pages:
            for obj in page.get("Contents", []):
                name = obj["Key"][len(prefix):]
                if name:
                    out.append(FileStatus(name, obj["Size"],
                                          int(obj["LastModified"].timestamp() * 1000)))
            for common in page.get("CommonPrefixes", []):
                out.append(FileStatus(common["Prefix"][len(prefix):].rstrip("/"), 0, 0, True))
        if not out:             # S3 has no directories: an empty prefix is a missing one
            raise FileNotFoundError(path)
        return out

    def exists(self, path: str) -> bool:
        from botocore.exceptions import ClientError
        bucket, key = _split(path)
        try:
            self._s3(bucket).head_object(Bucket=bucket, Key=key)
            return True
        except ClientError as exc:
            if _status(exc) != 404:
                raise
        found = self._s3(bucket).list_objects_v2(Bucket=bucket, Prefix=key.rstrip("/") + "/",
                                                 MaxKeys=1)
        return found.get("KeyCount", 0) > 0

    def delete(self, path: str) -> None:
        bucket, key = _split(path)
        self._s3(bucket).delete_object(Bucket=bucket, Key=key)     # S3 deletes missing keys quietly

    def join(self, base: str, *parts: str) -> str:
        return "/".join([base.rstrip("/"), *parts])


def probe_conditional_put(client, bucket: str, directory: str = "") -> bool:
    """Whether ``bucket``'s server refuses a second ``PutObject`` with ``If-None-Match: *`` on
    one key, a scratch key in ``directory`` (deleted afterwards)."""
    from botocore.exceptions import ClientError
    key = "/".join(filter(None, [directory.rstrip("/"), f".sqlext-probe-{uuid.uuid4().hex}"]))
    try:
        client.put_object(Bucket=bucket, Key=key, Body=b"1", IfNoneMatch="*")
    except ClientError as exc:
        if _status(exc) != 412:     # a fresh key: 412 only if boto3 retried our own put
            raise
    try:
        client.put_object(Bucket=bucket, Key=key, Body=b"2", IfNoneMatch="*")
        return False
    except ClientError as exc:
        if _status(exc) in (409, 412):
            return True
        raise
    finally:
        client.delete_object(Bucket=bucket, Key=key)


LOG_STORES.register(SCHEMES, lambda _location: S3LogStore())
