"""DELETE and UPDATE on copies of tables written by delta-spark / Databricks (the fixture
tables in tests/fixtures) and by delta-rs: the rows afterwards are what DuckDB computes for the same statement,
sqlext, deltalake and DuckDB read them alike, and the change feed (where the table has one)
holds the changed rows."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from deltalake import write_deltalake

from tests.support.dml_cases import (actions_of, changes_of, duckdb_select, file_actions,
                                     latest_version, operation, read_deltalake, run_and_expect)
from sqlext import DeltaTable
from tests.support.table_checks import assert_readers_agree
from tests.support import assert_same_rows

CASES = [
    # fixture, statement kind, condition, set, has a change feed
    ("cdf-table", "delete", "name = 'Emily' OR id > 8", None, True),
    ("cdf-table", "update", "birthday = DATE'2023-12-22'", {"name": "upper(name)"}, True),
    ("delta-0.8.0-partitioned", "delete", "month = '2'", None, False),
    ("delta-0.8.0-partitioned", "update", "value > '4'", {"day": "'99'", "value": "value || 'x'"},
     False),
    ("delta-2.2.0-partitioned-types", "update", "c3 >= 5", {"c1": "c1 + 10", "c3": "NULL"}, False),
    ("delta-0.8.0-null-partition", "delete", "k IS NULL", None, False),
    ("simple_table", "delete", "id % 2 = 1 AND id > 5", None, False),
]


def _run(spark, path, kind, condition, assignments):
    version = latest_version(path)
    before = read_deltalake(path)
    after = assert_readers_agree(spark, path, run_and_expect(spark, path, condition, assignments,
                                                             before))
    assert latest_version(path) == version + 1
    assert operation(path, version + 1)[0] == kind.upper()
    return version + 1, before, after


@pytest.mark.parametrize("name, kind, condition, assignments, cdf", CASES)
def test_dml_on_fixture_copies(spark, fixture_table, name, kind, condition, assignments, cdf):
    path = fixture_table(name)
    version, before, after = _run(spark, path, kind, condition, assignments)
    matched = duckdb_select(before, f"SELECT * FROM {{t}} WHERE ({condition}) IS TRUE")
    actions = file_actions(path, version)
    assert actions["remove"]
    if not cdf:
        assert actions["cdc"] == []
        return
    changes = changes_of(path, version)
    if kind == "delete":
        assert set(changes.column("_change_type").to_pylist()) == {"delete"}
        assert_same_rows(changes.drop_columns(["_change_type"]), matched)
    else:
        pre = changes.filter(pc.equal(changes.column("_change_type"), "update_preimage"))
        assert_same_rows(pre.drop_columns(["_change_type"]), matched)
        assert changes.num_rows == 2 * matched.num_rows


def test_dml_on_a_delta_rs_table(spark, tmp_path):
    path = tmp_path / "rs"
    data = pa.table({"id": pa.array(range(12), pa.int64()),
                     "region": pa.array(["eu", "us", None] * 4),
                     "amount": pa.array([1.5, None, 3.25, 4.0] * 3),
                     "ts": pa.array([1_700_000_000_000_000 + i * 3_600_000_000 for i in range(12)],
                                    pa.timestamp("us", "UTC"))})
    write_deltalake(str(path), data.slice(0, 6), partition_by=["region"],
                    configuration={"delta.enableChangeDataFeed": "true"})
    write_deltalake(str(path), data.slice(6), mode="append")
    v1, before, _ = _run(spark, path, "update", "amount > 2 AND region = 'eu'",
                         {"amount": "amount * 2", "region": "'apac'"})
    pre = duckdb_select(before, "SELECT * FROM {t} WHERE amount > 2 AND region = 'eu'")
    changes = changes_of(path, v1)
    assert sorted(changes.column("_change_type").to_pylist()) == (
        ["update_postimage"] * pre.num_rows + ["update_preimage"] * pre.num_rows)
    v2, before, _ = _run(spark, path, "delete", "region IS NULL", None)
    assert file_actions(path, v2)["cdc"] == [] and file_actions(path, v2)["add"] == []
    assert_same_rows(changes_of(path, v2).drop_columns(["_change_type"]),
                     duckdb_select(before, "SELECT * FROM {t} WHERE region IS NULL"))
    v3, before, _ = _run(spark, path, "delete", "ts < TIMESTAMP'2023-11-15 00:00:00'", None)
    assert_same_rows(changes_of(path, v3).drop_columns(["_change_type"]),
                     duckdb_select(before, "SELECT * FROM {t} WHERE ts < TIMESTAMP'2023-11-15'"))


def test_dml_on_a_databricks_table_with_deletion_vectors(spark, fixture_table):
    """Databricks deleted values 0 and 9 with a vector; sqlext's DELETE, UPDATE and MERGE add
    to it (the data file stays, tightBounds turns false)."""
    path = fixture_table("table-with-dv-small")
    dt = DeltaTable.forPath(spark, str(path))
    dt.delete("value > 6")
    dt.update("value = 1", {"value": "100"})
    assert_readers_agree(spark, path, pa.table({"value": pa.array([2, 3, 4, 5, 6, 100],
                                                                  pa.int32())}))
    (add,) = actions_of(path, 2, "add")
    assert add["deletionVector"]["cardinality"] == 4 and '"tightBounds":false' in add["stats"]
    dt.alias("t").merge(spark.createDataFrame([(2,)], "value INT").alias("s"),
                        "t.value = s.value").whenMatchedDelete().execute()
    assert_readers_agree(spark, path, pa.table({"value": pa.array([3, 4, 5, 6, 100],
                                                                  pa.int32())}))
    (add,) = [a for a in actions_of(path, 4, "add") if "deletionVector" in a]
    assert add["deletionVector"]["cardinality"] == 6
