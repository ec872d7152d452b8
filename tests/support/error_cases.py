"""Failing delta-spark calls, run as written on delta-spark (the oracle) and on sqlext after
``sqlext.install(spark)``, and what each raised.

Each :class:`ErrorCase` is Python text in delta-spark's idiom (``spark``, ``DeltaTable``, ``F`` in
scope; ``path`` a fresh directory per case, ``name`` a fresh table name). :func:`program` wraps a
case so that it leaves in ``result`` what :func:`describe` makes of the exception: which of
pyspark's exception classes it is an instance of, its error condition and SQLSTATE. The same text
runs in the delta-spark worker (``DeltaSpark.exec``) and in this process (:func:`run_here`).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

#: pyspark's classes a delta-spark user catches (``pyspark.errors``); PySparkException is the base
#: of delta's python concurrency exceptions (``delta.exceptions``).
PYSPARK_CLASSES = ("AnalysisException", "ParseException", "IllegalArgumentException",
                   "UnsupportedOperationException", "PySparkException")


def describe(exc: BaseException) -> dict:
    """What an exception is to a caller: ``classes`` (the :data:`PYSPARK_CLASSES` it is an
    instance of, named again inside: this function's text runs in the delta-spark worker),
    ``condition`` and ``sqlstate`` (pyspark's API; for an error py4j raised, the Java
    exception's; for delta's concurrency exceptions, which have no condition in Python, the
    ``[CONDITION]`` their message starts with), ``java_class``, ``type`` and the message's
    first line."""
    import re

    import pyspark.errors

    def call(obj, name):
        try:
            return getattr(obj, name)() if hasattr(obj, name) else None
        except Exception:  # noqa: BLE001 - a condition pyspark cannot look up
            return None

    classes = [n for n in ("AnalysisException", "ParseException", "IllegalArgumentException",
                           "UnsupportedOperationException", "PySparkException")
               if isinstance(exc, getattr(pyspark.errors, n))]
    condition, sqlstate = call(exc, "getCondition"), call(exc, "getSqlState")
    java = getattr(exc, "java_exception", None)
    java_class = None
    if java is not None:
        java_class = str(java.getClass().getName())
        condition = condition or call(java, "getErrorClass")
        sqlstate = sqlstate or call(java, "getSqlState")
    message = str(exc) if java is None else str(java.getMessage())
    found = re.match(r"\s*\[([A-Z_.]+)\]", message)
    if condition is None and found:
        condition = found.group(1)
    return {"classes": classes, "condition": condition, "sqlstate": sqlstate,
            "java_class": java_class, "type": type(exc).__name__,
            "message": message.strip().splitlines()[0][:300] if message.strip() else ""}


@dataclass(frozen=True)
class ErrorCase:
    """``setup`` then ``action`` (which must raise); ``condition``/``sqlstate``: delta-spark
    4.4's, as measured (the oracle test checks them again)."""

    name: str
    setup: str
    action: str
    condition: str
    sqlstate: str
    classes: tuple[str, ...] = ()     # pyspark classes delta-spark's error is an instance of


_TABLE = ("spark.createDataFrame([(1, 'a'), (2, 'b'), (3, 'c')], 'id long, v string')"
          ".write.format('delta').save(path)\n")
_TWO_VERSIONS = _TABLE + ("spark.createDataFrame([(4, 'd')], 'id long, v string').write"
                          ".format('delta').mode('append').save(path)\n")
_T = "f'delta.`{path}`'"
_AE = ("AnalysisException", "PySparkException")
_PE = ("AnalysisException", "ParseException", "PySparkException")
_IAE = ("IllegalArgumentException", "PySparkException")

CASES: tuple[ErrorCase, ...] = (
    ErrorCase("unresolved column in a query", _TABLE,
              f"spark.sql('SELECT nope FROM ' + {_T}).collect()",
              "UNRESOLVED_COLUMN.WITH_SUGGESTION", "42703", _AE),
    ErrorCase("unresolved column in DELETE", _TABLE,
              f"spark.sql('DELETE FROM ' + {_T} + ' WHERE nope = 1')",
              "UNRESOLVED_COLUMN.WITH_SUGGESTION", "42703", _AE),
    ErrorCase("unresolved column in DeltaTable.delete", _TABLE,
              "DeltaTable.forPath(spark, path).delete('nope = 1')",
              "UNRESOLVED_COLUMN.WITH_SUGGESTION", "42703", _AE),
    ErrorCase("VERSION AS OF a version that does not exist", _TWO_VERSIONS,
              f"spark.sql('SELECT * FROM ' + {_T} + ' VERSION AS OF 99').collect()",
              "DELTA_VERSION_NOT_FOUND", "22003", _AE),
    ErrorCase("versionAsOf a version that does not exist", _TWO_VERSIONS,
              "spark.read.format('delta').option('versionAsOf', 99).load(path).collect()",
              "DELTA_VERSION_NOT_FOUND", "22003", _AE),
    ErrorCase("VERSION AS OF a string", _TWO_VERSIONS,
              f"spark.sql('SELECT * FROM ' + {_T} + \" VERSION AS OF 'abc'\").collect()",
              "DELTA_TIME_TRAVEL_INVALID_BEGIN_VALUE", "42604", _IAE),
    ErrorCase("versionAsOf not a number", _TWO_VERSIONS,
              "spark.read.format('delta').option('versionAsOf', 'abc').load(path).collect()",
              "DELTA_TIME_TRAVEL_INVALID_BEGIN_VALUE", "42604", _IAE),
    ErrorCase("versionAsOf and timestampAsOf", _TWO_VERSIONS,
              "spark.read.format('delta').option('versionAsOf', 0)"
              ".option('timestampAsOf', '2020-01-01').load(path).collect()",
              "DELTA_ONEOF_IN_TIMETRAVEL", "42601", _IAE),
    ErrorCase("TIMESTAMP AS OF after the latest commit", _TWO_VERSIONS,
              f"spark.sql('SELECT * FROM ' + {_T} + \" TIMESTAMP AS OF '2099-01-01'\").collect()",
              "DELTA_TIMESTAMP_GREATER_THAN_COMMIT", "42816", _AE),
    ErrorCase("TIMESTAMP AS OF before the first commit", _TWO_VERSIONS,
              f"spark.sql('SELECT * FROM ' + {_T} + \" TIMESTAMP AS OF '1990-01-01'\").collect()",
              "DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION", "42816", _AE),
    ErrorCase("save onto an existing table", _TABLE,
              "spark.range(1).write.format('delta').save(path)",
              "DELTA_PATH_EXISTS", "42K04", _AE),
    ErrorCase("append with another type", _TABLE,
              "spark.createDataFrame([(5, 5)], 'id long, v int').write.format('delta')"
              ".mode('append').save(path)",
              "DELTA_FAILED_TO_MERGE_FIELDS", "22005", _AE),
    ErrorCase("append with a new column", _TABLE,
              "spark.createDataFrame([(5, 'e', 1)], 'id long, v string, w int').write"
              ".format('delta').mode('append').save(path)",
              "DELTA_METADATA_MISMATCH", "42KDG", _AE),
    ErrorCase("append with other partition columns", _TABLE,
              "spark.createDataFrame([(5, 'e')], 'id long, v string').write.format('delta')"
              ".mode('append').partitionBy('v').save(path)",
              "DELTA_METADATA_MISMATCH", "42KDG", _AE),
    ErrorCase("replaceWhere broken by the data", _TABLE,
              "spark.createDataFrame([(10, 'x')], 'id long, v string').write.format('delta')"
              ".mode('overwrite').option('replaceWhere', 'id < 5').save(path)",
              "DELTA_REPLACE_WHERE_MISMATCH", "44000", _AE),
    ErrorCase("DeltaTable.forPath on a missing path", "",
              "DeltaTable.forPath(spark, path + '/nope')",
              "DELTA_MISSING_DELTA_TABLE", "42P01", _AE),
    ErrorCase("DeltaTable.forPath on parquet files", "spark.range(2).write.parquet(path)",
              "DeltaTable.forPath(spark, path)",
              "DELTA_MISSING_DELTA_TABLE", "42P01", _AE),
    ErrorCase("DeltaTable.forName of an unknown table", "",
              "DeltaTable.forName(spark, name)",
              "DELTA_MISSING_DELTA_TABLE", "42P01", _AE),
    ErrorCase("query of an unknown table", "",
              "spark.sql('SELECT * FROM ' + name).collect()",
              "TABLE_OR_VIEW_NOT_FOUND", "42P01", _AE),
    ErrorCase("DELETE of an unknown table", "",
              "spark.sql('DELETE FROM ' + name + ' WHERE id = 1')",
              "TABLE_OR_VIEW_NOT_FOUND", "42P01", _AE),
    ErrorCase("DELETE on parquet files", "spark.range(2).write.parquet(path)",
              f"spark.sql('DELETE FROM ' + {_T} + ' WHERE id = 1')",
              "DELTA_TABLE_NOT_FOUND", "42P01", _AE),
    ErrorCase("syntax error in a query", _TABLE,
              f"spark.sql('SELECT * FROM ' + {_T} + ' WHERE id = = 1')",
              "PARSE_SYNTAX_ERROR", "42601", _PE),
    ErrorCase("syntax error in DELETE", _TABLE,
              f"spark.sql('DELETE FROM ' + {_T} + ' WHERE id = = 1')",
              "PARSE_SYNTAX_ERROR", "42601", _PE),
    ErrorCase("MERGE with several source rows for one target row", _TABLE,
              f"spark.sql('MERGE INTO ' + {_T} + ' t USING (SELECT 1 AS id UNION ALL SELECT 1) s "
              "ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = \\'m\\'')",
              "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE", "21506",
              ("UnsupportedOperationException", "PySparkException")),
    ErrorCase("UPDATE with a subquery", _TABLE,
              f"spark.sql('UPDATE ' + {_T} + \" SET v = 'x' WHERE id IN (SELECT 1)\")",
              "DELTA_UNSUPPORTED_SUBQUERY", "0AKDC", _AE),
    ErrorCase("CHECK constraint broken by an INSERT", _TABLE
              + f"spark.sql('ALTER TABLE ' + {_T} + ' ADD CONSTRAINT pos CHECK (id >= 0)')\n",
              f"spark.sql('INSERT INTO ' + {_T} + \" VALUES (-1, 'x')\")",
              "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", "23001"),
    ErrorCase("new CHECK constraint broken by existing rows", _TABLE,
              f"spark.sql('ALTER TABLE ' + {_T} + ' ADD CONSTRAINT big CHECK (id > 100)')",
              "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION", "23512", _AE),
    ErrorCase("CREATE TABLE of an existing name",
              "spark.sql(f\"CREATE TABLE {name} (id BIGINT) USING delta LOCATION '{path}'\")",
              "spark.sql(f'CREATE TABLE {name} (id BIGINT) USING delta')",
              "TABLE_OR_VIEW_ALREADY_EXISTS", "42P07", _AE),
    ErrorCase("RESTORE to a version that does not exist", _TWO_VERSIONS,
              f"spark.sql('RESTORE TABLE ' + {_T} + ' TO VERSION AS OF 99')",
              "DELTA_CANNOT_RESTORE_TABLE_VERSION", "22003", _AE),
    ErrorCase("VACUUM with a retention below the table's", _TABLE
              # the session's own setting is put back afterwards (the shared test session has
              # none; the oracle's is false): a case must leave no setting behind
              + "check = 'spark.databricks.delta.retentionDurationCheck.enabled'\n"
              + "before = spark.conf.get(check, None)\n"
              + "spark.conf.set(check, 'true')\n",
              "try:\n"
              f"    spark.sql('VACUUM ' + {_T} + ' RETAIN 0 HOURS')\n"
              "finally:\n"
              "    spark.conf.unset(check) if before is None else spark.conf.set(check, before)",
              "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT", "22003", _IAE),
    ErrorCase("change feed of a table without one",   # sqlext's writes enable it by default
              f"spark.sql('CREATE TABLE ' + {_T} + ' (id BIGINT, v STRING) USING delta "
              "TBLPROPERTIES (delta.enableChangeDataFeed = false)')\n"
              f"spark.sql('INSERT INTO ' + {_T} + \" VALUES (1, 'a')\")\n",
              "spark.read.format('delta').option('readChangeFeed', 'true')"
              ".option('startingVersion', 0).load(path).collect()",
              "DELTA_MISSING_CHANGE_DATA", "KD002", _AE),
    ErrorCase("change feed from after the latest version", _TWO_VERSIONS
              + f"spark.sql('ALTER TABLE ' + {_T} + "
                "' SET TBLPROPERTIES (delta.enableChangeDataFeed = true)')\n",
              "spark.read.format('delta').option('readChangeFeed', 'true')"
              ".option('startingVersion', 99).load(path).collect()",
              "DELTA_CDC_START_VERSION_AFTER_LATEST", "22003", _IAE),
    ErrorCase("change feed ending before it starts", _TWO_VERSIONS
              + f"spark.sql('ALTER TABLE ' + {_T} + "
                "' SET TBLPROPERTIES (delta.enableChangeDataFeed = true)')\n",
              "spark.read.format('delta').option('readChangeFeed', 'true')"
              ".option('startingVersion', 2).option('endingVersion', 1).load(path).collect()",
              "DELTA_INVALID_CDC_RANGE", "22003", _IAE),
    ErrorCase("txnVersion without txnAppId", _TABLE,
              "spark.createDataFrame([(5, 'e')], 'id long, v string').write.format('delta')"
              ".mode('append').option('txnVersion', 1).save(path)",
              "DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS", "42616", _IAE),
    ErrorCase("DROP COLUMN without column mapping", _TABLE,
              f"spark.sql('ALTER TABLE ' + {_T} + ' DROP COLUMN v')",
              "DELTA_UNSUPPORTED_DROP_COLUMN", "0AKDC", _AE),
    ErrorCase("MERGE with an unconditional WHEN MATCHED before another", _TABLE,
              f"spark.sql('MERGE INTO ' + {_T} + ' t USING (SELECT 1L AS id) s ON t.id = s.id '"
              "' WHEN MATCHED THEN DELETE WHEN MATCHED THEN UPDATE SET v = 1')",
              "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION", "42613", _PE),
    ErrorCase("MERGE with an unconditional WHEN NOT MATCHED before another", _TABLE,
              f"spark.sql('MERGE INTO ' + {_T} + ' t USING (SELECT 9L AS id, 1 AS v) s '"
              "' ON t.id = s.id WHEN NOT MATCHED THEN INSERT *'"
              "' WHEN NOT MATCHED AND s.id > 1 THEN INSERT *')",
              "NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION", "42613", _PE),
    # the parser's error comes before the source's missing version is looked up
    ErrorCase("MERGE with an unconditional NOT MATCHED BY SOURCE before another", _TABLE,
              f"spark.sql('MERGE INTO ' + {_T} + ' t USING (SELECT * FROM ' + {_T} + "
              "' VERSION AS OF 99) s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE'"
              "' WHEN NOT MATCHED BY SOURCE AND t.id > 1 THEN DELETE')",
              "NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION", "42613", _PE),
    ErrorCase("merge builder with an unconditional whenMatched before another", _TABLE,
              "DeltaTable.forPath(spark, path).alias('t').merge(spark.createDataFrame("
              "[(1, 'x')], 'id long, v string').alias('s'), 't.id = s.id')"
              ".whenMatchedDelete().whenMatchedUpdateAll().execute()",
              "DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION", "42601", _AE),
    ErrorCase("merge builder with an unconditional whenNotMatched before another", _TABLE,
              "DeltaTable.forPath(spark, path).alias('t').merge(spark.createDataFrame("
              "[(9, 'x')], 'id long, v string').alias('s'), 't.id = s.id')"
              ".whenNotMatchedInsertAll().whenNotMatchedInsertAll('s.id > 1').execute()",
              "DELTA_NON_LAST_NOT_MATCHED_CLAUSE_OMIT_CONDITION", "42601", _AE),
    ErrorCase("merge builder with an unconditional whenNotMatchedBySource before another", _TABLE,
              "DeltaTable.forPath(spark, path).alias('t').merge(spark.createDataFrame("
              "[(9, 'x')], 'id long, v string').alias('s'), 't.id = s.id')"
              ".whenNotMatchedBySourceDelete().whenNotMatchedBySourceDelete('t.id > 1')"
              ".execute()",
              "DELTA_NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION", "42601", _AE),
    ErrorCase("CHANGE COLUMN renaming a column", _TABLE,
              f"spark.sql('ALTER TABLE ' + {_T} + ' CHANGE COLUMN v w STRING')",
              "_LEGACY_ERROR_TEMP_0034", None, _PE),
    ErrorCase("CHANGE COLUMN renaming a nested field", _TABLE
              + f"spark.sql('ALTER TABLE ' + {_T} + ' ADD COLUMNS (s STRUCT<x: INT>)')\n",
              f"spark.sql('ALTER TABLE ' + {_T} + ' CHANGE COLUMN s.x z INT')",
              "_LEGACY_ERROR_TEMP_0034", None, _PE),
    ErrorCase("CHANGE COLUMN with NOT NULL", _TABLE,
              f"spark.sql('ALTER TABLE ' + {_T} + ' CHANGE COLUMN v v STRING NOT NULL')",
              "_LEGACY_ERROR_TEMP_0034", None, _PE),
    ErrorCase("CHANGE COLUMN of a nested field with NOT NULL", _TABLE
              + f"spark.sql('ALTER TABLE ' + {_T} + ' ADD COLUMNS (s STRUCT<x: INT>)')\n",
              f"spark.sql('ALTER TABLE ' + {_T} + ' CHANGE COLUMN s.x x INT NOT NULL')",
              "_LEGACY_ERROR_TEMP_0034", None, _PE),
)

#: The concurrency case on delta-spark (its own Scala API, through py4j): a transaction reads the
#: whole table, another writer appends, then the first commits the removal of a file it read.
#: delta-spark's Python ``ConcurrentAppendException`` has no condition or SQLSTATE of its own; its
#: message starts with the condition, and the SQLSTATE is that of ``DELTA_CONCURRENT_APPEND``
#: (2D521, delta-spark's error classes).
DELTA_CONCURRENT_APPEND = """
jvm = spark._jvm
spark.createDataFrame([(1, 'a')], 'id long, v string').write.format('delta').save(path)
log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
txn = log.startTransaction()
files = txn.filterFiles()
spark.createDataFrame([(2, 'b')], 'id long, v string').write.format('delta') \
    .mode('append').save(path)
removes = jvm.java.util.ArrayList()
removes.add(files.head().remove())
actions = jvm.scala.jdk.javaapi.CollectionConverters.asScala(removes).toSeq()
operation = getattr(getattr(jvm.org.apache.spark.sql.delta, 'DeltaOperations$ManualUpdate$'),
                    'MODULE$')
try:
    txn.commit(actions, operation)
except Exception as exc:
    result = describe(exc)
"""


#: The same conflict on sqlext: its kernel's transaction reads the whole table, another writer
#: appends, then the first commits the removal of a file it read.
SQLEXT_CONCURRENT_APPEND = """
from sqlext.log.table import DeltaLog
spark.createDataFrame([(1, 'a')], 'id long, v string').write.format('delta').save(path)
log = DeltaLog(path)
txn = log.start_transaction()
txn.read_whole_table()
read = log.snapshot().files
spark.createDataFrame([(2, 'b')], 'id long, v string').write.format('delta') \
    .mode('append').save(path)
try:
    txn.commit([read[0].remove(0)], 'DELETE')
except Exception as exc:
    result = describe(exc)
"""


def concurrent_program(text: str, path: str) -> str:
    """:data:`DELTA_CONCURRENT_APPEND` or :data:`SQLEXT_CONCURRENT_APPEND` as a program like
    :func:`program`'s."""
    return f"{inspect.getsource(describe)}\npath = {path!r}\nresult = None\n{text}"


def program(case: ErrorCase, path: str, name: str) -> str:
    """The Python text that runs ``case`` and leaves :func:`describe` of its error in
    ``result`` (None when nothing was raised)."""
    action = "\n".join("    " + line for line in case.action.splitlines())
    return (f"{inspect.getsource(describe)}\n"
            f"path, name = {path!r}, {name!r}\n"
            f"{case.setup}\n"
            "result = None\n"
            "try:\n"
            f"{action}\n"
            "except Exception as exc:\n"
            "    result = describe(exc)\n")


def run_here(spark, code: str) -> dict | None:
    """Run a :func:`program` in this process on ``spark`` (sqlext's ``DeltaTable`` in scope)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    import sqlext

    scope = {"spark": spark, "DeltaTable": sqlext.DeltaTable, "F": F, "pa": pa, "result": None}
    exec(code, scope)  # noqa: S102 - test cases from this module
    return scope["result"]
