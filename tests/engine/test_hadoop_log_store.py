"""HadoopLogStore against Hadoop's local file system through a bare py4j JVM (no SparkSession):
put-if-absent through FileContext.rename(NONE), listing, reads, and a kernel table on top."""

from __future__ import annotations

import glob
import os
import shutil

import pytest

from sqlext.engine.io.hadoop_store import HadoopLogStore
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import clear_caches

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="needs a Java runtime")


@pytest.fixture(scope="module")
def jvm():
    import pyspark
    from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    classpath = os.pathsep.join(glob.glob(os.path.join(jars, "*.jar")))
    port, proc = launch_gateway(classpath=classpath, die_on_exit=True, return_proc=True)
    gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auto_convert=True))
    try:
        yield gateway.jvm
    finally:
        gateway.shutdown()
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def store(jvm):
    return HadoopLogStore(jvm, jvm.org.apache.hadoop.conf.Configuration())


def test_put_if_absent_list_read(store, tmp_path):
    base = f"file://{tmp_path}"
    d = store.join(base, "_delta_log")
    store.mkdirs(d)
    f = store.join(d, f"{0:020d}.json")
    store.write_if_absent(f, b'{"a":1}\n')
    with pytest.raises(FileExistsError):
        store.write_if_absent(f, b'{"b":2}\n')
    assert store.read(f) == b'{"a":1}\n'
    assert store.exists(f) and not store.exists(store.join(d, "nope"))
    with pytest.raises(FileNotFoundError):
        store.read(store.join(d, "nope"))
    with pytest.raises(FileNotFoundError):
        store.list_dir(store.join(base, "missing"))
    store.write(store.join(d, "_last_checkpoint"), b"x")
    store.write(store.join(d, "_last_checkpoint"), b"yz")
    names = {s.name: s for s in store.list_dir(d) if not s.name.startswith(".")}
    assert set(names) == {f"{0:020d}.json", "_last_checkpoint"}
    assert names["_last_checkpoint"].size == 2 and names[f"{0:020d}.json"].modification_time > 0
    assert not [n for n in os.listdir(tmp_path / "_delta_log") if n.endswith(".tmp")]
    store.delete(store.join(d, "_last_checkpoint"))
    store.delete(store.join(d, "_last_checkpoint"))
    assert not store.exists(store.join(d, "_last_checkpoint"))


def test_kernel_table_through_the_hadoop_store(store, tmp_path):
    from sqlext.log.actions import AddFile, Metadata, Protocol
    clear_caches()
    log = DeltaLog(str(tmp_path / "t"), store=store)      # Hadoop's default FS: file://
    txn = log.start_transaction()
    txn.update_protocol(Protocol(1, 2))
    txn.update_metadata(Metadata.new('{"type":"struct","fields":[{"name":"id","type":"long",'
                                     '"nullable":true,"metadata":{}}]}', [], {}, 1))
    assert txn.commit([], "CREATE TABLE") == 0
    loser = log.start_transaction()
    for i in range(11):
        log.start_transaction().commit([AddFile(f"f{i}.parquet", {}, 1, 1)], "WRITE")
    assert loser.commit([AddFile("late.parquet", {}, 1, 1)], "WRITE") == 12   # retried past 11
    clear_caches()
    snap = log.snapshot()
    assert snap.version == 12 and len(snap.files) == 12 and snap.checkpoint_version == 10
    assert (tmp_path / "t" / "_delta_log" / f"{10:020d}.checkpoint.parquet").exists()
