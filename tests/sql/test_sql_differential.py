"""Differential test: generated Spark SQL means the same through ``sqlext.sql`` on sqlext tables
as through plain ``spark.sql`` on the same rows in temporary views.

1,000 statements (``differential.py``: literals and escapes such as ``'o''neil'``, ``"..."``,
``\\'``, ``r'...'``, unicode, ``1e3`` / ``1.0BD`` / ``10L`` / ``0x1F``, dates, timestamps and
intervals, functions, casts, CASE, lambdas, aggregates, windows, joins, CTEs, set operations,
subqueries, hints, PIVOT, LATERAL VIEW, GROUP BY / HAVING / ORDER BY / LIMIT, and invalid
statements). Both sides run the byte-identical text with the same table names: sqlext's tables
first, then Spark's views of the same names (which would shadow the tables). Results are
compared as column names plus rows (in order under a top-level ``ORDER BY`` over a unique key,
else as sorted multisets); an error on one side needs an error on the other (its kind may
differ: sqlglot checks some function arities before Spark would, as a syntax error).
"""

from __future__ import annotations

import functools

import pytest
from pyspark.errors import AnalysisException as SparkAnalysisException
from pyspark.errors import ParseException

import sqlext
from sqlext.catalog import Catalog
from sqlext.errors import AnalysisException, ParseError
from sqlext.sql import splice
from tests.sql.differential import T1_DDL, T1_ROWS, T2_DDL, T2_ROWS, cases

SEED, COUNT = 20261125, 1000
SCHEMA = "diff_sql"


def _kind(error: BaseException) -> str:
    if isinstance(error, (ParseError, ParseException)):
        return "syntax"
    if isinstance(error, (AnalysisException, SparkAnalysisException)):
        return "analysis"
    return "runtime"


def _outcomes(run, generated, batch: int = 60) -> list:
    """Per case: ``(columns, rows)``, rows as strings (Spark's cast of the row struct), or
    ``("error", kind, message)``. Results are collected in batches (one Spark job per
    ``batch`` statements: a union of the results, tagged by case); a batch with a failing
    result is collected statement by statement."""
    from pyspark.sql import functions as F

    outcomes: list = [None] * len(generated)
    frames = {}
    for i, case in enumerate(generated):
        try:
            df = run(case.sql)
            frames[i] = df.toDF(*[f"c{n}" for n in range(len(df.columns))]).select(
                F.lit(i).alias("case"), F.struct("*").cast("string").alias("row"))
            outcomes[i] = (tuple(df.columns), [])
        except Exception as exc:  # noqa: BLE001 - an error is an outcome to compare
            outcomes[i] = ("error", _kind(exc), str(exc).splitlines()[0][:300])
    keys = sorted(frames)
    for start in range(0, len(keys), batch):
        chunk = keys[start:start + batch]
        try:
            union = functools.reduce(lambda a, b: a.unionAll(b), [frames[i] for i in chunk])
            collected = [(r[0], r[1]) for r in union.collect()]
        except Exception:  # noqa: BLE001 - find the failing statements one by one
            collected = []
            for i in chunk:
                try:
                    collected += [(r[0], r[1]) for r in frames[i].collect()]
                except Exception as exc:  # noqa: BLE001
                    outcomes[i] = ("error", _kind(exc), str(exc).splitlines()[0][:300])
        for i, row in collected:
            if outcomes[i][0] != "error":
                outcomes[i][1].append(row)
    return outcomes


def _rows(outcome, ordered: bool):
    columns, rows = outcome
    return columns, rows if ordered else sorted(rows, key=repr)


@pytest.fixture(scope="module")
def both(spark):
    """Outcomes of every case: (case, through sqlext, through Spark)."""
    Catalog(spark).create_schema(SCHEMA)
    spark.catalog.setCurrentDatabase(SCHEMA)
    try:
        sources = {"t1": (T1_DDL, T1_ROWS), "t2": (T2_DDL, T2_ROWS)}
        for name, (ddl, data) in sources.items():
            sqlext.sql(spark, f"CREATE OR REPLACE TABLE {name} ({ddl}) USING delta")
            spark.createDataFrame(data, ddl).createOrReplaceTempView("diff_source")
            sqlext.sql(spark, f"INSERT INTO {name} SELECT * FROM diff_source")
            spark.catalog.dropTempView("diff_source")
        generated = cases(SEED, COUNT)
        before = splice.fallbacks
        through_sqlext = _outcomes(lambda sql: sqlext.sql(spark, sql), generated)
        fallbacks = splice.fallbacks - before
        for name, (ddl, data) in sources.items():   # the same rows, as Spark's own views
            spark.createDataFrame(data, ddl).createOrReplaceTempView(name)
        try:
            through_spark = _outcomes(spark.sql, generated)
        finally:
            for name in sources:
                spark.catalog.dropTempView(name)
        yield list(zip(generated, through_sqlext, through_spark)), fallbacks
    finally:
        spark.catalog.setCurrentDatabase("default")


def test_generated_statements_mean_what_spark_means(both):
    outcomes, _ = both
    assert len(outcomes) >= 1000
    differences = []
    for case, mine, spark_s in outcomes:
        if mine[0] == "error" or spark_s[0] == "error":
            if mine[0] != spark_s[0]:   # both raise (sqlglot may see a syntax error first)
                differences.append((case.sql, mine, spark_s))
        elif _rows(mine, case.ordered) != _rows(spark_s, case.ordered):
            differences.append((case.sql, mine, spark_s))
    report = "\n\n".join(f"{sql}\n  sqlext: {m!r:.400}\n  spark:  {s!r:.400}"
                         for sql, m, s in differences[:15])
    assert not differences, f"{len(differences)} of {len(outcomes)} differ:\n{report}"


def test_the_corpus_is_mostly_valid_and_exercises_errors(both):
    """The comparison means something: most statements return rows, some fail on both sides."""
    outcomes, _ = both
    errors = sum(1 for _, _, s in outcomes if s[0] == "error")
    with_rows = sum(1 for _, _, s in outcomes if s[0] != "error" and s[1])
    assert errors >= 40
    assert with_rows >= 0.75 * len(outcomes)
    assert any("'o''neil'" in case.sql and s[0] != "error" for case, _, s in outcomes)


def test_no_statement_falls_back_to_sqlglot_rendering(both):
    """Statements reach Spark as the user's text (the spliced text parsed back to the rewritten
    tree), never as sqlglot's rendering of it (the one statement that once did,
    ``FROM t1 TABLESAMPLE (100 PERCENT)``, now gets its alias after the sample, where Spark's
    grammar puts it)."""
    _, fallbacks = both
    assert fallbacks == 0


def test_every_generated_statement_is_planned_as_the_users_text(spark):
    """The same 1,000 statements, only planned (the table references replaced and the text
    spliced, no Spark job): none falls back to sqlglot's rendering. A quick check of the
    splicer without running the whole differential comparison."""
    from sqlext.sql.parse import parse_statements
    from sqlext.sql.resolve import Resolver
    from sqlext.sql.runner import plan_statement

    Catalog(spark).create_schema(SCHEMA + "_plan")
    spark.catalog.setCurrentDatabase(SCHEMA + "_plan")
    try:
        for name, ddl in (("t1", T1_DDL), ("t2", T2_DDL)):
            sqlext.sql(spark, f"CREATE OR REPLACE TABLE {name} ({ddl}) USING delta")
        planned, fell_back = 0, []
        for case in cases(SEED, COUNT):
            before = splice.fallbacks
            try:
                for stmt in parse_statements(case.sql):
                    plan_statement(Resolver(spark), stmt)
                planned += 1
            except (ParseError, AnalysisException):
                continue   # an invalid statement of the corpus, refused before planning ends
            if splice.fallbacks != before:
                fell_back.append(case.sql)
        assert planned >= 900
        assert fell_back == []
    finally:
        spark.catalog.setCurrentDatabase("default")
