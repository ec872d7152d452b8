"""The example dbt project (examples/shop) end to end on ``type: sqlext``.

examples/run_example.py builds the project, replaces the seeds with seeds_v2/ and builds again.
Each final table is compared with DuckDB computing the model's SQL over the second version of the
seed CSVs, read back with delta-rs (an independent Delta reader), and the change feed and history
of the second run are checked: exactly the changed rows, one commit per model run, tagged with the
dbt invocation and the model. Each test runs twice: on a Spark in the dbt process (``method:
session``) and on a running ``sqlext-connect-server`` (``method: connect``) whose warehouse is the
test session's, so the tables the server's dbt run wrote are checked the same way.
"""

from __future__ import annotations

import io
import json
import os
import sys
import uuid
from decimal import Decimal
from pathlib import Path

import pytest

from tests.support import assert_same_rows, deltalake_cdf, duckdb_query, read_deltalake

REPO = Path(__file__).resolve().parents[2]
V2 = REPO / "examples" / "shop" / "seeds_v2"


@pytest.fixture(scope="module")
def connect_server(spark, tmp_path_factory):
    """``sqlext-connect-server`` on the test session's warehouse."""
    from tests.support.connect_server import SqlextConnectServer

    warehouse = spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")
    server = SqlextConnectServer(Path(warehouse), tmp_path_factory.mktemp("server") / "log")
    yield server
    server.stop()


@pytest.fixture(scope="module", params=["session", "connect"])
def example(spark, tmp_path_factory, request):
    sys.path.insert(0, str(REPO / "examples"))
    try:
        import run_example
    finally:
        sys.path.remove(str(REPO / "examples"))
    schema = f"shop_{uuid.uuid4().hex[:8]}"
    out = io.StringIO()
    remote = []
    if request.param == "connect":
        remote = ["--remote", request.getfixturevalue("connect_server").url]
    try:
        result = run_example.main(["--workdir", str(tmp_path_factory.mktemp("example")),
                                   "--schema", schema, *remote], out=out)
    finally:
        if remote:   # set by the Connect client; the shared classic session must run without it
            os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
    from sqlext.catalog import Catalog

    catalog = Catalog(spark)
    result.update(schema=schema, output=out.getvalue(),
                  location=lambda name: catalog.resolve(f"{schema}.{name}").location)
    yield result
    import sqlext

    if remote:
        result["spark"].stop()      # releases the Connect session on the server
    sqlext.sql(spark, f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def csv(name: str, types: str) -> str:
    return f"read_csv('{V2 / name}', header=true, columns={{{types}}})"


CUSTOMERS = csv("customers.csv", "'customer_id': 'BIGINT', 'name': 'VARCHAR', 'email': 'VARCHAR', "
                "'country': 'VARCHAR', 'updated_at': 'TIMESTAMP'")
ORDERS = csv("orders.csv", "'order_id': 'BIGINT', 'customer_id': 'BIGINT', 'order_date': 'DATE', "
             "'amount': 'DECIMAL(10,2)', 'status': 'VARCHAR', 'updated_at': 'TIMESTAMP'")
EVENTS = csv("events.csv", "'event_id': 'BIGINT', 'customer_id': 'BIGINT', "
             "'event_time': 'TIMESTAMP', 'event_type': 'VARCHAR'")


def test_final_tables_match_the_models_sql_over_the_new_seeds(example):
    loc = example["location"]
    assert_same_rows(read_deltalake(loc("customers_current")), duckdb_query(
        f"select customer_id, name, lower(email) as email, country, updated_at from {CUSTOMERS}"),
        sort_by=["customer_id"])
    assert_same_rows(read_deltalake(loc("daily_revenue")), duckdb_query(
        f"select order_date, count(*) as orders, sum(amount) as revenue, "
        f"max(updated_at) as last_updated_at from {ORDERS} group by order_date"),
        sort_by=["order_date"])
    assert_same_rows(read_deltalake(loc("events_enriched")), duckdb_query(
        f"select e.event_id, e.event_time, e.event_type, e.customer_id, c.country "
        f"from {EVENTS} e left join {CUSTOMERS} c using (customer_id)"), sort_by=["event_id"])
    # the seed's quotes, comma and empty cell (NULL, not the text 'None') survive exactly
    names = {r["customer_id"]: (r["name"], r["email"])
             for r in read_deltalake(loc("customers")).to_pylist()}
    assert names[5] == ('C.A.R. "Tony" Hoare, Sir', "tony@example.com")
    assert names[4] == ("Barbara Liskov", None)


def test_snapshot_keeps_history_and_records_the_deleted_order(example):
    rows = read_deltalake(example["location"]("orders_snapshot")).to_pylist()
    by_order = {}
    for r in rows:
        by_order.setdefault(r["order_id"], []).append(r)
    assert len(rows) == 9
    old, new = sorted(by_order[103], key=lambda r: r["dbt_valid_from"])
    assert (old["amount"], new["amount"]) == (Decimal("99.99"), Decimal("89.99"))
    assert old["dbt_valid_to"] == new["dbt_valid_from"] and new["dbt_valid_to"] is None
    closed, deleted = sorted(by_order[104], key=lambda r: r["dbt_valid_from"])
    assert closed["dbt_valid_to"] is not None and closed["dbt_is_deleted"] in ("False", False)
    assert deleted["dbt_valid_to"] is None and deleted["dbt_is_deleted"] in ("True", True)
    current = [r["order_id"] for r in rows if r["dbt_valid_to"] is None]
    assert sorted(current) == [100, 101, 102, 103, 104, 105, 106]


def test_second_run_change_feed_holds_exactly_the_changed_customers(example):
    changes = example["changes"]
    last = max(r["_commit_version"] for r in changes.collect())
    got = sorted((r["customer_id"], r["_change_type"], r["email"])
                 for r in changes.collect() if r["_commit_version"] == last)
    assert got == [(2, "update_postimage", "grace.hopper@example.com"),
                   (2, "update_preimage", "grace@example.com"),
                   (5, "insert", "tony@example.com")]
    # delta-rs reads the same change feed from the files sqlext wrote
    feed = deltalake_cdf(example["location"]("customers_current"), last).to_pylist()
    assert sorted((r["customer_id"], r["_change_type"], r["email"]) for r in feed) == got
    assert "update_postimage" in example["output"] and "DESCRIBE HISTORY" in example["output"]


@pytest.mark.parametrize("name,unique_id,operations", [
    ("customers", "seed.shop.customers", ["CREATE OR REPLACE TABLE AS SELECT"] * 2),
    ("customers_current", "model.shop.customers_current",
     ["CREATE OR REPLACE TABLE AS SELECT", "MERGE"]),
    # delete+insert: the delete and the insert are one MERGE commit, no version in between
    ("daily_revenue", "model.shop.daily_revenue", ["CREATE OR REPLACE TABLE AS SELECT", "MERGE"]),
    # microbatch: days 1-3, then days 3 and 4 each replace their time range
    ("events_enriched", "model.shop.events_enriched",
     ["CREATE OR REPLACE TABLE AS SELECT", "WRITE", "WRITE", "WRITE", "WRITE"]),
    ("orders_snapshot", "snapshot.shop.orders_snapshot", ["CREATE OR REPLACE TABLE AS SELECT", "MERGE"]),
])
def test_every_commit_names_the_dbt_run_and_the_model(spark, example, name, unique_id, operations):
    import sqlext

    history = sqlext.sql(spark, f"DESCRIBE HISTORY {example['schema']}.{name}").collect()
    history = sorted(history, key=lambda r: r["version"])
    assert [r["operation"] for r in history] == operations
    tags = [json.loads(r["userMetadata"]) for r in history]
    assert {t["dbt_unique_id"] for t in tags} == {unique_id}
    assert len({t["dbt_invocation_id"] for t in tags}) == 2   # the two dbt builds
