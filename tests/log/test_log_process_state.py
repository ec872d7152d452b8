"""The kernel's process-wide state is explicit: the caches (``LOG_CACHE``) and the log stores by
scheme (``LOG_STORES``) are objects with a public ``clear()``."""

from __future__ import annotations

import shutil

import pytest

from sqlext.errors import UnsupportedOperationError
from sqlext.log.cache import LOG_CACHE, LogCache
from sqlext.log import s3_store
from sqlext.log.storage import LOG_STORES, LocalLogStore, LogStores, store_for
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import append, create_table


def test_log_stores_serve_the_installed_fallback_until_cleared():
    stores = LogStores()
    with pytest.raises(UnsupportedOperationError, match="hdfs://nn/t"):
        stores.store_for("hdfs://nn/t")
    seen = []
    store = LocalLogStore()
    stores.install(lambda location: seen.append(location) or store)
    assert stores.store_for("hdfs://nn/t") is store and seen == ["hdfs://nn/t"]
    stores.clear()
    with pytest.raises(UnsupportedOperationError):
        stores.store_for("hdfs://nn/t")


def test_log_stores_choose_by_scheme_before_the_fallback():
    stores = LogStores()
    by_scheme, fallback = LocalLogStore(), LocalLogStore()
    stores.register(("gs",), lambda location: by_scheme)
    stores.install(lambda location: fallback)
    assert stores.store_for("GS://bucket/t") is by_scheme
    assert stores.store_for("hdfs://nn/t") is fallback
    stores.clear()
    assert stores.store_for("gs://bucket/t") is by_scheme


def test_the_kernel_registers_its_s3_store_for_both_schemes():
    assert isinstance(store_for("s3://bucket/t"), s3_store.S3LogStore)
    assert isinstance(store_for("s3a://bucket/t"), s3_store.S3LogStore)
    assert isinstance(LOG_STORES.store_for("s3a://bucket/t"), s3_store.S3LogStore)


def test_log_cache_serves_snapshots_and_commits_until_cleared(tmp_path):
    log = create_table(tmp_path / "t")
    append(log, [{"id": 1, "name": "a", "part": "a"}])
    snap = log.snapshot()
    assert LOG_CACHE.latest(log.location) is snap
    assert LOG_CACHE.commit(log.location, 1) is not None
    LOG_CACHE.clear()
    assert LOG_CACHE.latest(log.location) is None and LOG_CACHE.commit(log.location, 1) is None
    again = log.snapshot()
    assert again is not snap and again.version == 1 and len(again.files) == 1


def test_log_cache_forgets_a_table_created_again_at_the_same_path(tmp_path):
    path = tmp_path / "t"
    log = create_table(path)
    append(log, [{"id": 1, "name": "a", "part": "a"}])
    append(log, [{"id": 2, "name": "b", "part": "a"}])
    assert log.snapshot().version == 2
    shutil.rmtree(path)
    fresh = create_table(path)
    assert DeltaLog(str(path)).snapshot().version == 0
    assert LOG_CACHE.commit(fresh.location, 1) is None


def test_a_log_cache_of_its_own_is_independent():
    cache = LogCache(commit_limit=1)
    cache.put_commit("/a", 0, [])
    cache.put_commit("/a", 1, [])
    assert cache.commit("/a", 0) is None and cache.commit("/a", 1) == []
    assert LOG_CACHE.commit("/a", 1) is None
