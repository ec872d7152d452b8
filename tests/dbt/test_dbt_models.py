"""Materializations of ``type: sqlext`` checked at the Delta level: seeds' exact values and one
commit per seed, tables keeping their history, views reading the current snapshot (also from a
new process), and the incremental strategies the dbt-tests-adapter suites do not cover
(insert_overwrite with and without partitions, replace_where, append, merge with a nullable
composite key and merge_update_columns, delete+insert as one commit), and a check-strategy
snapshot with ``hard_deletes: invalidate``.

One small dbt project is built twice (``--vars 'phase: 2'`` switches every model to its second
batch of rows); final tables are read back with delta-rs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import uuid
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from tests.support import deltalake_add_paths, deltalake_cdf, read_deltalake, rows

UTC = timezone.utc  # Delta timestamps are instants; delta-rs reads them as UTC

PEOPLE_CSV = '''id,name,note,score,born,active,updated_at
1,O'Brien,"say ""hi"", ok",1.50,2000-01-02,true,2024-01-01 00:00:00
2,Back\\slash,C:\\temp\\new,,1999-12-31,false,2024-01-01 00:00:01
3,,None,-0.25,,,
4,ünï ✓,"two
lines",100,2024-02-29,TRUE,2024-02-29 23:59:59
'''

PHASE = "{% set phase = var('phase', 1) %}"

MODELS = {
    "tbl.sql": "select id, name from {{ ref('people') }} where id <= {{ 2 * var('phase', 1) }}",
    "people_view.sql": "{{ config(materialized='view') }} select id, name from {{ ref('tbl') }}",
    "inc_merge.sql": PHASE + """
{{ config(materialized='incremental', unique_key=['k1', 'k2'], merge_update_columns=['v']) }}
{% if phase == 1 %}
select 1 as k1, 'a' as k2, 'v1' as v, 'w1' as w union all
select 2, cast(null as string), 'v2', 'w2'
{% else %}
select 2 as k1, cast(null as string) as k2, 'v2b' as v, 'w2b' as w union all
select 3, 'c', 'v3', 'w3'
{% endif %}""",
    "inc_overwrite_part.sql": PHASE + """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite',
          partition_by=['p']) }}
{% if phase == 1 %}
select 1 as id, 'one' as v, 1 as p union all select 2, 'two', 2 union all select 3, 'three', 2
{% else %}
select 4 as id, 'four' as v, 2 as p
{% endif %}""",
    "inc_overwrite_all.sql": PHASE + """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite') }}
{% if phase == 1 %} select 1 as id union all select 2 {% else %} select 3 as id {% endif %}""",
    "inc_replace_where.sql": PHASE + """
{{ config(materialized='incremental', incremental_strategy='replace_where',
          incremental_predicates=["d >= date'2024-01-02'"]) }}
{% if phase == 1 %}
select date'2024-01-01' as d, 1 as n union all select date'2024-01-02', 2
union all select date'2024-01-03', 3
{% else %}
select date'2024-01-02' as d, 20 as n union all select date'2024-01-04', 40
{% endif %}""",
    "inc_append.sql": PHASE + """
{{ config(materialized='incremental', incremental_strategy='append') }}
select {{ phase }} as id""",
    "inc_delete_insert.sql": PHASE + """
{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='k') }}
{% if phase == 1 %}
select 1 as k, 'a' as v union all select 1, 'b' union all select 2, 'c'
{% else %}
select 1 as k, 'z' as v union all select 1, 'y'
{% endif %}""",
}


SNAPSHOT = """
{% snapshot snap_invalidate %}
{{ config(target_schema=target.schema, unique_key='id', strategy='check', check_cols='all',
          hard_deletes='invalidate') }}
{% if var('phase', 1) == 1 %}
select 1 as id, 'a' as v union all select 2, 'b' union all select 3, 'c'
{% else %}
select 1 as id, 'a' as v union all select 2, 'B'
{% endif %}
{% endsnapshot %}
"""


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    import sqlext
    from dbt.cli.main import dbtRunner

    from sqlext.catalog import Catalog

    project = tmp_path_factory.mktemp("dbt_models")
    schema = f"models_{uuid.uuid4().hex[:8]}"
    (project / "seeds").mkdir()
    (project / "models").mkdir()
    (project / "snapshots").mkdir()
    (project / "snapshots" / "snap.sql").write_text(SNAPSHOT)
    (project / "seeds" / "people.csv").write_text(PEOPLE_CSV)
    for name, sql in MODELS.items():
        (project / "models" / name).write_text(sql)
    located = project / "located_tables"
    (project / "models" / "located.sql").write_text(
        f"{{{{ config(location_root='{located}', partition_by=['p'], "
        "tblproperties={'team': 'finance', 'delta.checkpointInterval': '5'}) }}\n"
        "select 1 as id, 'x' as p")
    (project / "dbt_project.yml").write_text(yaml.safe_dump({
        "name": "models_test", "version": "1.0", "config-version": 2, "profile": "models_test",
        "models": {"models_test": {"+materialized": "table"}},
        "seeds": {"models_test": {"people": {"+column_types": {
            "id": "int", "score": "decimal(10,2)", "updated_at": "timestamp"}}}}}))
    (project / "profiles.yml").write_text(yaml.safe_dump({"models_test": {
        "target": "dev", "outputs": {"dev": {"type": "sqlext", "schema": schema, "threads": 2}}}}))

    def dbt(*args):
        result = dbtRunner().invoke([*args, "--project-dir", str(project),
                                     "--profiles-dir", str(project)])
        assert result.success, result.exception or result.result
        return result

    catalog = Catalog(spark)

    def location(name):
        return catalog.resolve(f"{schema}.{name}").location

    dbt("seed")
    dbt("run")
    dbt("snapshot")
    first = {name[:-4]: set(deltalake_add_paths(location(name[:-4]))) for name in MODELS
             if name != "people_view.sql"}
    dbt("seed")
    dbt("run", "--vars", "phase: 2")
    dbt("snapshot", "--vars", "phase: 2")
    yield {"located": located, "schema": schema, "location": location, "first_files": first, "dbt": dbt,
           "warehouse": spark.conf.get("spark.sql.warehouse.dir"), "project": project}
    sqlext.sql(spark, f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def history(spark, schema, name):
    import sqlext

    rows_ = sqlext.sql(spark, f"DESCRIBE HISTORY {schema}.{name}").collect()
    return sorted(rows_, key=lambda r: r["version"])


def test_seed_values_types_nulls_and_quotes_are_exact(spark, built):
    people = read_deltalake(built["location"]("people"))
    assert rows(people, sort_by=["id"]) == [
        (1, "O'Brien", 'say "hi", ok', Decimal("1.50"), date(2000, 1, 2), True,
         datetime(2024, 1, 1, tzinfo=UTC)),
        (2, "Back\\slash", "C:\\temp\\new", None, date(1999, 12, 31), False,
         datetime(2024, 1, 1, 0, 0, 1, tzinfo=UTC)),
        (3, None, "None", Decimal("-0.25"), None, None, None),
        (4, "ünï ✓", "two\nlines", Decimal("100.00"), date(2024, 2, 29), True,
         datetime(2024, 2, 29, 23, 59, 59, tzinfo=UTC)),
    ]
    import sqlext

    types = {r["col_name"]: r["data_type"] for r in
             sqlext.sql(spark, f"DESCRIBE {built['schema']}.people").collect()}
    assert types == {"id": "int", "name": "string", "note": "string", "score": "decimal(10,2)",
                     "born": "date", "active": "boolean", "updated_at": "timestamp"}


def test_each_seed_run_is_one_commit_and_old_versions_stay_readable(spark, built):
    versions = history(spark, built["schema"], "people")
    assert [r["operation"] for r in versions] == ["CREATE OR REPLACE TABLE AS SELECT"] * 2
    assert read_deltalake(built["location"]("people"), version=0).num_rows == 4


def test_table_rebuild_is_a_new_version_of_the_same_table(spark, built):
    versions = history(spark, built["schema"], "tbl")
    assert len(versions) == 2
    loc = built["location"]("tbl")
    assert sorted(rows(read_deltalake(loc, version=0), ["id"])) == [(1,), (2,)]
    assert sorted(rows(read_deltalake(loc), ["id"])) == [(1,), (2,), (3,), (4,)]


def test_merge_matches_null_keys_and_updates_only_merge_update_columns(built):
    got = rows(read_deltalake(built["location"]("inc_merge")), ["k1", "k2", "v", "w"],
               sort_by=["k1"])
    assert got == [(1, "a", "v1", "w1"), (2, None, "v2b", "w2"), (3, "c", "v3", "w3")]


def test_insert_overwrite_replaces_only_the_partitions_written(built):
    loc = built["location"]("inc_overwrite_part")
    assert rows(read_deltalake(loc), ["id", "v", "p"], sort_by=["id"]) == [
        (1, "one", 1), (4, "four", 2)]
    kept = built["first_files"]["inc_overwrite_part"] & set(deltalake_add_paths(loc))
    assert kept and all("p=1" in path for path in kept)   # partition 1's file is untouched
    assert rows(read_deltalake(built["location"]("inc_overwrite_all")), ["id"]) == [(3,)]


def test_replace_where_and_append(built):
    got = rows(read_deltalake(built["location"]("inc_replace_where")), ["d", "n"], sort_by=["d"])
    assert got == [(date(2024, 1, 1), 1), (date(2024, 1, 2), 20), (date(2024, 1, 4), 40)]
    assert rows(read_deltalake(built["location"]("inc_append")), ["id"]) == [(1,), (2,)]


def test_delete_insert_is_one_commit_with_its_change_feed(spark, built):
    loc = built["location"]("inc_delete_insert")
    assert rows(read_deltalake(loc), ["k", "v"]) == [(1, "y"), (1, "z"), (2, "c")]
    versions = history(spark, built["schema"], "inc_delete_insert")
    assert [r["operation"] for r in versions] == ["CREATE OR REPLACE TABLE AS SELECT", "MERGE"]
    feed = rows(deltalake_cdf(loc, 1), ["k", "v", "_change_type"])
    assert feed == [(1, "a", "delete"), (1, "b", "delete"), (1, "y", "insert"), (1, "z", "insert")]
    # the MERGE reads the new rows once (the first row of a key doubles as its delete row)
    merge = (built["project"] / "target" / "run" / "models_test" / "models"
             / "inc_delete_insert.sql").read_text().lower()
    assert "merge into" in merge
    assert merge.count("inc_delete_insert__dbt_tmp") == 1
    # and the new rows' columns are asked for once (the target's shared columns), not again to
    # spell out the MERGE source
    log = (built["project"] / "logs" / "dbt.log").read_text().lower()
    described = re.findall(r"\n\s*describe extended (\w+)", log)
    assert described.count("inc_delete_insert__dbt_tmp") == 1, described


def test_a_new_process_sees_the_tables_and_the_views_current_data(spark, built):
    import sqlext

    schema = built["schema"]
    sqlext.sql(spark, f"INSERT INTO {schema}.tbl VALUES (99, 'after dbt')")
    script = textwrap.dedent(f"""
        import json, sqlext
        from dbt.adapters.sqlext.introspection import delta_table_facts, list_relations
        spark = sqlext.session(**{{"spark.sql.warehouse.dir": {built['warehouse']!r}}})
        view = sorted(r[0] for r in sqlext.sql(spark, "select id from {schema}.people_view").collect())
        listed = {{r.name: [r.is_view, r.is_delta] for r in list_relations(spark, "{schema}")}}
        tbl = [[c.name, c.data_type] for c in delta_table_facts(spark, "{schema}", "tbl").columns]
        print("RESULT " + json.dumps({{"view": view, "listed": listed, "tbl": tbl}}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=Path(built["warehouse"].removeprefix("file:")).parent, timeout=900)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, out.stderr[-3000:]
    result = json.loads(line[0][len("RESULT "):])
    assert result["view"] == [1, 2, 3, 4, 99]
    listed = result["listed"]
    assert {"tbl", "people_view"} | {m[:-4] for m in MODELS if m.startswith("inc")} <= set(listed)
    assert listed["people_view"] == [True, False]                  # a view, not a Delta table
    assert listed["tbl"] == listed["inc_overwrite_part"] == [False, True]
    assert result["tbl"] == [["id", "int"], ["name", "string"]]


def test_check_snapshot_invalidates_deleted_rows_in_one_merge(spark, built):
    got = rows(read_deltalake(built["location"]("snap_invalidate")),
               ["id", "v", "dbt_valid_to"], sort_by=["id", "v"])
    closed = [(i, v) for i, v, to in got if to is not None]
    current = [(i, v) for i, v, to in got if to is None]
    assert sorted(current) == [(1, "a"), (2, "B")]
    assert sorted(closed) == [(2, "b"), (3, "c")]
    versions = history(spark, built["schema"], "snap_invalidate")
    assert [r["operation"] for r in versions] == ["CREATE OR REPLACE TABLE AS SELECT", "MERGE"]


def test_table_location_root_partitioning_and_properties(spark, built):
    import sqlext

    path = built["located"] / "located"
    assert (path / "_delta_log").is_dir()
    assert built["location"]("located").removeprefix("file:").rstrip("/") == str(path)
    assert rows(read_deltalake(path), ["id", "p"]) == [(1, "x")]
    assert any(p.startswith("p=x/") for p in deltalake_add_paths(path))
    props = {r["key"]: r["value"] for r in
             sqlext.sql(spark, f"SHOW TBLPROPERTIES {built['schema']}.located").collect()}
    assert props["team"] == "finance" and props["delta.checkpointInterval"] == "5"
    assert props["delta.enableChangeDataFeed"] == "true"


def test_dbt_settings_stay_in_dbt_connections(spark, built):
    """dbt's SET statements (dynamic partition overwrite) and the adapter's session setup happen
    in the connections' own SQL sessions, not in the application's session."""
    from tests.support.spark import SPARK_CONF

    assert spark.conf.get("spark.sql.sources.partitionOverwriteMode").lower() == "static"
    for key, value in SPARK_CONF.items():
        assert spark.conf.get(key) == value
