"""MERGE on the driver path (sqlext.engine.local.merge) against the Spark path: the same MERGE
on two identical tables, one with ``spark.sqlext.execution.local=force``, one with ``off``,
leaves the same rows, commits the same actions (file names, sizes and times aside), operation,
parameters and metrics, and the same change feed; the driver path runs no Spark job."""

from __future__ import annotations

import pytest

import sqlext
from sqlext.engine.local import policy
from sqlext.engine.local.merge_keys import key_pairs
from sqlext.engine.merge.prune import KeyPair
from sqlext.errors import MultipleSourceRowMatchError
from tests.support import assert_same_rows, read_deltalake
from tests.support.dml_cases import changes_of
from tests.support.spark import jobs_run, spark_conf
from tests.support.table_checks import commit_summary, latest_version

ROWS = ", ".join(f"({i}, {i % 3}, '{'abc'[i % 3]}', {i * 10})" for i in range(30))


def _create(spark, path, partitioned: bool, cdf: bool, null_row: bool = False) -> None:
    parts = "PARTITIONED BY (p)" if partitioned else ""
    props = f"TBLPROPERTIES (delta.enableChangeDataFeed = {str(cdf).lower()})"
    sqlext.sql(spark, f"CREATE TABLE delta.`{path}` (id BIGINT, p INT, s STRING, v BIGINT) "
                      f"USING delta {parts} {props}")
    for where in ("id < 15", "id >= 15"):       # two files (per partition)
        sqlext.sql(spark, f"INSERT INTO delta.`{path}` SELECT * FROM VALUES {ROWS} "
                          f"AS r(id, p, s, v) WHERE {where}")
    if null_row:
        sqlext.sql(spark, f"INSERT INTO delta.`{path}` VALUES (NULL, 0, 'n', 0)")


#: byte counts of files written: pyarrow and parquet-mr encode the same rows in different sizes
WRITTEN_BYTES = ("numTargetBytesAdded", "numTargetChangeFileBytes")


def _summary(path, version: int) -> dict:
    summary = commit_summary(path, version)
    summary["metrics"] = {k: v for k, v in summary["metrics"].items() if k not in WRITTEN_BYTES}
    return summary


def _merge(path, source: str, clauses: str, on: str = "t.id = s.id") -> str:
    return (f"MERGE INTO delta.`{path}` t USING (SELECT * FROM VALUES {source} "
            f"AS r(id, p, s, v)) s ON {on} {clauses}")


def _run_both(spark, tmp_path, statement, partitioned=False, cdf=False, null_row=False) -> dict:
    """Run ``statement(path)`` on a table per path, assert they agree and that the driver path
    ran no Spark job; the two tables' paths."""
    paths, jobs = {}, {}
    for mode in ("force", "off"):
        path = tmp_path / mode
        _create(spark, path, partitioned, cdf, null_row)
        created = latest_version(path)
        with spark_conf(spark, {policy.MODE_CONF: mode}):
            _, jobs[mode] = jobs_run(spark, lambda: sqlext.sql(spark, statement(path)))
        paths[mode] = path
    local, remote = paths["force"], paths["off"]
    assert jobs["force"] == 0 and jobs["off"] > 0
    assert latest_version(local) == latest_version(remote)
    version = latest_version(local)
    if version > created:
        driver, spark_path = _summary(local, version), _summary(remote, version)
        for key in driver:
            assert driver[key] == spark_path[key], key
    assert_same_rows(read_deltalake(local), read_deltalake(remote), sort_by=["id"])
    if cdf and version > created:
        assert_same_rows(changes_of(local, version), changes_of(remote, version),
                         sort_by=["id", "_change_type"])
    return paths


UPSERT = "(3, 0, 'x', 1), (4, 1, 'y', 2), (100, 1, 'z', 3), (101, 2, NULL, NULL)"
CASES = {
    "upsert": (UPSERT, "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"),
    "update with a condition": (
        UPSERT, "WHEN MATCHED AND s.v > 1 THEN UPDATE SET s = s.s, v = t.v + s.v"),
    "delete": (UPSERT, "WHEN MATCHED THEN DELETE"),
    "delete with a condition, then update": (
        UPSERT, "WHEN MATCHED AND t.id = 3 THEN DELETE WHEN MATCHED THEN UPDATE SET v = -1"),
    "insert only where matches exist": (
        UPSERT, "WHEN MATCHED AND t.id < 0 THEN DELETE WHEN NOT MATCHED AND s.id > 100 "
                "THEN INSERT (id, p, s, v) VALUES (s.id, s.p, 'new', 7)"),
    "not matched by source": (
        UPSERT, "WHEN MATCHED THEN UPDATE SET v = 0 WHEN NOT MATCHED BY SOURCE AND t.id < 10 "
                "THEN DELETE WHEN NOT MATCHED BY SOURCE THEN UPDATE SET s = 'gone'"),
    "nothing matches": ("(1000, 0, 'x', 1)", "WHEN MATCHED THEN UPDATE SET *"),
}


@pytest.mark.parametrize("cdf", [False, True], ids=["cdf off", "cdf on"])
@pytest.mark.parametrize("partitioned", [False, True], ids=["flat", "partitioned"])
@pytest.mark.parametrize("case", list(CASES))
def test_both_paths_agree(spark, tmp_path, case, partitioned, cdf):
    source, clauses = CASES[case]
    _run_both(spark, tmp_path, lambda path: _merge(path, source, clauses), partitioned, cdf)


def test_a_residual_on_condition_is_evaluated_by_spark(spark, tmp_path):
    paths = _run_both(spark, tmp_path, lambda path: _merge(
        path, UPSERT, "WHEN MATCHED THEN UPDATE SET v = 99 WHEN NOT MATCHED THEN INSERT *",
        on="t.id = s.id AND t.v <= s.v * 20"))
    rows = read_deltalake(paths["force"]).to_pylist()
    # id 3 (30 <= 1 * 20 fails) is not matched: its source row is inserted beside it
    assert sorted(r["v"] for r in rows if r["id"] == 3) == [1, 30]
    assert [r["v"] for r in rows if r["id"] == 4] == [99]


def test_null_keys_never_match_unless_null_safe(spark, tmp_path):
    source = "(CAST(NULL AS BIGINT), 0, 'n', 5)"
    clauses = "WHEN MATCHED THEN UPDATE SET v = 1 WHEN NOT MATCHED THEN INSERT *"
    paths = _run_both(spark, tmp_path, lambda path: _merge(path, source, clauses),
                      null_row=True)
    rows = read_deltalake(paths["force"]).to_pylist()
    assert sorted(r["v"] for r in rows if r["id"] is None) == [0, 5]
    paths = _run_both(spark, tmp_path / "safe", lambda path: _merge(
        path, source, clauses, on="t.id <=> s.id"), null_row=True)
    rows = read_deltalake(paths["force"]).to_pylist()
    assert [r["v"] for r in rows if r["id"] is None] == [1]


def test_several_source_rows_matching_one_target_row_fail_the_same(spark, tmp_path):
    for mode in ("force", "off"):
        path = tmp_path / mode
        _create(spark, path, False, False)
        with spark_conf(spark, {policy.MODE_CONF: mode}), \
                pytest.raises(MultipleSourceRowMatchError):
            sqlext.sql(spark, _merge(path, "(3, 0, 'x', 1), (3, 0, 'y', 2)",
                                     "WHEN MATCHED THEN UPDATE SET *"))
        assert latest_version(path) == 2


@pytest.mark.parametrize("target, source, pairs", [
    (["bigint", [1, 2, None]], ["decimal(10,2)", ["1.00", "2.50", None]], [(0, 0)]),
    (["double", [float("nan"), -0.0, 1.0]], ["double", [0.0, float("nan")]], [(0, 1), (1, 0)]),
    (["string", ["a", "A", "é"]], ["string", ["é", "a"]], [(0, 1), (2, 0)]),
])
def test_keys_compare_as_spark_compares_them(spark, target, source, pairs):
    """NaN equals NaN, -0.0 equals 0.0, decimals by value across scales, strings by bytes,
    NULL never (``=``)."""
    from decimal import Decimal

    import pyarrow as pa
    from pyspark.sql import types as T
    from pyspark.sql.types import _parse_datatype_string as parse

    def column(kind, values):
        if kind.startswith("decimal"):
            return pa.array([None if v is None else Decimal(v) for v in values],
                            pa.decimal128(10, 2))
        return pa.array(values)

    schema = T.StructType([T.StructField("k", parse(target[0]))])
    found = key_pairs([KeyPair("k", None)], schema, pa.table({"k": column(*target)}),
                      [parse(source[0])], pa.table({"k": column(*source)}))
    assert found == pairs


def test_unlike_key_types_are_left_to_spark(spark):
    import pyarrow as pa
    from pyspark.sql import types as T
    schema = T.StructType([T.StructField("k", T.StringType())])
    assert key_pairs([KeyPair("k", None)], schema, pa.table({"k": ["1"]}), [T.LongType()],
                     pa.table({"k": [1]})) is None


def test_inserts_no_target_file_can_match_run_no_job(spark, tmp_path):
    """Source keys outside every file's range: no candidate file; the inserts are computed over
    the source's local relation and written on the driver."""
    _run_both(spark, tmp_path, lambda path: _merge(
        path, "(500, 1, 'x', 5), (501, 2, 'y', NULL)",
        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"))
