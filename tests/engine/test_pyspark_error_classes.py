"""Issue 27: sqlext's errors are pyspark's exception classes too, with delta-spark's conditions.

After ``sqlext.install(spark)``, delta-spark code that catches ``pyspark.errors.AnalysisException``
(``ParseException``, ``IllegalArgumentException``, ``UnsupportedOperationException``,
``PySparkException`` for commit conflicts) catches what sqlext raises, and ``getCondition()`` /
``getSqlState()`` answer delta-spark's condition and SQLSTATE. The cases and the values expected
are :data:`tests.support.error_cases.CASES` (delta-spark 4.4's, measured; the oracle test
``tests/deltaspark/test_deltaspark_error_classes.py`` checks them against delta-spark again).

Note: ``delta.exceptions`` (the compat package, another module's work) binds delta-spark's names to
:mod:`sqlext.errors`' classes; :func:`test_delta_exceptions_names_catch_sqlext_conflicts` checks it
where that package is importable.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import uuid

import pytest
from pyspark.errors import (AnalysisException, IllegalArgumentException, ParseException,
                            PySparkException, UnsupportedOperationException)

import sqlext
from sqlext import errors
from tests.support import error_cases



def _run(spark, case, tmp_path):
    code = error_cases.program(case, str(tmp_path / "t"), f"t_{uuid.uuid4().hex[:8]}")
    return error_cases.run_here(spark, code)


@pytest.mark.parametrize("case", error_cases.CASES, ids=lambda c: c.name)
def test_delta_spark_code_catches_what_sqlext_raises(drop_in, tmp_path, case):
    got = _run(drop_in, case, tmp_path)
    assert got is not None, "nothing was raised"
    # every pyspark class delta-spark's error is an instance of (sqlext's may be more: e.g. an
    # IllegalArgumentException that was a sqlext AnalysisException stays one)
    assert set(case.classes) <= set(got["classes"]), got
    assert (got["condition"], got["sqlstate"]) == (case.condition, case.sqlstate), got


def test_except_clauses_as_delta_spark_users_write_them(drop_in, tmp_path):
    spark, path = drop_in, str(tmp_path / "t")
    spark.createDataFrame([(1, "a")], "id long, v string").write.format("delta").save(path)
    try:
        spark.range(1).write.format("delta").save(path)
    except AnalysisException as e:
        assert e.getCondition() == "DELTA_PATH_EXISTS" and e.getSqlState() == "42K04"
        assert isinstance(e, errors.TableAlreadyExistsError)
        assert e.getMessageParameters() == {"path": path}
    try:
        spark.sql(f"SELECT * FROM delta.`{path}` VERSION AS OF 99").collect()
    except AnalysisException as e:
        assert e.getCondition() == "DELTA_VERSION_NOT_FOUND"
        assert (e.table, e.version) == (path, 99)           # structured fields
        assert e.getMessageParameters()["latest"] == "0"
    try:
        spark.sql(f"DELETE FROM delta.`{path}` WHERE id = = 1")
    except ParseException as e:
        assert e.getCondition() == "PARSE_SYNTAX_ERROR" and e.getSqlState() == "42601"
    try:
        spark.read.format("delta").option("versionAsOf", "one").load(path)
    except IllegalArgumentException as e:
        assert e.getCondition() == "DELTA_TIME_TRAVEL_INVALID_BEGIN_VALUE"
    source = spark.createDataFrame([(1, "x"), (1, "y")], "id long, v string")
    try:
        (sqlext.DeltaTable.forPath(spark, path).alias("t")
         .merge(source.alias("s"), "t.id = s.id").whenMatchedUpdateAll().execute())
    except UnsupportedOperationException as e:
        assert e.getCondition() == "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"
        assert isinstance(e, errors.MultipleSourceRowMatchError)


def test_a_commit_conflict_is_a_pyspark_exception_with_delta_sparks_condition(drop_in, tmp_path):
    got = error_cases.run_here(drop_in, error_cases.concurrent_program(
        error_cases.SQLEXT_CONCURRENT_APPEND, str(tmp_path / "t")))
    assert got["type"] == "ConcurrentAppendException"
    assert "PySparkException" in got["classes"] and "AnalysisException" not in got["classes"]
    assert (got["condition"], got["sqlstate"]) == ("DELTA_CONCURRENT_APPEND.WITHOUT_HINT", "2D521")


def test_delta_exceptions_names_catch_sqlext_conflicts():
    try:
        from delta import exceptions as delta_exceptions
    except ImportError:
        pytest.skip("no delta.exceptions here")
    if delta_exceptions.ConcurrentAppendException is not errors.ConcurrentAppendException:
        pytest.skip("delta.exceptions is not sqlext's compat package")
    with pytest.raises(delta_exceptions.ConcurrentAppendException) as err:
        raise errors.ConcurrentAppendException("conflict", table="t", version=3)
    assert isinstance(err.value, PySparkException)


def test_spark_errors_keep_sparks_condition(drop_in):
    with pytest.raises(AnalysisException) as err:
        drop_in.sql("SELECT nope FROM range(1)").collect()
    assert err.value.getCondition() == "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    assert err.value.getSqlState() == "42703"
    assert err.value.getMessageParameters()["objectName"] == "`nope`"


# --- the classes themselves (no Spark job) -----------------------------------------------------


def _classes():
    found, stack = [], [errors.SqlextError]
    while stack:
        cls = stack.pop()
        found.append(cls)
        stack.extend(cls.__subclasses__())
    return found


def test_each_class_is_the_pyspark_class_it_names():
    import pyspark.errors

    import sqlext.engine  # noqa: F401 - binds the classes
    for cls in _classes():
        if cls.pyspark_class is not None:
            assert issubclass(cls, getattr(pyspark.errors, cls.pyspark_class)), cls
        mro = cls.__mro__       # SqlextError's methods (str, getCondition, ...) come first
        theirs = [mro.index(c) for c in mro if c.__module__.startswith("pyspark.")]
        assert mro.index(errors.SqlextError) < min(theirs, default=len(mro)), mro
    assert not issubclass(errors.SqlextError, PySparkException)
    assert not issubclass(errors.CorruptLogError, PySparkException)
    assert issubclass(errors.ParseError, ParseException)
    assert issubclass(errors.VacuumRetentionError, IllegalArgumentException)
    assert issubclass(errors.MultipleSourceRowMatchError, UnsupportedOperationException)


def test_fields_defaults_and_pysparks_accessors():
    err = errors.TableAlreadyExistsError("table t already exists", table="t", version=4)
    assert str(err) == "table t already exists"          # the message as it was
    assert err.getMessage() == "[DELTA_PATH_EXISTS] table t already exists"
    assert (err.getCondition(), err.getErrorClass(), err.getSqlState()) == (
        "DELTA_PATH_EXISTS", "DELTA_PATH_EXISTS", "42K04")
    assert (err.table, err.version, err.getMessageParameters()) == ("t", 4, {})
    named = errors.TableAlreadyExistsError("x", error_class="TABLE_OR_VIEW_ALREADY_EXISTS")
    assert named.getSqlState() == "42P07"                # looked up
    assert errors.AnalysisException("x").getCondition() is None
    assert errors.UnsupportedOperationError("x").getSqlState() == "0A000"
    copy = pickle.loads(pickle.dumps(errors.VersionNotFoundException(
        "v", table="t", version=2, error_class="DELTA_CANNOT_RESTORE_TABLE_VERSION")))
    assert (str(copy), copy.table, copy.version, copy.getCondition(), copy.getSqlState()) == (
        "v", "t", 2, "DELTA_CANNOT_RESTORE_TABLE_VERSION", "22003")


def test_the_kernel_classes_stay_pure_until_the_engine_is_imported():
    code = ("import sys\n"
            "import sqlext.errors as E, sqlext.log.table\n"
            "assert not [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')]\n"
            "assert E.TableNotFoundError.__bases__ == (E.SqlextError,)\n"
            "import sqlext.engine, pyspark.errors as P\n"
            "assert issubclass(E.TableNotFoundError, P.AnalysisException)\n"
            "try:\n"
            "    sqlext.log.table.DeltaLog('/nonexistent/t').snapshot()\n"
            "except P.AnalysisException as e:\n"
            "    assert e.getCondition() == 'DELTA_MISSING_DELTA_TABLE', e.getCondition()\n"
            "else:\n"
            "    raise AssertionError('no error')\n")
    subprocess.run([sys.executable, "-c", code], check=True)
