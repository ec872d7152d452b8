"""Security: table names cannot reach outside the warehouse, and quotes, backticks, ``;`` and
comments inside identifiers and literals cannot change what a statement does once sqlext has
rewritten it."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqlext
from sqlext.catalog import CATALOG_DIR, Catalog
from sqlext.errors import AnalysisException, SqlextError
from tests.support import assert_same_rows

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

FRAGMENTS = ["..", ".", "/", "\\", "a", "t1", "etc", "passwd", "`", "``", " ", "~", "%2e%2e",
             ";", "--", "/*", "*/", "'", '"', "\x00", "db", CATALOG_DIR, ":", "//", "C:"]


def _quoted(part: str) -> str:
    return "`" + part.replace("`", "``") + "`"


names = st.lists(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4).map("".join),
                 min_size=1, max_size=3).flatmap(
    lambda parts: st.tuples(st.just(parts), st.lists(st.booleans(), min_size=len(parts),
                                                     max_size=len(parts)))).map(
    lambda pq: ".".join(_quoted(p) if q else p for p, q in zip(*pq)))


def _inside(root: str, location: str) -> bool:
    root, location = os.path.realpath(root), os.path.realpath(location)
    return os.path.commonpath([root, location]) == root and location != root


@SETTINGS
@given(name=names)
def test_a_name_never_resolves_outside_the_warehouse(spark, name):
    catalog = Catalog(spark)
    try:
        ref = catalog.resolve(name)
    except SqlextError:
        return
    if ref.name is None:          # read as a path or delta.`path`: the caller named a location
        return
    assert _inside(catalog.warehouse, ref.location), (name, ref.location)
    rel = Path(os.path.relpath(ref.location, catalog.warehouse))
    assert ".." not in rel.parts and rel.parts[0] != CATALOG_DIR, (name, ref.location)
    if ref.schema == "default":        # not inside another schema's <schema>.db directory
        assert len(rel.parts) == 1 and not rel.parts[0].endswith(".db"), (name, ref.location)


@pytest.mark.parametrize("statement", [
    "CREATE TABLE `..`.x (id INT) USING delta",
    "CREATE TABLE `../../escape` (id INT) USING delta",
    "CREATE TABLE `/tmp/absolute` (id INT) USING delta",
    "CREATE TABLE x.`..` (id INT) USING delta",
    "CREATE SCHEMA `../up`",
])
def test_sql_names_that_would_escape_are_refused(spark, statement):
    warehouse = Path(Catalog(spark).warehouse)

    def listing():
        return (sorted(p.as_posix() for p in warehouse.rglob("*")),
                sorted(p.name for p in warehouse.parent.iterdir()))
    before = listing()
    with pytest.raises(AnalysisException):
        sqlext.sql(spark, statement)
    assert listing() == before and not Path("/tmp/absolute").exists()


def _log_files(spark, name: str) -> dict[str, bytes]:
    location = Path(Catalog(spark).resolve(name).location) / "_delta_log"
    return {p.name: p.read_bytes() for p in sorted(location.iterdir())}


@pytest.fixture
def tables(spark):
    """A table with a hostile name and hostile values, and a canary table that the hostile text
    names in DROP / DELETE statements."""
    suffix = uuid.uuid4().hex[:8]
    weird = f"`we;ird``name--x*y {suffix}`"
    canary = f"canary_{suffix}"
    sqlext.sql(spark, f"CREATE TABLE {weird} (id INT, s STRING) USING delta")
    sqlext.sql(spark, f"CREATE TABLE {canary} (id INT) USING delta")
    sqlext.sql(spark, f"INSERT INTO {canary} VALUES (1), (2)")
    values = [(1, f"x'; DROP TABLE {canary}; --"), (2, "a`b``c"), (3, "/* not a comment */"),
              (4, f"'); DELETE FROM {canary}; --"), (5, "plain"), (6, None)]
    spark.createDataFrame(values, "id INT, s STRING").createOrReplaceTempView("hostile_rows")
    sqlext.sql(spark, f"INSERT INTO {weird} SELECT * FROM hostile_rows")
    return {"weird": weird, "canary": canary, "values": values}


def _spark_literal(text: str) -> str:
    """A Spark SQL string literal (backslash escapes, as Spark reads them)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _expect_canary_intact(spark, tables, canary_log: dict) -> None:
    assert sorted(r.id for r in sqlext.sql(spark, f"SELECT id FROM {tables['canary']}").collect()) \
        == [1, 2]
    assert _log_files(spark, tables["canary"]) == canary_log


def test_hostile_literals_and_identifiers_keep_their_meaning(spark, tables):
    weird, canary = tables["weird"], tables["canary"]
    canary_log = _log_files(spark, canary)
    values = tables["values"]
    # SELECT with a literal full of SQL: the filter is the literal, nothing else
    for row_id, text in values[:4]:
        got = sqlext.sql(spark, f"SELECT id FROM {weird} WHERE s = {_spark_literal(text)}")
        assert [r.id for r in got.collect()] == [row_id]
    # DELETE: exactly the row holding the literal; Spark computes the same on a plain view
    target = values[0][1]
    sqlext.sql(spark, f"DELETE FROM {weird} WHERE s = {_spark_literal(target)} "
                      f"-- ; DROP TABLE {canary}")
    expected = spark.sql(f"SELECT * FROM hostile_rows WHERE NOT (s = {_spark_literal(target)}) "
                         "OR s IS NULL")
    assert_same_rows(sqlext.sql(spark, f"SELECT * FROM {weird}"), expected)
    # UPDATE: the new value is stored verbatim
    new = f"it's \\ `x` ; DROP TABLE {canary}; /* */ --"
    sqlext.sql(spark, f"UPDATE {weird} SET s = {_spark_literal(new)} WHERE id = 2 "
                      f"/* ; DELETE FROM {canary} */")
    assert sqlext.sql(spark, f"SELECT s FROM {weird} WHERE id = 2").collect()[0].s == new
    # MERGE with hostile source values
    merged = f"'; TRUNCATE TABLE {canary}; --"
    sqlext.sql(spark, f"MERGE INTO {weird} t USING (SELECT 3 AS id, {_spark_literal(merged)} AS s) "
                      "src ON t.id = src.id WHEN MATCHED THEN UPDATE SET s = src.s")
    assert sqlext.sql(spark, f"SELECT s FROM {weird} WHERE id = 3").collect()[0].s == merged
    # time travel on the hostile name, then history: the literals are recorded, not run
    assert sqlext.sql(spark, f"SELECT count(*) AS n FROM {weird} VERSION AS OF 1") \
        .collect()[0].n == 6
    ops = [r.operation for r in sqlext.sql(spark, f"DESCRIBE HISTORY {weird}").collect()]
    assert ops[:3] == ["MERGE", "UPDATE", "DELETE"]
    _expect_canary_intact(spark, tables, canary_log)


# --- fuzzing the SQL front ----------------------------------------------------------------------

KEYWORDS = ["SELECT", "*", "FROM", "WHERE", "DELETE", "UPDATE", "SET", "MERGE", "INTO", "USING",
            "ON", "WHEN", "MATCHED", "THEN", "INSERT", "VALUES", "VACUUM", "RETAIN", "HOURS",
            "DRY", "RUN", "OPTIMIZE", "ZORDER", "BY", "RESTORE", "TABLE", "TO", "VERSION", "AS",
            "OF", "TIMESTAMP", "DESCRIBE", "HISTORY", "DROP", "CREATE", "(", ")", ",", ";", "=",
            "'", "`", "--", "/*", "*/", "1", "-1", "'x'", "NULL", "id", "s", "AND", "OR", "NOT",
            "CHANGES", "LIMIT", "\n", "\\", "@v1", "1e999"]


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tokens=st.lists(st.sampled_from(KEYWORDS + ["{t}", "{c}"]), min_size=1, max_size=14),
       text=st.text(max_size=12))
def test_sql_fuzz_fails_only_with_sqlext_errors_and_changes_nothing(spark, fuzz_tables, tokens,
                                                                    text):
    statement = " ".join(tokens).format(t=fuzz_tables["t"], c=fuzz_tables["c"]) + " " + text
    before = {name: _log_files(spark, name) for name in fuzz_tables.values()}
    try:
        sqlext.sql(spark, statement)
    except SqlextError as exc:
        assert str(exc).strip()
        assert {name: _log_files(spark, name) for name in fuzz_tables.values()} == before, \
            f"a failed statement changed a table: {statement!r}"


@pytest.fixture(scope="module")
def fuzz_tables(spark):
    suffix = uuid.uuid4().hex[:8]
    names = {"t": f"fz_{suffix}", "c": f"`fz;{suffix}`"}
    for name in names.values():
        sqlext.sql(spark, f"CREATE TABLE {name} (id INT, s STRING) USING delta")
        sqlext.sql(spark, f"INSERT INTO {name} VALUES (1, 'a'), (2, NULL)")
    return names
