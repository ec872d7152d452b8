"""Type widening's corners against delta-spark 4.4 (issue 31 item 3, the rest): a column a CHECK
constraint or a generated column depends on cannot be widened (ALTER, INSERT with autoMerge,
MERGE WITH SCHEMA EVOLUTION), the same error conditions, the table unchanged; a type change
with a COMMENT in one ``CHANGE COLUMN``; MERGE schema evolution widening struct fields (inside
arrays and maps too); nested ``CHANGE COLUMN s.x x <type> COMMENT '...' [FIRST | AFTER y]`` and
nested comment-only changes. Each scenario runs on both engines: every statement's outcome
(success or error condition), the final version, schema (``delta.typeChanges`` and comments),
protocol, the operations committed (a ``CHANGE COLUMN``'s parameters: the field's path, type,
comment, position) and rows agree, and delta-spark reads the table sqlext wrote."""

from __future__ import annotations

import json

import pytest

import sqlext
from sqlext.errors import SqlextError
from sqlext.log.table import DeltaLog
from tests.support import assert_same_rows
from tests.support.deltaspark import DeltaSparkError, delta_path
from tests.support.kernel_tables import clear_caches
from tests.support.table_checks import commit_info

AUTO_MERGE = "spark.databricks.delta.schema.autoMerge.enabled"
_GEN = "a INT, g BIGINT GENERATED ALWAYS AS (CAST(a AS BIGINT) + 1), b INT"
_STRUCT = "id INT, s STRUCT<x: INT, y: STRING>"
_SOURCE = ("(SELECT * FROM VALUES (1, named_struct('x', CAST(5000000 AS {ty}), 'y', 'A')), "
           "(3, named_struct('x', CAST(30 AS {ty}), 'y', 'C')) AS v(id, s))")


def _merge_struct(ty: str, clauses: str, evolution: bool = True) -> list[str]:
    return ["INSERT INTO {t} VALUES (1, named_struct('x', 1, 'y', 'a')), "
            "(2, named_struct('x', 2, 'y', 'b'))",
            f"MERGE {'WITH SCHEMA EVOLUTION ' if evolution else ''}INTO {{t}} AS tgt USING "
            f"{_SOURCE.format(ty=ty)} src ON tgt.id = src.id {clauses}"]


_BOTH = "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"

_NESTED = ("id INT, s STRUCT<x: INT, y: STRING, t: STRUCT<z: INT, w: INT>>, a ARRAY<INT>, "
           "m MAP<INT, INT>, arr ARRAY<STRUCT<x: INT>>")
_NESTED_ROW = ("INSERT INTO {t} VALUES (1, named_struct('x', 1, 'y', 'a', 't', "
               "named_struct('z', 2, 'w', 3)), array(4), map(5, 6), array(named_struct('x', 7)))")


def _nested(*alters: str) -> tuple[str, list[str], bool]:
    """A scenario on the nested table: one row, then ``ALTER TABLE {t} <alter>`` each."""
    return _NESTED, [_NESTED_ROW, *(f"ALTER TABLE {{t}} {a}" for a in alters)], False


# issue 31 item 3: nested CHANGE COLUMN with a type, a comment, a position
NESTED_SCENARIOS = {
    "nested_type_and_comment": _nested("CHANGE COLUMN s.x x BIGINT COMMENT 'ex'",
                                       "CHANGE s.t.z z BIGINT COMMENT 'zed'"),
    "nested_comment_only": _nested("CHANGE COLUMN s.x x INT COMMENT 'same type'",
                                   "CHANGE COLUMN s.y COMMENT 'why'",
                                   "ALTER COLUMN s.t.w COMMENT 'double-u'"),
    "nested_positions": _nested("CHANGE COLUMN s.x x BIGINT COMMENT 'moved' AFTER y",
                                "CHANGE COLUMN s.t.w w INT COMMENT 'first' FIRST",
                                "CHANGE COLUMN s.t.z z BIGINT AFTER w"),
    "top_level_position": (_NESTED, [
        _NESTED_ROW, "ALTER TABLE {t} CHANGE COLUMN id id BIGINT COMMENT 'top' AFTER s",
        "INSERT INTO {t} VALUES (named_struct('x', 8, 'y', 'b', 't', named_struct('z', 9, "
        "'w', 10)), 5000000000, array(), map(), array())",
        "ALTER TABLE {t} CHANGE COLUMN id id BIGINT FIRST"], False),
    "nested_in_collections": _nested("ALTER COLUMN a.element TYPE BIGINT",
                                     "CHANGE COLUMN m.key key BIGINT",
                                     "ALTER COLUMN m.value TYPE BIGINT",
                                     "CHANGE COLUMN arr.element.x x BIGINT COMMENT 'in array'"),
    "nested_case_insensitive": _nested("CHANGE COLUMN S.X X BIGINT COMMENT 'case'"),
    "nested_refusals": _nested("CHANGE COLUMN s.x x SMALLINT COMMENT 'narrower'",
                               "CHANGE COLUMN s.nope nope BIGINT COMMENT 'no such field'",
                               "CHANGE COLUMN s.x x STRING COMMENT 'not a widening'",
                               "CHANGE COLUMN a.element element BIGINT COMMENT 'element'",
                               "CHANGE COLUMN s.x x BIGINT AFTER nope"),
    "nested_check_blocks_type_not_comment": (_NESTED, [
        _NESTED_ROW, "ALTER TABLE {t} ADD CONSTRAINT c1 CHECK (s.x > 0)",
        "ALTER TABLE {t} CHANGE COLUMN s.x x BIGINT COMMENT 'blocked'",
        "ALTER TABLE {t} CHANGE COLUMN s.x x INT COMMENT 'comment only'",
        "ALTER TABLE {t} CHANGE COLUMN s.t.z z BIGINT COMMENT 'not referenced'"], False),
    "nested_generated_blocks_type": (
        "id INT, s STRUCT<x: INT, y: INT>, g BIGINT GENERATED ALWAYS AS (CAST(s.x AS BIGINT))", [
            "INSERT INTO {t} (id, s) VALUES (1, named_struct('x', 1, 'y', 2))",
            "ALTER TABLE {t} CHANGE COLUMN s.x x BIGINT COMMENT 'blocked'",
            "ALTER TABLE {t} CHANGE COLUMN s.x x INT COMMENT 'comment only'",
            "ALTER TABLE {t} CHANGE COLUMN s.y y BIGINT COMMENT 'free'"], False),
}

# name -> (columns, statements ({t}: the table), autoMerge on)
SCENARIOS = {
    "check_blocks_alter": ("a INT, b INT", [
        "ALTER TABLE {t} ADD CONSTRAINT c1 CHECK (a > 0)", "INSERT INTO {t} VALUES (1, 1)",
        "ALTER TABLE {t} ALTER COLUMN a TYPE BIGINT", "ALTER TABLE {t} ALTER COLUMN b TYPE BIGINT",
        "ALTER TABLE {t} CHANGE COLUMN a a INT COMMENT 'same type'"], False),
    "check_on_field_blocks_that_field": ("id INT, s STRUCT<x: INT, y: INT>", [
        "ALTER TABLE {t} ADD CONSTRAINT c1 CHECK (s.x > 0)",
        "ALTER TABLE {t} ALTER COLUMN s.y TYPE BIGINT",
        "ALTER TABLE {t} ALTER COLUMN s.x TYPE BIGINT"], False),
    "check_on_struct_blocks_its_fields": ("id INT, s STRUCT<x: INT, y: INT>", [
        "ALTER TABLE {t} ADD CONSTRAINT c1 CHECK (s IS NOT NULL)",
        "ALTER TABLE {t} ALTER COLUMN s.y TYPE BIGINT",
        "ALTER TABLE {t} ALTER COLUMN id TYPE BIGINT"], False),
    "generated_blocks_alter": (_GEN, [
        "INSERT INTO {t} (a, b) VALUES (1, 1)", "ALTER TABLE {t} ALTER COLUMN a TYPE BIGINT",
        "ALTER TABLE {t} ALTER COLUMN g TYPE DECIMAL(22,0)",
        "ALTER TABLE {t} ALTER COLUMN b TYPE BIGINT"], False),
    "check_blocks_insert_evolution": ("a INT, b INT", [
        "ALTER TABLE {t} ADD CONSTRAINT c1 CHECK (a > 0)",
        "INSERT INTO {t} SELECT 5000000000L AS a, 1 AS b",
        "INSERT INTO {t} SELECT 5 AS a, 5000000000L AS b"], True),
    "check_blocks_merge_evolution": ("a INT, b INT", [
        "ALTER TABLE {t} ADD CONSTRAINT c1 CHECK (a > 0)",
        "MERGE WITH SCHEMA EVOLUTION INTO {t} AS tgt USING (SELECT 5000000000L AS a, 1 AS b) "
        "src ON false WHEN NOT MATCHED THEN INSERT *",
        "MERGE WITH SCHEMA EVOLUTION INTO {t} AS tgt USING (SELECT 5 AS a, 5000000000L AS b) "
        "src ON false WHEN NOT MATCHED THEN INSERT *"], False),
    "generated_blocks_evolution": (_GEN, [
        "INSERT INTO {t} (a, b) SELECT 5000000000L AS a, 1 AS b",
        "INSERT INTO {t} (a, b) SELECT 5 AS a, 5000000000L AS b",
        "MERGE INTO {t} AS tgt USING (SELECT 6000000000L AS a, 1 AS b) src ON false "
        "WHEN NOT MATCHED THEN INSERT (a, b) VALUES (src.a, src.b)"], True),
    "check_on_field_blocks_merge_evolution": ("id INT, s STRUCT<x: INT, y: INT>", [
        "ALTER TABLE {t} ADD CONSTRAINT c1 CHECK (s.x > 0)",
        "MERGE WITH SCHEMA EVOLUTION INTO {t} AS tgt USING (SELECT 1 AS id, "
        "named_struct('x', 5000000000L, 'y', 1) AS s) src ON tgt.id = src.id "
        "WHEN NOT MATCHED THEN INSERT *"], False),
    "type_change_with_comment": ("a INT, b INT", [
        "INSERT INTO {t} VALUES (1, 2)",
        "ALTER TABLE {t} CHANGE COLUMN b b BIGINT COMMENT 'bee'",
        "ALTER TABLE {t} CHANGE COLUMN a a STRING COMMENT 'not a widening'",
        "ALTER TABLE {t} CHANGE COLUMN a a INT COMMENT 'same type'",
        "ALTER TABLE {t} ALTER COLUMN a TYPE BIGINT COMMENT 'no such form'",
        "INSERT INTO {t} VALUES (3, 5000000000)"], False),
    **{f"merge_struct_{ty.split('(')[0].lower()}_star": (_STRUCT, _merge_struct(ty, _BOTH), False)
       for ty in ("BIGINT", "DOUBLE", "DECIMAL(12,2)")},
    "merge_struct_star_without_evolution": (_STRUCT, _merge_struct("BIGINT", _BOTH, False), False),
    "merge_struct_set_whole": (_STRUCT, _merge_struct(
        "BIGINT", "WHEN MATCHED THEN UPDATE SET s = src.s "
                  "WHEN NOT MATCHED THEN INSERT (id, s) VALUES (src.id, src.s)"), False),
    "merge_struct_set_field": (_STRUCT, _merge_struct(
        "BIGINT", "WHEN MATCHED THEN UPDATE SET s.x = src.s.x"), False),
    "merge_struct_insert_only": (_STRUCT, _merge_struct(
        "BIGINT", "WHEN NOT MATCHED THEN INSERT *"), False),
    "merge_struct_autoMerge": (_STRUCT, _merge_struct("DOUBLE", _BOTH, False), True),
    "merge_struct_in_array_and_map": (
        "id INT, a ARRAY<STRUCT<x: INT>>, m MAP<STRING, STRUCT<x: INT>>", [
            "INSERT INTO {t} VALUES (1, array(named_struct('x', 1)), "
            "map('k', named_struct('x', 1)))",
            "MERGE WITH SCHEMA EVOLUTION INTO {t} AS tgt USING (SELECT 1 AS id, "
            "array(named_struct('x', 5000000000L)) AS a, map('k', named_struct('x', "
            "CAST(1.5 AS DOUBLE))) AS m UNION ALL SELECT 2, array(), map()) src "
            "ON tgt.id = src.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"],
        False),
    "insert_struct_autoMerge": (_STRUCT, [
        "INSERT INTO {t} SELECT 1 AS id, named_struct('x', 5000000000L, 'y', 'a') AS s"], True),
    **NESTED_SCENARIOS,
}


def _create(t: str, columns: str) -> str:
    return (f"CREATE TABLE {t} ({columns}) USING delta "
            "TBLPROPERTIES (delta.enableTypeWidening = true)")


def _set_auto_merge(on: bool) -> str:
    return f"spark.conf.set({AUTO_MERGE!r}, {str(on).lower()!r}); result = None"


@pytest.fixture(scope="module")
def theirs(delta_spark, tmp_path_factory):
    """delta-spark's run of every scenario: {name: (outcomes, rows)} (an outcome is None or
    the error condition), its tables under the returned ``root``."""
    root = tmp_path_factory.mktemp("tw-corners")
    requests, spans = [], {}
    for name, (columns, statements, auto) in SCENARIOS.items():
        t = delta_path(root / name)
        start = len(requests)
        requests += [("exec", {"code": _set_auto_merge(auto)}),
                     ("sql", {"sql": _create(t, columns)})]
        requests += [("sql", {"sql": s.format(t=t)}) for s in statements]
        requests += [("sql", {"sql": f"SELECT * FROM {t}"}),
                     ("exec", {"code": _set_auto_merge(False)})]
        spans[name] = (start, len(requests))
    answers = delta_spark.batch(requests)
    out = {}
    for name, (start, end) in spans.items():
        got = answers[start:end]
        assert not isinstance(got[1], DeltaSparkError), got[1]
        outcomes = [a.condition if isinstance(a, DeltaSparkError) else None for a in got[2:-2]]
        out[name] = (outcomes, got[-2])
    return root, out


def _commits(path, version: int) -> list[tuple]:
    """Each commit after CREATE: its operation, and a ``CHANGE COLUMN``'s parameters (the
    ``column`` JSON parsed)."""
    out = []
    for v in range(1, version + 1):
        info = commit_info(path, v)
        params = None
        if info["operation"] == "CHANGE COLUMN":
            params = {**info["operationParameters"],
                      "column": json.loads(info["operationParameters"]["column"])}
        out.append((info["operation"], params))
    return out


def _run_ours(spark, t: str, columns: str, statements: list[str], auto: bool) -> list:
    sqlext.sql(spark, _create(t, columns))
    outcomes = []
    spark.conf.set(AUTO_MERGE, str(auto).lower())
    try:
        for s in statements:
            try:
                sqlext.sql(spark, s.format(t=t))
                outcomes.append(None)
            except SqlextError as e:
                assert e.table is not None, str(e)
                outcomes.append(e.error_class)
    finally:
        spark.conf.unset(AUTO_MERGE)
    return outcomes


def _schema(path) -> dict:
    return json.loads(DeltaLog(str(path)).snapshot().metadata.schema_string)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_matches_delta_spark(spark, delta_spark, theirs, tmp_path, name):
    root, answers = theirs
    columns, statements, auto = SCENARIOS[name]
    ours = tmp_path / name
    outcomes = _run_ours(spark, delta_path(ours), columns, statements, auto)
    their_outcomes, their_rows = answers[name]
    assert outcomes == their_outcomes
    clear_caches()
    mine, other = DeltaLog(str(ours)).snapshot(), DeltaLog(str(root / name)).snapshot()
    assert mine.version == other.version
    assert _schema(ours) == _schema(root / name)
    assert _commits(ours, mine.version) == _commits(root / name, other.version)
    assert_same_rows(sqlext.read(spark, str(ours)), their_rows, sort_by=[_key(columns)])
    # delta-spark reads the table sqlext wrote as its own
    read_back = delta_spark.sql(f"SELECT * FROM {delta_path(ours)}")
    assert_same_rows(sqlext.read(spark, str(ours)), read_back, sort_by=[_key(columns)])


def _key(columns: str) -> str:
    return columns.split()[0]


def test_refusals_name_the_table_and_leave_it_unchanged(spark, tmp_path):
    """A refused widening is an AnalysisException naming the table, its version and the
    constraint, with delta-spark's SQLSTATE, and commits nothing."""
    path = tmp_path / "t"
    t = delta_path(path)
    sqlext.sql(spark, _create(t, "a INT, b INT"))
    sqlext.sql(spark, f"ALTER TABLE {t} ADD CONSTRAINT positive CHECK (a > 0)")
    version = DeltaLog(str(path)).snapshot().version
    with pytest.raises(SqlextError) as info:
        sqlext.sql(spark, f"ALTER TABLE {t} ALTER COLUMN a TYPE BIGINT")
    error = info.value
    assert (error.table, error.version, error.sqlstate) == (str(path), version, "42K09")
    assert "delta.constraints.positive -> a > 0" in str(error) and "unchanged" in str(error)
    assert error.message_parameters["columnName"] == "a"
    spark.conf.set(AUTO_MERGE, "true")
    try:
        with pytest.raises(SqlextError) as info:
            sqlext.sql(spark, f"INSERT INTO {t} SELECT 5000000000L AS a, 1 AS b")
    finally:
        spark.conf.unset(AUTO_MERGE)
    assert info.value.message_parameters["dataType"] == "BIGINT"
    clear_caches()
    assert DeltaLog(str(path)).snapshot().version == version
    assert not list(path.glob("*.parquet"))


@pytest.mark.parametrize("alter, condition", [
    ("CHANGE COLUMN s.x x SMALLINT COMMENT 'c'", "NOT_SUPPORTED_CHANGE_COLUMN"),
    ("CHANGE COLUMN s.nope nope BIGINT COMMENT 'c'", "UNRESOLVED_COLUMN.WITH_SUGGESTION"),
    ("CHANGE COLUMN s.x x BIGINT COMMENT 'c'", "DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE"),
    ("CHANGE COLUMN a.element element BIGINT COMMENT 'c'", "DELTA_UNSUPPORTED_COMMENT_MAP_ARRAY"),
    ("CHANGE COLUMN s.y y STRING AFTER nope", "UNRESOLVED_COLUMN.WITH_SUGGESTION"),
])
def test_nested_change_refusals_name_table_and_version(spark, tmp_path, alter, condition):
    """A refused nested CHANGE COLUMN names the table and the version it read, with
    delta-spark's condition, and commits nothing."""
    path = tmp_path / "t"
    t = delta_path(path)
    sqlext.sql(spark, _create(t, _NESTED))
    sqlext.sql(spark, _NESTED_ROW.format(t=t))
    sqlext.sql(spark, f"ALTER TABLE {t} ADD CONSTRAINT c1 CHECK (s.x > 0)")
    version, schema = DeltaLog(str(path)).snapshot().version, _schema(path)
    with pytest.raises(SqlextError) as info:
        sqlext.sql(spark, f"ALTER TABLE {t} {alter}")
    error = info.value
    assert (error.error_class, error.table, error.version) == (condition, str(path), version)
    assert "unchanged" in str(error)
    clear_caches()
    assert DeltaLog(str(path)).snapshot().version == version
    assert _schema(path) == schema
