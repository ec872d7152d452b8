"""The sqlext dialect and ``parse_statements``: trees, round trips, splitting, errors (no Spark)."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from sqlext.errors import ParseError
from sqlext.sql import nodes
from sqlext.sql.nodes import delta_path, property_map
from sqlext.sql.parse import parse_statements


def parse1(sql: str) -> exp.Expression:
    statements = parse_statements(sql)
    assert len(statements) == 1, statements
    return statements[0]


def roundtrip(stmt: exp.Expression) -> str:
    """Render ``stmt``; the SQL must parse back to an equal tree and render the same again."""
    rendered = stmt.sql(dialect="sqlext")
    again = parse1(rendered)
    assert again == stmt, f"{rendered}\n{again!r}\n!=\n{stmt!r}"
    assert again.sql(dialect="sqlext") == rendered
    return rendered


def names(table: exp.Table) -> tuple[str, str, str]:
    return table.catalog, table.db, table.name


# --- CREATE ------------------------------------------------------------------------------------


def test_create_table_with_all_clauses():
    stmt = parse1(
        "CREATE OR REPLACE TABLE IF NOT EXISTS db.t (a INT NOT NULL, b STRING COMMENT 'x', p DATE)"
        " USING delta PARTITIONED BY (p) LOCATION '/tmp/t'"
        " TBLPROPERTIES ('delta.enableChangeDataFeed' = 'false', delta.appendOnly = true, k = 1)"
        " COMMENT 'the table'"
    )
    assert isinstance(stmt, exp.Create) and stmt.kind == "TABLE"
    assert stmt.args["replace"] and stmt.args["exists"]
    schema = stmt.this
    assert names(schema.this) == ("", "db", "t")
    assert [(c.name, c.args["kind"].sql("sqlext")) for c in schema.expressions] == [
        ("a", "INT"),
        ("b", "STRING"),
        ("p", "DATE"),
    ]
    props = stmt.args["properties"]
    assert props.find(exp.FileFormatProperty).name.lower() == "delta"
    assert [c.name for c in props.find(exp.PartitionedByProperty).this.expressions] == ["p"]
    assert props.find(exp.LocationProperty).this.name == "/tmp/t"
    assert props.find(exp.SchemaCommentProperty).this.name == "the table"
    assert property_map(props) == {
        "delta.enableChangeDataFeed": "false",
        "delta.appendOnly": "true",
        "k": "1",
    }
    roundtrip(stmt)


def test_create_table_as_select_on_a_path():
    stmt = parse1(
        "CREATE TABLE delta.`/data/t` USING DELTA PARTITIONED BY (p) AS SELECT 1 AS a, 2 AS p"
    )
    assert isinstance(stmt, exp.Create) and isinstance(stmt.expression, exp.Select)
    assert delta_path(stmt.this) == "/data/t"
    assert [
        c.name for c in stmt.args["properties"].find(exp.PartitionedByProperty).this.expressions
    ] == ["p"]
    assert stmt.expression.named_selects == ["a", "p"]
    roundtrip(stmt)


def test_create_and_drop_schema_and_view():
    create = parse1("CREATE SCHEMA IF NOT EXISTS cat.s LOCATION '/data/s'")
    assert create.kind == "SCHEMA" and create.args["exists"]
    assert (create.this.catalog, create.this.db) == ("cat", "s")
    assert create.args["properties"].find(exp.LocationProperty).this.name == "/data/s"
    drop = parse1("DROP SCHEMA IF EXISTS s CASCADE")
    assert drop.kind == "SCHEMA" and drop.args["exists"] and drop.args["cascade"]
    assert drop.args["tables"][0].db == "s"
    view = parse1("CREATE OR REPLACE TEMPORARY VIEW v AS SELECT * FROM t VERSION AS OF 2")
    assert view.kind == "VIEW" and view.args["replace"]
    assert view.args["properties"].find(exp.TemporaryProperty)
    assert view.expression.find(exp.Version).expression.to_py() == 2
    for stmt in (create, drop, view):
        roundtrip(stmt)


def test_drop_table():
    stmt = parse1("DROP TABLE IF EXISTS delta.`/data/t`")
    assert isinstance(stmt, exp.Drop) and stmt.kind == "TABLE" and stmt.args["exists"]
    assert [delta_path(tbl) for tbl in stmt.args["tables"]] == ["/data/t"]
    roundtrip(stmt)


# --- INSERT ------------------------------------------------------------------------------------


def test_insert_into_partition_and_columns():
    stmt = parse1("INSERT INTO TABLE db.t PARTITION (p = 1, q) (a, b) SELECT a, b, q FROM s")
    assert isinstance(stmt, exp.Insert) and not stmt.args.get("overwrite")
    schema = stmt.this
    assert isinstance(schema, exp.Schema)
    assert [i.name for i in schema.expressions] == ["a", "b"]
    table = schema.this
    assert names(table) == ("", "db", "t")
    spec = table.args["partition"].expressions
    assert (
        isinstance(spec[0], exp.EQ) and spec[0].this.name == "p" and spec[0].expression.to_py() == 1
    )
    assert isinstance(spec[1], exp.Column) and spec[1].name == "q"
    assert isinstance(stmt.expression, exp.Select)
    roundtrip(stmt)


def test_insert_overwrite_values():
    stmt = parse1("INSERT OVERWRITE t VALUES (1, 'a'), (2, NULL)")
    assert stmt.args["overwrite"] and stmt.this.name == "t"
    rows = [[v.to_py() for v in row.expressions] for row in stmt.expression.expressions]
    assert rows == [[1, "a"], [2, None]]
    roundtrip(stmt)


def test_insert_replace_where():
    stmt = parse1(
        "INSERT INTO t REPLACE WHERE d >= '2024-01-01' AND d < '2024-02-01' SELECT * FROM s"
    )
    assert isinstance(stmt.args["where"], exp.And)
    assert {c.name for c in stmt.args["where"].find_all(exp.Column)} == {"d"}
    assert isinstance(stmt.expression, exp.Select)
    roundtrip(stmt)


# --- DELETE / UPDATE / MERGE -------------------------------------------------------------------


def test_delete_with_alias_and_predicate():
    stmt = parse1("DELETE FROM db.t AS x WHERE x.a > 1 AND x.b IN (SELECT b FROM u)")
    assert isinstance(stmt, exp.Delete)
    assert names(stmt.this) == ("", "db", "t") and stmt.this.alias == "x"
    predicate = stmt.args["where"].this
    assert isinstance(predicate, exp.And) and isinstance(predicate.expression, exp.In)
    roundtrip(stmt)
    bare = parse1("DELETE FROM delta.`/data/t`")
    assert delta_path(bare.this) == "/data/t" and not bare.args.get("where")
    roundtrip(bare)


def test_update_with_alias_assignments_and_predicate():
    stmt = parse1("UPDATE t AS x SET a = a + 1, x.b = 'y' WHERE c IS NULL")
    assert isinstance(stmt, exp.Update) and stmt.this.alias == "x"
    assert [(eq.this.name, eq.expression.sql("sqlext")) for eq in stmt.expressions] == [
        ("a", "a + 1"),
        ("b", "'y'"),
    ]
    assert isinstance(stmt.args["where"].this, exp.Is)
    roundtrip(stmt)


MERGE_ALL = (
    "MERGE WITH SCHEMA EVOLUTION INTO db.t AS t USING (SELECT * FROM s) AS s ON t.id = s.id"
    " WHEN MATCHED AND s.op = 'd' THEN DELETE"
    " WHEN MATCHED AND s.op = 'u' THEN UPDATE SET t.a = s.a, b = s.b + 1"
    " WHEN MATCHED THEN UPDATE SET *"
    " WHEN NOT MATCHED BY TARGET AND s.op <> 'd' THEN INSERT (id, a) VALUES (s.id, s.a)"
    " WHEN NOT MATCHED THEN INSERT *"
    " WHEN NOT MATCHED BY SOURCE AND t.old THEN UPDATE SET a = NULL"
    " WHEN NOT MATCHED BY SOURCE THEN DELETE"
)


def test_merge_all_clauses():
    stmt = parse1(MERGE_ALL)
    assert isinstance(stmt, nodes.MergeInto) and isinstance(stmt, exp.Merge)
    assert stmt.args["schema_evolution"] is True
    assert names(stmt.this) == ("", "db", "t") and stmt.this.alias == "t"
    assert isinstance(stmt.args["using"], exp.Subquery) and stmt.args["using"].alias == "s"
    assert stmt.args["on"].sql("sqlext") == "t.id = s.id"
    whens = stmt.args["whens"].expressions
    shape = [
        (
            w.args["matched"],
            bool(w.args.get("source")),
            bool(w.args.get("condition")),
            type(w.args["then"]),
        )
        for w in whens
    ]
    assert shape == [
        (True, False, True, exp.Var),  # DELETE
        (True, False, True, exp.Update),
        (True, False, False, exp.Update),  # UPDATE SET *
        (False, False, True, exp.Insert),
        (False, False, False, exp.Insert),  # INSERT *
        (False, True, True, exp.Update),
        (False, True, False, exp.Var),
    ]
    assert whens[0].args["then"].name == "DELETE"
    assert [eq.this.name for eq in whens[1].args["then"].expressions] == ["a", "b"]
    assert [type(e) for e in whens[2].args["then"].expressions] == [exp.Star]
    insert = whens[3].args["then"]
    assert [c.name for c in insert.this.expressions] == ["id", "a"]
    assert [v.sql("sqlext") for v in insert.expression.expressions] == ["s.id", "s.a"]
    assert isinstance(whens[4].args["then"].this, exp.Star)
    rendered = roundtrip(stmt)
    assert rendered.startswith("MERGE WITH SCHEMA EVOLUTION INTO db.t AS t USING (SELECT")


def test_merge_using_table_without_schema_evolution():
    stmt = parse1(
        "MERGE INTO delta.`/data/t` USING s ON delta.`/data/t`.id = s.id WHEN MATCHED THEN DELETE"
    )
    assert isinstance(stmt, nodes.MergeInto) and not stmt.args["schema_evolution"]
    assert delta_path(stmt.this) == "/data/t" and stmt.args["using"].name == "s"
    assert roundtrip(stmt).startswith("MERGE INTO delta.`/data/t` USING s ON")


# --- reads: time travel and change feeds -------------------------------------------------------


def test_version_and_timestamp_as_of_reuse_sqlglot_version():
    stmt = parse1(
        "SELECT * FROM t VERSION AS OF 3 AS a"
        " JOIN u TIMESTAMP AS OF '2024-01-01' b ON a.id = b.id"
        " JOIN w TIMESTAMP AS OF current_timestamp() - INTERVAL 1 DAY c ON a.id = c.id"
    )
    t, u, w = stmt.find_all(exp.Table)
    assert (t.name, t.alias, t.args["version"].name, t.args["version"].text("kind")) == (
        "t",
        "a",
        "VERSION",
        "AS OF",
    )
    assert t.args["version"].expression.to_py() == 3
    assert (u.alias, u.args["version"].name, u.args["version"].expression.to_py()) == (
        "b",
        "TIMESTAMP",
        "2024-01-01",
    )
    assert isinstance(w.args["version"].expression, exp.Sub) and w.alias == "c"
    roundtrip(stmt)


def test_at_suffix_means_version_or_timestamp_as_of():
    stmt = parse1("SELECT * FROM t@v12 AS a, delta.`/data/u`@20240102030405678")
    t, u = stmt.find_all(exp.Table)
    assert (t.name, t.alias, t.args["version"].name, t.args["version"].expression.to_py()) == (
        "t",
        "a",
        "VERSION",
        12,
    )
    assert delta_path(u) == "/data/u"
    assert (u.args["version"].name, u.args["version"].expression.to_py()) == (
        "TIMESTAMP",
        "2024-01-02 03:04:05.678",
    )
    assert roundtrip(stmt) == (
        "SELECT * FROM t VERSION AS OF 12 AS a"
        " CROSS JOIN delta.`/data/u` TIMESTAMP AS OF '2024-01-02 03:04:05.678'"
    )


def test_path_tables_changes_tables_and_table_changes_function():
    stmt = parse1(
        "SELECT * FROM delta.`/data/t` a JOIN db.t.changes c ON a.id = c.id"
        " JOIN table_changes('db.t', 1, 5) f ON a.id = f.id"
    )
    path, changes, func = stmt.find_all(exp.Table)
    assert delta_path(path) == "/data/t" and path.alias == "a"
    assert names(changes) == ("db", "t", "changes") and delta_path(changes) is None
    assert isinstance(func.this, exp.Anonymous) and func.this.name.lower() == "table_changes"
    assert [a.to_py() for a in func.this.expressions] == ["db.t", 1, 5]
    roundtrip(stmt)


def test_delta_path_rules():
    assert delta_path(exp.to_table("delta.`s3://bucket/t`", dialect="sqlext")) == "s3://bucket/t"
    assert delta_path(exp.to_table("DELTA.`/x`", dialect="sqlext")) == "/x"
    assert delta_path(exp.to_table("delta.t", dialect="sqlext")) is None
    assert delta_path(exp.to_table("cat.delta.`/x`", dialect="sqlext")) is None
    assert delta_path(exp.column("a")) is None


def test_changes_clause_versions_and_options():
    stmt = parse1(
        "SELECT * FROM db.t CHANGES FROM VERSION 1 TO VERSION 5"
        " WITH (deduplicationMode = 'netChanges', computeUpdates = 'true') AS c"
    )
    table = stmt.find(exp.Table)
    clause = table.args["changes"]
    assert isinstance(clause, nodes.ChangesClause)
    assert names(table) == ("", "db", "t") and table.alias == "c"
    assert (clause.text("kind"), clause.args["start"].to_py(), clause.args["end"].to_py()) == (
        "VERSION",
        1,
        5,
    )
    assert clause.options_dict() == {"deduplicationMode": "netChanges", "computeUpdates": "true"}
    assert roundtrip(stmt) == (
        "SELECT * FROM db.t CHANGES FROM VERSION 1 TO VERSION 5"
        " WITH (deduplicationMode = 'netChanges', computeUpdates = 'true') AS c"
    )


def test_changes_clause_timestamps_and_open_end():
    stmt = parse1(
        "SELECT * FROM t CHANGES FROM TIMESTAMP '2024-01-01' TO TIMESTAMP '2024-02-01',"
        " u CHANGES FROM TIMESTAMP (current_timestamp() - INTERVAL 1 DAY),"
        " w CHANGES FROM VERSION 0 WITH ('a.b' = 1, c.d = TRUE, `e f` = -2) x"
    )
    t, u, w = (tbl.args["changes"] for tbl in stmt.find_all(exp.Table))
    assert (t.text("kind"), t.args["start"].to_py(), t.args["end"].to_py()) == (
        "TIMESTAMP",
        "2024-01-01",
        "2024-02-01",
    )
    assert u.text("kind") == "TIMESTAMP" and u.args.get("end") is None
    assert isinstance(u.args["start"].unnest(), exp.Sub)
    assert w.options_dict() == {"a.b": "1", "c.d": "true", "e f": "-2"}
    roundtrip(stmt)


def test_changes_is_still_a_name():
    stmt = parse1("SELECT changes FROM changes changes WHERE changes.changes = 1")
    table = stmt.find(exp.Table)
    assert table.name == "changes" and table.alias == "changes" and not table.args.get("changes")
    roundtrip(stmt)


READ_POSITIONS = {
    "join": "SELECT * FROM a JOIN {r} ON a.id = r.id",
    "subquery": "SELECT * FROM (SELECT * FROM {r}) AS q WHERE q.id IN (SELECT id FROM {r})",
    "cte": "WITH c AS (SELECT * FROM {r}) SELECT * FROM c",
    "union": "SELECT * FROM a UNION ALL SELECT * FROM {r}",
    "insert_select": "INSERT INTO a SELECT * FROM {r}",
    "merge_using": "MERGE INTO a USING {r} ON a.id = r.id WHEN MATCHED THEN DELETE",
    "merge_using_query": (
        "MERGE INTO a USING (SELECT * FROM {r}) AS s ON a.id = s.id WHEN MATCHED THEN DELETE"
    ),
    "create_as_select": "CREATE TABLE a USING delta AS SELECT * FROM {r}",
    "delete_subquery": "DELETE FROM a WHERE id IN (SELECT id FROM {r})",
}
READS = {
    "changes": (
        "t CHANGES FROM VERSION 2 TO VERSION 4 WITH (computeUpdates = 'true') AS r",
        "changes",
    ),
    "version": ("t VERSION AS OF 3 AS r", "version"),
    "timestamp": ("t TIMESTAMP AS OF '2024-01-01' r", "version"),
    "at": ("t@v3 r", "version"),
}


@pytest.mark.parametrize("position", sorted(READ_POSITIONS))
@pytest.mark.parametrize("read", sorted(READS))
def test_reads_parse_in_every_table_position(position, read):
    reference, arg = READS[read]
    stmt = parse1(READ_POSITIONS[position].format(r=reference))
    found = [tbl for tbl in stmt.find_all(exp.Table) if tbl.args.get(arg)]
    assert found and all(tbl.name == "t" and tbl.alias == "r" for tbl in found)
    roundtrip(stmt)


def test_changes_clause_errors():
    with pytest.raises(
        ParseError, match=r"Expected VERSION or TIMESTAMP at line 1, column 30 near '1'"
    ):
        parse_statements("SELECT * FROM t CHANGES FROM 1")
    with pytest.raises(ParseError, match=r"Expected VERSION after TO.*column 43 near 'TIMESTAMP'"):
        parse_statements("SELECT * FROM t CHANGES FROM VERSION 1 TO TIMESTAMP '2020'")
    with pytest.raises(ParseError, match=r"Expected a literal option value.*near 'b'"):
        parse_statements("SELECT * FROM t CHANGES FROM VERSION 1 WITH (a = b)")


# --- DESCRIBE / SHOW / ALTER ------------------------------------------------------------------


def test_describe_history_and_detail():
    history = parse1("DESCRIBE HISTORY db.t LIMIT 5")
    assert isinstance(history, nodes.DescribeHistory)
    assert names(history.this) == ("", "db", "t") and history.args["limit"].to_py() == 5
    unlimited = parse1("DESC HISTORY delta.`/data/t`")
    assert delta_path(unlimited.this) == "/data/t" and unlimited.args.get("limit") is None
    detail = parse1("DESCRIBE DETAIL '/data/t'")
    assert isinstance(detail, nodes.DescribeDetail) and delta_path(detail.this) == "/data/t"
    assert roundtrip(detail) == "DESCRIBE DETAIL delta.`/data/t`"
    roundtrip(history)
    roundtrip(unlimited)


def test_describe_table():
    extended = parse1("DESCRIBE EXTENDED db.t")
    assert isinstance(extended, exp.Describe) and extended.args["style"] == "EXTENDED"
    assert names(extended.this) == ("", "db", "t")
    plain = parse1("DESCRIBE t")
    assert (
        isinstance(plain, exp.Describe) and not plain.args.get("style") and plain.this.name == "t"
    )
    named_history = parse1("DESCRIBE history")  # a table called history
    assert isinstance(named_history, exp.Describe) and named_history.this.name == "history"
    for stmt in (extended, plain, named_history):
        roundtrip(stmt)


def test_show_tables():
    full = parse1("SHOW TABLES IN cat.db LIKE 'a*'")
    assert isinstance(full, nodes.ShowTables)
    assert (full.args["db"].catalog, full.args["db"].db, full.args["like"].to_py()) == (
        "cat",
        "db",
        "a*",
    )
    from_db = parse1("SHOW TABLES FROM db 'x*'")
    assert from_db.args["db"].db == "db" and from_db.args["like"].to_py() == "x*"
    bare = parse1("SHOW TABLES")
    assert bare.args.get("db") is None and bare.args.get("like") is None
    assert roundtrip(from_db) == "SHOW TABLES IN db LIKE 'x*'"
    roundtrip(full)
    roundtrip(bare)


def test_show_tblproperties_and_create_table():
    props = parse1("SHOW TBLPROPERTIES db.t (delta.appendOnly)")
    assert isinstance(props, nodes.ShowTblProperties)
    assert names(props.this) == ("", "db", "t") and props.args["key"].to_py() == "delta.appendOnly"
    assert roundtrip(props) == "SHOW TBLPROPERTIES db.t ('delta.appendOnly')"
    all_props = parse1("SHOW TBLPROPERTIES delta.`/data/t`")
    assert delta_path(all_props.this) == "/data/t" and all_props.args.get("key") is None
    create = parse1("SHOW CREATE TABLE db.t")
    assert isinstance(create, nodes.ShowCreateTable) and create.this.name == "t"
    assert not create.args["as_serde"] and parse1("SHOW CREATE TABLE t AS SERDE").args["as_serde"]
    roundtrip(all_props)
    roundtrip(create)


def test_alter_table_add_columns_set_properties_rename():
    add = parse1("ALTER TABLE delta.`/data/t` ADD COLUMNS (c INT COMMENT 'c', d STRUCT<x: INT>)")
    assert isinstance(add, exp.Alter) and delta_path(add.this) == "/data/t"
    (schema,) = add.args["actions"]
    assert [(c.name, c.args["kind"].sql("sqlext")) for c in schema.expressions] == [
        ("c", "INT"),
        ("d", "STRUCT<x: INT>"),
    ]
    props = parse1("ALTER TABLE t SET TBLPROPERTIES ('k' = 'v', delta.appendOnly = true)")
    (alter_set,) = props.args["actions"]
    assert isinstance(alter_set, exp.AlterSet)
    assert property_map(alter_set.expressions[0]) == {"k": "v", "delta.appendOnly": "true"}
    rename = parse1("ALTER TABLE t RENAME TO db.u")
    (action,) = rename.args["actions"]
    assert isinstance(action, exp.AlterRename) and names(action.this) == ("", "db", "u")
    for stmt in (add, props, rename):
        roundtrip(stmt)


# --- maintenance -------------------------------------------------------------------------------


def test_vacuum():
    full = parse1("VACUUM db.t RETAIN 168 HOURS DRY RUN")
    assert isinstance(full, nodes.Vacuum) and names(full.this) == ("", "db", "t")
    assert full.args["retain"].to_py() == 168 and full.args["dry_run"] is True
    assert roundtrip(full) == "VACUUM db.t RETAIN 168 HOURS DRY RUN"
    any_order = parse1("VACUUM '/data/t' DRY RUN LITE RETAIN 0.5 HOURS")
    assert delta_path(any_order.this) == "/data/t" and any_order.args["mode"] == "LITE"
    assert any_order.args["retain"].to_py() == 0.5 and any_order.args["dry_run"]
    assert roundtrip(any_order) == "VACUUM delta.`/data/t` LITE RETAIN 0.5 HOURS DRY RUN"
    bare = parse1("VACUUM t")
    assert (
        bare.args.get("retain") is None and not bare.args["dry_run"] and not bare.args.get("mode")
    )
    roundtrip(bare)
    with pytest.raises(
        ParseError, match="Expected HOURS after RETAIN <number> at line 1, column 19 near 'DRY'"
    ):
        parse_statements("VACUUM t RETAIN 5 DRY RUN")


def test_restore():
    version = parse1("RESTORE TABLE db.t TO VERSION AS OF 3")
    assert isinstance(version, nodes.Restore) and names(version.this) == ("", "db", "t")
    v = version.args["version"]
    assert isinstance(v, exp.Version) and (v.name, v.text("kind"), v.expression.to_py()) == (
        "VERSION",
        "AS OF",
        3,
    )
    timestamp = parse1("RESTORE delta.`/data/t` TIMESTAMP AS OF '2024-01-01 00:00:00'")
    assert delta_path(timestamp.this) == "/data/t"
    assert (timestamp.args["version"].name, timestamp.args["version"].expression.to_py()) == (
        "TIMESTAMP",
        "2024-01-01 00:00:00",
    )
    assert (
        roundtrip(timestamp)
        == "RESTORE TABLE delta.`/data/t` TO TIMESTAMP AS OF '2024-01-01 00:00:00'"
    )
    roundtrip(version)
    with pytest.raises(ParseError, match="Expected VERSION AS OF"):
        parse_statements("RESTORE TABLE t")


def test_optimize():
    full = parse1("OPTIMIZE delta.`/data/t` WHERE d >= '2024-01-01' ZORDER BY (a, b.c)")
    assert isinstance(full, nodes.Optimize) and delta_path(full.this) == "/data/t"
    assert isinstance(full.args["where"], exp.Where) and isinstance(
        full.args["where"].this, exp.GTE
    )
    assert [c.sql("sqlext") for c in full.args["zorder"]] == ["a", "b.c"]
    roundtrip(full)
    unparenthesised = parse1("OPTIMIZE t ZORDER BY a, b")
    assert [c.name for c in unparenthesised.args["zorder"]] == ["a", "b"]
    assert roundtrip(unparenthesised) == "OPTIMIZE t ZORDER BY (a, b)"
    bare = parse1("OPTIMIZE t")
    assert not bare.args.get("where") and not bare.args.get("zorder")
    roundtrip(bare)


TARGET_FORMS = [
    "CREATE TABLE {t} (a INT) USING delta",
    "CREATE TABLE {t} USING delta AS SELECT 1 AS a",
    "INSERT INTO {t} VALUES (1)",
    "INSERT OVERWRITE {t} SELECT 1",
    "DELETE FROM {t} WHERE a = 1",
    "UPDATE {t} SET a = 1",
    "MERGE INTO {t} USING s ON a = s.a WHEN MATCHED THEN DELETE",
    "SELECT * FROM {t} VERSION AS OF 1",
    "DESCRIBE HISTORY {t}",
    "DESCRIBE DETAIL {t}",
    "DESCRIBE {t}",
    "SHOW TBLPROPERTIES {t}",
    "SHOW CREATE TABLE {t}",
    "ALTER TABLE {t} ADD COLUMNS (b INT)",
    "ALTER TABLE {t} SET TBLPROPERTIES ('k' = 'v')",
    "DROP TABLE IF EXISTS {t}",
    "VACUUM {t}",
    "RESTORE {t} TO VERSION AS OF 1",
    "OPTIMIZE {t}",
]


@pytest.mark.parametrize("form", TARGET_FORMS)
def test_every_table_form_accepts_a_path(form):
    stmt = parse1(form.format(t="delta.`/data/my t`"))
    assert [delta_path(tbl) for tbl in stmt.find_all(exp.Table) if delta_path(tbl)] == [
        "/data/my t"
    ]
    roundtrip(stmt)


# --- passthrough -------------------------------------------------------------------------------


def test_sqlglot_nodes_for_other_statements():
    set_stmt = parse1("SET spark.sql.shuffle.partitions=10")
    assert isinstance(set_stmt, exp.Set)
    assert set_stmt.meta["sql"] == "SET spark.sql.shuffle.partitions=10"
    select = parse1("SELECT upper(name), count(*) FROM plain.people GROUP BY 1")
    assert isinstance(select, exp.Select) and select.find(exp.Table).name == "people"
    roundtrip(select)


@pytest.mark.parametrize(
    "sql",
    [
        "SHOW DATABASES",
        "SHOW COLUMNS IN t",
        "MSCK REPAIR TABLE t",
        "REPAIR TABLE t SYNC PARTITIONS",  # sqlglot raises: not a form sqlext owns
        "ADD JAR '/tmp/a b.jar'",
        "REPLACE TABLE t (a INT) USING delta",
        "CREATE DATABASE d WITH DBPROPERTIES ('a' = 'b')",
        # Spark forms sqlglot cannot parse, with an owned first word but not a form sqlext owns
        "DESCRIBE QUERY SELECT 1",
        "ALTER TABLE t PARTITION (p = 1) RENAME TO PARTITION (p = 2)",
        "INSERT OVERWRITE DIRECTORY '/tmp/out' USING parquet SELECT 1",
    ],
)
def test_unparseable_statements_pass_through_as_commands(sql):
    (stmt,) = parse_statements(f"  {sql} ;")
    assert isinstance(stmt, exp.Command)
    assert stmt.meta["sql"] == sql
    assert sql.upper().startswith(stmt.name)  # the first word (or sqlglot's multi-word token)
    assert stmt.sql(dialect="sqlext") == sql


def test_dialect_is_registered_with_sqlglot():
    stmt = sqlglot.parse_one("VACUUM t RETAIN 1 HOURS", read="sqlext")
    assert isinstance(stmt, nodes.Vacuum)
    assert stmt.sql(dialect="sqlext") == "VACUUM t RETAIN 1 HOURS"


# --- splitting and comments --------------------------------------------------------------------


def test_semicolons_and_comments():
    script = """
        -- a leading comment; with a semicolon
        SELECT 1 /* ; */ AS a;;
        /* block ; comment */ SELECT ';' AS b -- trailing ; comment
        ;
        SELECT 3 --; no newline at the end"""
    statements = parse_statements(script)
    assert [s.sql(dialect="sqlext", comments=False) for s in statements] == [
        "SELECT 1 AS a",
        "SELECT ';' AS b",
        "SELECT 3",
    ]
    assert [s.meta["sql"] for s in statements] == [
        "-- a leading comment; with a semicolon\n        SELECT 1 /* ; */ AS a",
        "/* block ; comment */ SELECT ';' AS b -- trailing ; comment",
        "SELECT 3 --; no newline at the end",
    ]


@pytest.mark.parametrize(
    "script", ["", "   ", ";", " ; ;; ", "-- only a comment", "/* x */ ; -- y\n"]
)
def test_empty_scripts(script):
    assert parse_statements(script) == []


def test_trailing_semicolon_and_comments_in_custom_statements():
    statements = parse_statements(
        "VACUUM /* the table */ t -- keep a week\n RETAIN 168 HOURS;\nDESCRIBE HISTORY t;"
    )
    assert [type(s) for s in statements] == [nodes.Vacuum, nodes.DescribeHistory]
    assert statements[0].args["retain"].to_py() == 168
    assert statements[1].meta["sql"] == "DESCRIBE HISTORY t"


def test_quotes_backticks_semicolons_and_comment_markers_survive():
    script = (
        "SELECT 'a;b' AS `x;y`, 'c -- d' AS `e/*f`, 'it\\'s', \"dq \\\" ' ;\" AS `we``ird`"
        " FROM delta.`/tmp/a;b--c/*d` VERSION AS OF 1 WHERE `we``ird` <> '*/';"
        " VACUUM '/tmp/x;y -- z' RETAIN 1 HOURS;"
        " MERGE INTO t USING s ON t.k = ';--/*' WHEN MATCHED AND s.v = '`' THEN DELETE;"
        " SELECT * FROM t CHANGES FROM VERSION 1 WITH (`k;--` = 'v\\';/*')"
    )
    select, vacuum, merge, changes = parse_statements(script)
    assert sorted(lit.to_py() for lit in select.find_all(exp.Literal) if lit.is_string) == sorted(
        ["a;b", "c -- d", "it's", "dq \" ' ;", "*/"]
    )
    assert [sel.alias for sel in select.selects if sel.alias] == ["x;y", "e/*f", "we`ird"]
    assert delta_path(select.find(exp.Table)) == "/tmp/a;b--c/*d"
    assert delta_path(vacuum.this) == "/tmp/x;y -- z"
    assert merge.args["on"].expression.to_py() == ";--/*"
    assert changes.find(nodes.ChangesClause).options_dict() == {"k;--": "v';/*"}
    for stmt in (select, vacuum, merge, changes):
        roundtrip(stmt)
    rendered = ";\n".join(s.sql(dialect="sqlext") for s in (select, vacuum, merge, changes))
    assert parse_statements(rendered) == [select, vacuum, merge, changes]


# --- errors ------------------------------------------------------------------------------------


def test_syntax_error_names_line_column_and_token():
    script = "SELECT 1;\n\nSELECT a,\n  b FROM t WHERE a = = 1;\nSELECT 2"
    with pytest.raises(ParseError) as info:
        parse_statements(script)
    err = info.value
    assert (err.line, err.column, err.token) == (4, 22, "=")
    assert "at line 4, column 22 near '='" in str(err)
    assert str(err) == (
        "Required keyword: 'expression' missing for EQ at line 4, column 22 near '=':\n"
        "    b FROM t WHERE a = = 1;\n"
        "                       ^"
    )
    assert err.statement == "SELECT a,\n  b FROM t WHERE a = = 1"


def test_error_at_end_of_statement():
    with pytest.raises(
        ParseError,
        match=r"Expected table name but got the end of the statement"
        r" at line 2, column 10 near 'FROM'",
    ):
        parse_statements("SELECT 1;\nSELECT * FROM")


@pytest.mark.parametrize(
    ("sql", "message", "line", "column"),
    [
        ("SELECT 1;\nSELECT 'abc", "Unterminated string", 2, 8),
        ("SELECT `abc FROM t", "Unterminated quoted identifier", 1, 8),
        ("SELECT 1 /* open\n comment", "Unterminated comment", 1, 10),
    ],
)
def test_tokenizing_errors_name_line_and_column(sql, message, line, column):
    with pytest.raises(
        ParseError, match=rf"{message} at line {line}, column {column} near"
    ) as info:
        parse_statements(sql)
    assert (info.value.line, info.value.column) == (line, column)


@pytest.mark.parametrize(
    "sql",
    [
        "DESCRIBE HISTORY t LIMIT x",
        "OPTIMIZE t WHERE",
        "INSERT INTO t VALUES (1",
        "UPDATE t SET a =",
        "CREATE TABLE t (a INT",
        "SHOW TABLES IN db LIKE 'x' extra",
        "ALTER TABLE a.b.c ADD COLUMNS (x INT",
        "ALTER TABLE t RENAME TO",
        "DROP TABLE",
        "SELECT * FORM t",
    ],
)
def test_errors_in_owned_statements_raise(sql):
    with pytest.raises(ParseError, match=r"at line 1, column \d+ near '"):
        parse_statements(sql)
