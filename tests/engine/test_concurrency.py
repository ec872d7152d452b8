"""Concurrent writers: blind appends from several processes lose nothing; transactions that really
conflict end with the documented exception for the loser and leave the table intact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sqlext
from sqlext.engine.constraints import table_constraints
from sqlext.engine.io.files import write_files
from sqlext.engine.schemas import spark_schema
from sqlext.errors import ConcurrentAppendException, ConcurrentDeleteDeleteException
from sqlext.log.table import DeltaLog
from sqlext.log.transaction import now_ms
from tests.support.table_checks import (actions_of, arrow, assert_readers_agree, commit_info,
                                  latest_version, table_state)

WORKER = Path(__file__).with_name("append_worker.py")
PROCESSES, COMMITS = 4, 25


def test_four_processes_appending_lose_nothing(spark, table_path, tmp_path):
    sqlext.write(spark.createDataFrame([(-1, -1)], "worker int, i int"), str(table_path))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    procs = [subprocess.Popen([sys.executable, str(WORKER), str(table_path), str(w), str(COMMITS),
                               str(tmp_path / f"wh{w}")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for w in range(PROCESSES)]
    outputs = [p.communicate(timeout=900) for p in procs]
    for p, (_, err) in zip(procs, outputs):
        assert p.returncode == 0, err[-3000:]

    assert latest_version(table_path) == PROCESSES * COMMITS
    expected = [(-1, -1)] + [(w, i) for w in range(PROCESSES) for i in range(COMMITS)]
    assert_readers_agree(spark, table_path, arrow(["worker", "i"], expected))
    # each version 1..100 is one blind append of one row; each worker's commits are in order
    version_of = {}
    for version in range(1, PROCESSES * COMMITS + 1):
        info = commit_info(table_path, version)
        assert info["operation"] == "WRITE" and info["isBlindAppend"] is True
        (add,) = actions_of(table_path, version, "add")
        assert json.loads(add["stats"])["numRecords"] == 1
    for out, _ in outputs:
        for line in out.split("\n"):
            if line.strip():
                w, i, v = map(int, line.split())
                version_of[(w, i)] = v
    assert sorted(version_of.values()) == list(range(1, PROCESSES * COMMITS + 1))
    for w in range(PROCESSES):
        versions = [version_of[(w, i)] for i in range(COMMITS)]
        assert versions == sorted(versions)
    log_dir = table_path / "_delta_log"
    assert all((log_dir / f"{v:020d}.checkpoint.parquet").is_file() for v in range(10, 101, 10))
    assert json.loads((log_dir / "_last_checkpoint").read_text())["version"] == 100


def _replace_partition(spark, log, snapshot, partition, rows):
    """A replaceWhere of one partition driven through the kernel: a transaction reading
    ``p = partition`` from ``snapshot``, its new files written by the engine."""
    schema = spark_schema(snapshot.metadata.schema_string)
    txn = log.start_transaction(snapshot)
    predicate = f"p = '{partition}'"
    old = [f for f in snapshot.files if f.partition_values["p"] == partition]
    txn.read_predicate(predicate)
    txn.read_files(old)
    new = write_files(spark, spark.createDataFrame(rows, "id int, p string"), log, ["p"], schema,
                      constraints=table_constraints(schema, snapshot.configuration))
    ts = now_ms()
    actions = [f.remove(ts) for f in old] + [w.add() for w in new]
    params = {"mode": "Overwrite", "predicate": json.dumps([predicate])}
    return lambda: txn.commit(actions, "WRITE", params)


@pytest.fixture
def two_partitions(spark, table_path):
    sqlext.write(spark.createDataFrame([(1, "a"), (2, "b")], "id int, p string"),
                 str(table_path), partitionBy=["p"])
    log = DeltaLog(str(table_path))
    return log, log.snapshot()


def test_conflicting_replace_where_loser_gets_concurrent_append(spark, table_path,
                                                                two_partitions):
    log, snapshot = two_partitions
    first = _replace_partition(spark, log, snapshot, "a", [(10, "a")])
    second = _replace_partition(spark, log, snapshot, "a", [(20, "a")])
    assert first() == 1
    before = table_state(table_path)
    with pytest.raises(ConcurrentAppendException, match="p = 'a'"):
        second()
    assert table_state(table_path) == before
    assert latest_version(table_path) == 1
    assert_readers_agree(spark, table_path, arrow(["id", "p"], [(10, "a"), (2, "b")]))


def test_same_file_removed_twice_loser_gets_concurrent_delete_delete(spark, table_path,
                                                                     two_partitions):
    """Two transactions that read nothing but both remove the file of partition b (as a blind
    partition drop would)."""
    log, snapshot = two_partitions
    (b_file,) = [f for f in snapshot.files if f.partition_values["p"] == "b"]
    txns = [log.start_transaction(snapshot) for _ in range(2)]
    assert txns[0].commit([b_file.remove(now_ms())], "DELETE", {"predicate": "[]"}) == 1
    before = table_state(table_path)
    with pytest.raises(ConcurrentDeleteDeleteException):
        txns[1].commit([b_file.remove(now_ms())], "DELETE", {"predicate": "[]"})
    assert table_state(table_path) == before
    assert_readers_agree(spark, table_path, arrow(["id", "p"], [(1, "a")]))


def test_replace_where_of_other_partitions_do_not_conflict(spark, table_path, two_partitions):
    log, snapshot = two_partitions
    first = _replace_partition(spark, log, snapshot, "a", [(10, "a")])
    second = _replace_partition(spark, log, snapshot, "b", [(20, "b")])
    assert first() == 1
    assert second() == 2          # retried on top of version 1: the winner touched only p = 'a'
    assert commit_info(table_path, 2)["readVersion"] == 0
    assert_readers_agree(spark, table_path, arrow(["id", "p"], [(10, "a"), (20, "b")]))
