"""Small INSERTs without a Spark job (sqlext/engine/local/insert.py, hooked into the write
command): ``INSERT INTO t VALUES`` and ``INSERT ... SELECT <literals>`` run zero Spark jobs on
the driver path, and the same statements on the Spark path (``spark.sqlext.execution.local`` =
``off``) commit the same log actions (files per partition, partition values, statistics),
operation, parameters and metrics, and the same rows; CHECK and NOT NULL violations raise the
same errors on both paths and leave the table unchanged.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

import sqlext
from sqlext.engine.local.policy import MODE_CONF
from sqlext.errors import ConstraintViolationError
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows, read_deltalake
from tests.support.spark import jobs_run, spark_conf

CREATE = ("CREATE TABLE {t} (id BIGINT NOT NULL, v STRING, d DECIMAL(10,2), ts TIMESTAMP, "
          "a ARRAY<INT>, p STRING) USING delta {parts} TBLPROPERTIES "
          "('delta.constraints.positive' = 'id > 0'{props})")
INSERTS = [
    "INSERT INTO {t} VALUES (1, 'a', 1.5, TIMESTAMP'2020-01-01 00:00:00', array(1, 2), 'x'), "
    "(2, NULL, NULL, NULL, NULL, NULL), (3, 'c', 3.255, TIMESTAMP'2021-01-01 10:00:00.5', "
    "array(), 'x'), (4, 'ü', -1, NULL, array(NULL), 'y/z')",
    "INSERT INTO {t} SELECT 10 + 1, upper('q'), CAST(7 AS DECIMAL(10,2)), "
    "TIMESTAMP'2022-02-02 02:02:02', array(3), concat('p', '1')",
    "INSERT INTO {t} (id, p) VALUES (20, 'x')",
    "INSERT INTO {t} (p, id, v) SELECT * FROM VALUES ('y/z', 30, 'r'), ('w', 31, 's') AS s(p, id, v)",
]
LAYOUTS = [pytest.param("", "", id="plain"),
           pytest.param("PARTITIONED BY (p)", "", id="partitioned"),
           pytest.param("PARTITIONED BY (p)", ", 'delta.columnMapping.mode' = 'name'",
                        id="partitioned-mapped")]


def _table(spark, path, parts: str, props: str) -> str:
    t = f"delta.`{path}`"
    sqlext.sql(spark, CREATE.format(t=t, parts=parts, props=props))
    return t


def _commit(log: DeltaLog, version: int) -> dict:
    """What a version committed, without what differs between any two writes (paths, sizes,
    times, ids) and between two parquet writers (sizes): the adds' partition values and
    statistics, the operation, its parameters and metrics."""
    actions = [json.loads(line) for line in
               log.store.read(log.store.join(log.location, "_delta_log", f"{version:020d}.json"))
               .decode().splitlines()]
    mapping = ColumnMapping.of(log.snapshot(version).metadata)   # logical names: tables differ
    adds = Counter(json.dumps([_logical(mapping, "logical_partition_values",
                                        a["add"]["partitionValues"]),
                               _logical(mapping, "logical_stats", json.loads(a["add"]["stats"])),
                               a["add"]["dataChange"]], sort_keys=True)
                   for a in actions if "add" in a)
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    metrics = dict(info["operationMetrics"])
    sizes = sum(a["add"]["size"] for a in actions if "add" in a)
    assert int(metrics.pop("numOutputBytes")) == sizes      # the path's own files
    metrics.pop("executionTimeMs")
    return {"adds": adds, "operation": info["operation"], "metrics": metrics,
            "parameters": info["operationParameters"], "kinds": sorted(
                k for a in actions for k in a if k != "commitInfo")}


def _logical(mapping, method: str, values: dict) -> dict:
    return getattr(mapping, method)(values) if mapping is not None else values


@pytest.mark.parametrize("parts,props", LAYOUTS)
def test_small_inserts_are_the_spark_paths_without_a_job(spark, tmp_path, parts, props):
    mapped = "name" if props else None
    logs = {}
    for mode in ("force", "off"):
        path = tmp_path / mode
        with spark_conf(spark, {MODE_CONF: mode}):
            t = _table(spark, path, parts, props)
            for statement in INSERTS:
                _, jobs = jobs_run(spark, lambda: sqlext.sql(spark, statement.format(t=t)))
                if mode == "force":
                    assert jobs == 0, statement
        logs[mode] = DeltaLog(str(path))
    for version in range(1, len(INSERTS) + 1):
        assert _commit(logs["force"], version) == _commit(logs["off"], version), version
    local = sqlext.read(spark, str(tmp_path / "force"))
    assert local.count() == 8
    assert_same_rows(local, sqlext.read(spark, str(tmp_path / "off")), sort_by=["id"])
    assert_same_rows(read_deltalake(tmp_path / "force"), local, sort_by=["id"])
    if mapped:
        files = [a.path for a in logs["force"].snapshot().files]
        assert all(f.startswith("col-") for f in files), files   # physical partition names


def test_auto_writes_a_small_insert_on_the_driver_and_a_larger_one_with_spark(spark, tmp_path):
    t = _table(spark, tmp_path / "t", "PARTITIONED BY (p)", "")
    with spark_conf(spark, {MODE_CONF: "auto"}):     # the default
        _, jobs = jobs_run(spark, lambda: sqlext.sql(spark, INSERTS[0].format(t=t)))
    assert jobs == 0
    with spark_conf(spark, {MODE_CONF: "auto", "spark.sqlext.execution.localMaxBytes": "1"}):
        _, jobs = jobs_run(spark, lambda: sqlext.sql(spark, INSERTS[0].format(t=t)))
    assert jobs > 0                    # more than localMaxBytes: Spark's writer
    assert sqlext.read(spark, str(tmp_path / "t")).count() == 8


@pytest.mark.parametrize("statement,error_class", [
    ("INSERT INTO {t} VALUES (5, 'a', 1, NULL, NULL, 'x'), (0, 'b', 1, NULL, NULL, 'x')",
     "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"),
    ("INSERT INTO {t} (id, v) SELECT CAST(NULL AS BIGINT), 'n'",
     "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"),
])
def test_constraint_violations_raise_as_on_the_spark_path(spark, tmp_path, statement,
                                                          error_class):
    errors = {}
    for mode in ("force", "off"):
        path = tmp_path / mode
        with spark_conf(spark, {MODE_CONF: mode}):
            t = _table(spark, path, "PARTITIONED BY (p)", "")
            with pytest.raises(ConstraintViolationError) as caught:
                sqlext.sql(spark, statement.format(t=t))
        assert DeltaLog(str(path)).snapshot().version == 0          # nothing committed
        assert not list(path.rglob("*.parquet"))                     # no file left behind
        errors[mode] = (str(caught.value).replace(str(path), "<t>"),
                        caught.value.error_class, caught.value.version)
    assert errors["force"] == errors["off"]
    assert errors["force"][1] == error_class and errors["force"][2] == 0
