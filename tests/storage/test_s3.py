"""Tables on S3 (moto's server on loopback, tests/support/s3_server.py): sqlext's S3 log store
commits with conditional writes (PutObject If-None-Match: *), Spark's s3a:// connector writes
the data files. Cross-checked with deltalake reading the same bucket."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading

import pytest
from deltalake import DeltaTable as RsTable

import sqlext
from sqlext.errors import ConcurrentModificationException, UnsafeObjectStoreError
from sqlext.log import s3_store
from sqlext.log.s3_store import S3LogStore, probe_conditional_put
from sqlext.log.schema import Field
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import clear_caches, create_table
from tests.support.s3 import REPO_ROOT, S3Server, s3a_jars
from tests.support.s3_writer import read_ids


@pytest.fixture(scope="module")
def s3():
    server = S3Server.start()
    server.configure_store()
    yield server
    s3_store.configure()
    server.stop()


def rs_ids(server: S3Server, location: str, version: int | None = None) -> list[int]:
    table = RsTable(location.replace("s3a://", "s3://"), version=version,
                    storage_options=server.deltalake_options())
    return sorted(table.to_pyarrow_table().column("id").to_pylist())


def test_server_conditional_put_is_atomic(s3):
    """The premise of the S3 tests: 16 puts racing on one key, ten times: one wins, 15 get 412."""
    bucket = s3.new_bucket("race")
    import botocore
    client = s3.client()                    # boto3 clients are thread-safe; one connection each
    outcomes = []
    for key in range(10):
        # statuses appended (atomic), not counted in the threads: `counter[k] += 1` from 16
        # threads loses increments under load
        statuses: list = []
        barrier = threading.Barrier(16)

        def put(i, key=key, statuses=statuses, barrier=barrier):
            barrier.wait()
            try:
                client.put_object(Bucket=bucket, Key=f"k{key}", Body=b"%d" % i, IfNoneMatch="*")
                statuses.append(200)
            except botocore.exceptions.ClientError as exc:
                statuses.append(exc.response["ResponseMetadata"]["HTTPStatusCode"])
            except Exception as exc:  # noqa: BLE001 - shown in the assertion, not lost
                statuses.append(type(exc).__name__)
        threads = [threading.Thread(target=put, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        outcomes.append(dict(collections.Counter(statuses)))
    assert outcomes == [{200: 1, 412: 15}] * 10


def test_log_store_operations(s3):
    bucket = s3.new_bucket()
    store = S3LogStore()
    log_dir = f"s3a://{bucket}/t/_delta_log"
    commit = store.join(log_dir, f"{0:020d}.json")
    store.write_if_absent(commit, b'{"a":1}\n')
    with pytest.raises(FileExistsError):
        store.write_if_absent(commit, b'{"b":2}\n')
    assert store.read(commit) == b'{"a":1}\n'
    with pytest.raises(FileNotFoundError):
        store.read(store.join(log_dir, "nope"))
    with pytest.raises(FileNotFoundError):
        store.list_dir(f"s3a://{bucket}/missing")
    store.write(store.join(log_dir, "_last_checkpoint"), b"x")
    store.write(store.join(log_dir, "_last_checkpoint"), b"yz")
    store.write(store.join(log_dir, "_sidecars", "s.parquet"), b"p")
    entries = {e.name: e for e in store.list_dir(log_dir)}
    assert set(entries) == {f"{0:020d}.json", "_last_checkpoint", "_sidecars"}
    assert entries["_sidecars"].is_dir and entries["_last_checkpoint"].size == 2
    assert entries[commit.rsplit("/", 1)[1]].modification_time > 0
    assert store.exists(commit) and store.exists(log_dir) and store.exists(f"s3://{bucket}/t")
    assert not store.exists(store.join(log_dir, "nope"))
    store.delete(store.join(log_dir, "_last_checkpoint"))
    store.delete(store.join(log_dir, "_last_checkpoint"))
    assert not store.exists(store.join(log_dir, "_last_checkpoint"))
    # the probe's scratch object (made next to the first commit) is gone
    keys = [o["Key"] for o in s3.client().list_objects_v2(Bucket=bucket)["Contents"]]
    assert not [k for k in keys if "sqlext-probe" in k]


@pytest.fixture
def spark_conf_only(s3):
    """No options set in code for the S3 log store: it takes the session's fs.s3a.* settings."""
    s3_store.configure()
    yield
    s3.configure_store()


def test_retried_put_of_our_own_commit_is_not_a_lost_race(s3):
    """A put whose response is lost is retried by boto3 and then finds the object it created:
    the store reads it back and reports success, not FileExistsError (which would make the
    transaction commit the same actions again at the next version)."""
    bucket = s3.new_bucket()
    client = s3.client()
    retried = []

    def lose_first_response(response, attempts, operation, **_):
        if response is not None and response[0].status_code == 200 and attempts == 1:
            retried.append(attempts)
            return 0                # seconds to wait before retrying, as if the reply was lost
        return None
    client.meta.events.register("needs-retry.s3.PutObject", lose_first_response)
    store = S3LogStore(client)
    ours = f"s3://{bucket}/t/_delta_log/{0:020d}.json"
    store.write_if_absent(ours, b'{"commitInfo":{"txnId":"a"}}\n')
    assert len(retried) >= 2        # the probe's first put, and the commit's
    assert store.read(ours) == b'{"commitInfo":{"txnId":"a"}}\n'
    with pytest.raises(FileExistsError):        # someone else's bytes: a lost race
        store.write_if_absent(ours, b'{"commitInfo":{"txnId":"b"}}\n')


def test_engine_on_s3a(spark, s3, spark_conf_only):
    """Writes, DELETE, UPDATE, MERGE, time travel, change feed and history on an s3a:// table:
    the log through the S3 store, the data files through Spark's s3a connector, both configured
    by the session's per-bucket fs.s3a.* settings alone."""
    assert s3a_jars(), "scripts/s3_jars.sh (run by test.sh) fetches Spark's s3a connector"
    bucket = s3.new_bucket()
    s3.configure_spark(spark, bucket)
    path = f"s3a://{bucket}/events"
    df = spark.createDataFrame([(i, f"v{i}", i % 2) for i in range(6)], "id long, v string, part long")
    assert sqlext.write(df, path, partitionBy=["part"],              # change feed on by default
                        configuration={"delta.checkpointInterval": "3"}) == 0
    assert sqlext.write(spark.createDataFrame([(6, "v6", 0)], df.schema), path) == 1
    table = sqlext.DeltaTable.forPath(spark, path)
    table.delete("id = 1")                                                  # v2
    table.update("id = 2", {"v": "'two'"})                                  # v3
    source = spark.createDataFrame([(3, "three", 1), (7, "v7", 1)], df.schema)
    (table.alias("t").merge(source.alias("s"), "t.id = s.id")              # v4
     .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
    rows = {r.id: r.v for r in sqlext.read(spark, path).collect()}
    assert rows == {0: "v0", 2: "two", 3: "three", 4: "v4", 5: "v5", 6: "v6", 7: "v7"}
    assert sorted(r.id for r in sqlext.read(spark, path, versionAsOf=1).collect()) == list(range(7))
    changes = sorted((r.id, r._change_type, r._commit_version)
                     for r in sqlext.changes(spark, path, startingVersion=2).collect())
    assert changes == [(1, "delete", 2), (2, "update_postimage", 3), (2, "update_preimage", 3),
                       (3, "update_postimage", 4), (3, "update_preimage", 4), (7, "insert", 4)]
    assert [r.version for r in table.history().collect()] == [4, 3, 2, 1, 0]
    # deltalake reads the same bucket, latest and time travel
    assert rs_ids(s3, path) == sorted(rows)
    assert rs_ids(s3, path, version=1) == list(range(7))
    keys = [o["Key"] for o in s3.client().list_objects_v2(Bucket=bucket)["Contents"]]
    assert sorted(k for k in keys if "_delta_log/" in k and k.endswith(".json")) == \
        [f"events/_delta_log/{v:020d}.json" for v in range(5)]
    assert f"events/_delta_log/{3:020d}.checkpoint.parquet" in keys      # written through the store


def test_s3a_settings_become_client_options(spark):
    """The engine's mapping of fs.s3a.* to boto3 options: per-bucket before global, a scheme
    added from connection.ssl.enabled, keys only in pairs."""
    from sqlext.engine.io.storage_bridge import s3a_client_options
    conf = spark.sparkContext._jvm.org.apache.hadoop.conf.Configuration(False)
    conf.set("fs.s3a.endpoint", "s3.example.com")
    conf.set("fs.s3a.access.key", "global-key")
    conf.set("fs.s3a.bucket.b1.endpoint", "127.0.0.1:9000")
    conf.set("fs.s3a.bucket.b1.connection.ssl.enabled", "false")
    conf.set("fs.s3a.bucket.b1.endpoint.region", "eu-west-1")
    conf.set("fs.s3a.bucket.b1.secret.key", "b1-secret")
    assert s3a_client_options(conf, "b1") == {
        "endpoint_url": "http://127.0.0.1:9000", "region_name": "eu-west-1",
        "aws_access_key_id": "global-key", "aws_secret_access_key": "b1-secret"}
    assert s3a_client_options(conf, "b2") == {"endpoint_url": "https://s3.example.com"}


def test_four_kernel_writers_on_one_s3_table(s3):
    """Four processes append and rewrite files of one S3 table: every append commits once,
    rewrites that lose raise typed conflicts, the log has no gaps and no lost commit, and
    checkpoints (every 5 versions) are written and read through the store."""
    bucket = s3.new_bucket()
    location = f"s3://{bucket}/t"
    clear_caches()
    create_table(location, schema=[Field("id", "long"), Field("name", "string")],
                 partition_columns=(), configuration={"delta.checkpointInterval": "5"})
    env = {**os.environ, **s3.env}
    procs = [subprocess.Popen([sys.executable, "-m", "tests.support.s3_writer", location, str(w), "6"],
                              cwd=REPO_ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(4)]
    for proc in procs:                      # all connected before any starts
        assert json.loads(proc.stdout.readline()) == {"op": "ready"}, proc.stderr.read()
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        reports += [json.loads(line) for line in out.splitlines()]
    appends = [r for r in reports if r["op"] == "append"]
    rewrites = [r for r in reports if r["op"] == "rewrite" and "version" in r]
    conflicts = [r["conflict"] for r in reports if "conflict" in r]
    assert len(appends) == 12 and len(rewrites) + len(conflicts) == 12
    assert conflicts, "no rewrite lost a race: the test did not exercise concurrent commits"
    assert set(conflicts) <= {"ConcurrentAppendException", "ConcurrentDeleteReadException",
                              "ConcurrentDeleteDeleteException"}
    versions = sorted(r["version"] for r in appends + rewrites)
    assert versions == list(range(1, len(versions) + 1))        # one version per success
    expected = sorted(i for r in appends for i in r["ids"])
    clear_caches()
    log = DeltaLog(location)
    snapshot = log.snapshot()
    assert snapshot.version == len(versions)
    store = S3LogStore()
    ids = sorted(i for f in snapshot.files for i in read_ids(store, location, f))
    assert ids == expected and len(snapshot.files) == 12
    names = [e.name for e in store.list_dir(f"{location}/_delta_log")]
    assert any(n.endswith(".checkpoint.parquet") for n in names)
    assert "_last_checkpoint" in names
    assert rs_ids(s3, location) == expected


def test_server_ignoring_if_none_match_is_refused(s3):
    """On a server that drops If-None-Match, a second put on a key silently replaces the first:
    sqlext's store detects that with its probe and refuses to commit; nothing is written."""
    server = S3Server.start(ignore_if_none_match=True)
    try:
        bucket = server.new_bucket()
        client = server.client()
        assert probe_conditional_put(client, bucket) is False
        server.configure_store()
        clear_caches()
        location = f"s3://{bucket}/t"
        with pytest.raises(UnsafeObjectStoreError, match="ignores conditional writes"):
            create_table(location)
        assert client.list_objects_v2(Bucket=bucket, Prefix="t/").get("KeyCount") == 0
        with pytest.raises(UnsafeObjectStoreError):       # and again: the verdict is cached
            S3LogStore().write_if_absent(f"{location}/_delta_log/{0:020d}.json", b"{}\n")
        assert client.list_objects_v2(Bucket=bucket).get("KeyCount") == 0
    finally:
        s3.configure_store()
        server.stop()
