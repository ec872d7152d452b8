"""Issue 29 item 4: errors carry structured fields (``table``, ``version``, ``error_class``,
``sqlstate``, ``message_parameters``, ``position``) set where they are raised.

Each case raises a representative error through the real API (a real SparkSession, real
tables on disk) and checks the fields, not the words: callers (the dbt adapter, the drop-in
layer's pyspark accessors) decide on these fields.
"""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError

import sqlext
from sqlext import errors
from sqlext.errors import Position
from sqlext.log.table import DeltaLog
from sqlext.sql.parse import parse_statements

from dbt.adapters.sqlext.connections import failure_message
from dbt.adapters.sqlext.impl import is_missing_relation


@pytest.fixture
def table(spark, tmp_path):
    """A path table at version 0 with two rows."""
    path = str(tmp_path / "t")
    sqlext.write(spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string"), path)
    return path


def _fields(error: errors.SqlextError) -> tuple:
    return (error.table, error.version, error.error_class, error.sqlstate)


def test_table_not_found(spark, tmp_path):
    path = str(tmp_path / "nothing_here")
    with pytest.raises(errors.TableNotFoundError) as info:
        sqlext.read(spark, path)
    assert _fields(info.value) == (path, None, "DELTA_MISSING_DELTA_TABLE", "42P01")
    assert info.value.getCondition() == "DELTA_MISSING_DELTA_TABLE"


def test_version_out_of_range(spark, table):
    with pytest.raises(errors.VersionNotFoundException) as info:
        sqlext.read(spark, table, versionAsOf=7)
    assert _fields(info.value) == (table, 7, "DELTA_VERSION_NOT_FOUND", "22003")
    assert info.value.getMessageParameters()["userVersion"] == "7"
    assert info.value.getSqlState() == "22003"


def test_concurrent_modification(spark, table):
    log = DeltaLog(table)
    loser = log.start_transaction()
    loser.read_whole_table()
    removed = [f.remove(1) for f in loser.snapshot.files]
    sqlext.write(spark.createDataFrame([(3, "c")], "id long, v string"), table)  # version 1
    with pytest.raises(errors.ConcurrentAppendException) as info:
        loser.commit(removed, "DELETE")
    assert _fields(info.value) == (table, 1, "DELTA_CONCURRENT_APPEND.WITHOUT_HINT", "2D521")
    assert info.value.getMessageParameters()["version"] == "1"


def test_constraint_violation(spark, table):
    sqlext.sql(spark, f"ALTER TABLE delta.`{table}` ADD CONSTRAINT positive CHECK (id > 0)")
    with pytest.raises(errors.ConstraintViolationError) as info:
        sqlext.write(spark.createDataFrame([(-1, "x")], "id long, v string"), table)
    assert _fields(info.value) == (table, 1, "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", "23001")
    assert DeltaLog(table).latest_version() == 1, "nothing was committed"


def test_path_exists(spark, table):
    with pytest.raises(errors.TableAlreadyExistsError) as info:
        sqlext.write(spark.createDataFrame([(9, "z")], "id long, v string"), table, mode="error")
    assert _fields(info.value) == (table, 0, "DELTA_PATH_EXISTS", "42K04")
    assert info.value.getMessageParameters() == {"path": table}


def test_analysis_error_carries_its_position_in_the_script(spark, table):
    script = f"SELECT 1;\nSELECT id,\n       no_such_column FROM delta.`{table}`"
    with pytest.raises(errors.AnalysisException) as info:
        sqlext.sql(spark, script).collect()
    err = info.value
    assert err.error_class.startswith("UNRESOLVED_COLUMN") and err.sqlstate == "42703"
    # the field is where the message points, in the user's script (line 3, column 8)
    assert err.position == Position(3, 8)
    assert "line 3, pos 7" in str(err) or "line 3 pos 7" in str(err)


def test_parse_error_position_is_a_field(spark):
    with pytest.raises(errors.ParseError) as info:
        sqlext.sql(spark, "SELECT 1;\nSELECT * FROM t WHERE = 3")
    err = info.value
    assert err.position == Position(2, 23) and (err.line, err.column) == (2, 23)
    assert (err.error_class, err.sqlstate) == ("PARSE_SYNTAX_ERROR", "42601")


def test_fields_given_at_the_raise_site_win_over_the_class_defaults():
    err = errors.TableAlreadyExistsError("view v already exists",
                                         error_class="TABLE_OR_VIEW_ALREADY_EXISTS", table="v")
    assert _fields(err) == ("v", None, "TABLE_OR_VIEW_ALREADY_EXISTS", "42P07")
    bare = errors.TableAlreadyExistsError("table t already exists")
    assert (bare.error_class, bare.sqlstate, bare.position) == ("DELTA_PATH_EXISTS", "42K04", None)


def test_dbt_decides_on_the_error_not_its_words(spark, table, tmp_path):
    """A missing relation is recognised by class and condition through dbt's wrapping; an error
    whose words say "not found" but whose condition does not is not taken for one."""
    try:
        sqlext.read(spark, str(tmp_path / "gone"))
    except errors.TableNotFoundError as exc:
        try:
            raise DbtRuntimeError(str(exc)) from exc
        except DbtRuntimeError as wrapped:
            assert is_missing_relation(wrapped)
    worded = errors.AnalysisException("[TABLE_OR_VIEW_NOT_FOUND] is not a Delta table",
                                      error_class="UNRESOLVED_COLUMN")
    assert not is_missing_relation(DbtRuntimeError(str(worded)))
    try:
        raise DbtRuntimeError(str(worded)) from worded
    except DbtRuntimeError as wrapped:
        assert not is_missing_relation(wrapped)


def test_dbt_reports_sqlexts_own_parse_errors_as_syntax_errors(spark):
    with pytest.raises(errors.ParseError) as ours:      # sqlext's parser alone, without Spark's
        parse_statements("SELECT 1;\nSELECT (1")
    assert ours.value.position == Position(2, 9)             # at the "1" the ")" should follow
    with pytest.raises(errors.ParseError) as sparks:
        sqlext.sql(spark, "SELECT * FROM t WHERE = 3")
    assert not str(ours.value).startswith("[")          # sqlglot's wording: "Expecting ) ..."
    assert failure_message(ours.value) == f"Syntax error: {ours.value}"
    assert failure_message(sparks.value) == str(sparks.value)
    assert str(sparks.value).startswith("[PARSE_SYNTAX_ERROR] Syntax error")


def test_time_travel_on_a_view_names_the_view(spark, table):
    sqlext.sql(spark, f"CREATE OR REPLACE TEMPORARY VIEW fields_v AS SELECT * FROM delta.`{table}`")
    with pytest.raises(errors.UnsupportedOperationError) as info:
        sqlext.sql(spark, "SELECT * FROM fields_v VERSION AS OF 0")
    assert (info.value.table, info.value.sqlstate) == ("fields_v", "0A000")


# --- fields set at the raise site, not left on the class defaults (issue 29 item 4) -----------


def test_dml_on_a_missing_table_names_it(spark, tmp_path):
    path = str(tmp_path / "missing")
    with pytest.raises(errors.TableNotFoundError) as info:
        sqlext.sql(spark, f"DELETE FROM delta.`{path}` WHERE id = 1")
    assert _fields(info.value) == (path, None, "DELTA_TABLE_NOT_FOUND", "42P01")


def test_planning_errors_name_the_table(spark, table):
    with pytest.raises(errors.AnalysisException) as info:
        sqlext.sql(spark, f"INSERT INTO delta.`{table}` (id, nope) VALUES (1, 'x')")
    assert info.value.table == f"delta.`{table}`"
    with pytest.raises(errors.UnsupportedOperationError) as info:
        sqlext.sql(spark, f"TRUNCATE TABLE delta.`{table}` PARTITION (v = 'a')")
    assert (info.value.table, info.value.sqlstate) == (f"delta.`{table}`", "0A000")


@pytest.mark.parametrize("statement,kind,version,condition", [
    ("OPTIMIZE {t} ZORDER BY (nope)", errors.AnalysisException, 0, None),       # maintenance
    ("SELECT * FROM {t} VERSION AS OF 5", errors.VersionNotFoundException, 5,
     "DELTA_VERSION_NOT_FOUND"),                                                 # time travel
    ("ALTER TABLE {t} ADD COLUMNS (v STRING)", errors.AnalysisException, 0, None),  # a bad ALTER
], ids=["optimize", "version-as-of", "alter"])
def test_sql_errors_name_the_table_and_version(spark, table, statement, kind, version, condition):
    with pytest.raises(kind) as info:
        result = sqlext.sql(spark, statement.format(t=f"delta.`{table}`"))
        if result is not None:
            result.collect()
    assert (info.value.table, info.value.version) == (table, version)
    assert info.value.error_class == condition


def test_constraint_errors_carry_delta_sparks_conditions(spark, table):
    with pytest.raises(errors.AnalysisException) as info:
        sqlext.sql(spark, f"ALTER TABLE delta.`{table}` DROP CONSTRAINT nothing")
    assert _fields(info.value) == (table, 0, "DELTA_CONSTRAINT_DOES_NOT_EXIST", "42704")
    assert info.value.getMessageParameters()["constraintName"] == "nothing"
    sqlext.sql(spark, f"ALTER TABLE delta.`{table}` ADD CONSTRAINT positive CHECK (id > 0)")
    with pytest.raises(errors.AnalysisException) as info:
        sqlext.sql(spark, f"ALTER TABLE delta.`{table}` ADD CONSTRAINT positive CHECK (id > 1)")
    assert _fields(info.value) == (table, 1, "DELTA_CONSTRAINT_ALREADY_EXISTS", "42710")


def test_restore_to_a_missing_version(spark, table):
    with pytest.raises(errors.VersionNotFoundException) as info:
        sqlext.sql(spark, f"RESTORE TABLE delta.`{table}` TO VERSION AS OF 9")
    assert _fields(info.value) == (table, 9, "DELTA_CANNOT_RESTORE_TABLE_VERSION", "22003")


def test_change_feed_range_error(spark, table):
    with pytest.raises(errors.ChangeDataRangeError) as info:
        sqlext.sql(spark, f"SELECT * FROM table_changes('delta.`{table}`', 4)").collect()
    err = info.value
    assert (err.table, err.version, err.sqlstate) == (table, 4, "22003")
    assert err.error_class == "DELTA_CDC_START_VERSION_AFTER_LATEST"


# --- the last raise sites on class defaults: ALTER / DROP statements, reads, the change feed ----


def test_alter_and_drop_errors_name_the_table(spark, table):
    named = f"delta.`{table}`"
    cases = [(f"ALTER TABLE {named} RENAME TO other", errors.UnsupportedOperationError, named),
             (f"DROP TABLE {named}", errors.UnsupportedOperationError, named),
             (f"ALTER TABLE {named} ADD CONSTRAINT pk PRIMARY KEY (id)",
              errors.UnsupportedOperationError, table)]
    for statement, kind, name in cases:
        with pytest.raises(kind) as info:
            sqlext.sql(spark, statement)
        assert (info.value.table, info.value.sqlstate) == (name, "0A000"), statement
    # Spark's parser's refusal, with its legacy condition (no SQLSTATE), as delta-spark's
    with pytest.raises(errors.ParseError) as info:
        sqlext.sql(spark, f"ALTER TABLE {named} CHANGE COLUMN v w STRING COMMENT 'x'")
    assert (info.value.table, info.value.error_class, info.value.sqlstate) == (
        named, "_LEGACY_ERROR_TEMP_0034", None)


def test_schema_errors_carry_sparks_conditions(spark):
    with pytest.raises(errors.AnalysisException) as info:
        sqlext.sql(spark, "DROP SCHEMA no_such_schema_fields")
    err = info.value
    assert (err.error_class, err.sqlstate) == ("SCHEMA_NOT_FOUND", "42704")
    assert err.getCondition() == "SCHEMA_NOT_FOUND"


@pytest.mark.parametrize("when,kind", [("not a time", errors.AnalysisException),
                                       ([2024], errors.SqlextError)], ids=["text", "list"])
def test_bad_timestamp_names_the_table(spark, table, when, kind):
    with pytest.raises(kind) as info:
        sqlext.read(spark, table, timestampAsOf=when)
    assert info.value.table == table


@pytest.mark.parametrize("arguments", [
    {"deduplicationMode": "bogus"},
    {"computeUpdates": True},
    {"identifierColumns": ["nope"], "deduplicationMode": "netChanges"},
], ids=["mode", "updates-without-keys", "unknown-key"])
def test_change_feed_option_errors_name_the_table(spark, table, arguments):
    sqlext.sql(spark, f"ALTER TABLE delta.`{table}` SET TBLPROPERTIES "
                      "(delta.enableChangeDataFeed = true)")
    with pytest.raises(errors.ChangeDataFeedError) as info:
        sqlext.changes(spark, table, startingVersion=1, **arguments).collect()
    assert info.value.table == table
