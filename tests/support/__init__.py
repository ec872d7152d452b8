"""Shared test harness for sqlext.

Import from here (``from tests.support import read_deltalake, assert_same_rows``) or from the
submodules:

- :mod:`tests.support.readers`  independent readers (delta-rs ``deltalake``, DuckDB's delta
  extension) returning ``pyarrow.Table``; a cached DuckDB connection for computing expected rows.
- :mod:`tests.support.fixtures` the Delta fixture tables (tests/fixtures) and ``copy_fixture``.
- :mod:`tests.support.compare`  ``assert_same_rows`` / ``rows``: multiset comparison of rows
  across engines, with the type differences that legitimately occur between them normalised.
- :mod:`tests.support.spark`    the one place that builds the test SparkSession; ``spark_conf``
  sets Spark settings for a block.
- :mod:`tests.support.table_checks`   readers agreeing on a table's rows, a commit's actions,
  a table's on-disk state (what a failed write must leave unchanged).
- :mod:`tests.support.kernel_tables`  tables built with ``sqlext.log`` alone (no Spark).
- :mod:`tests.support.dml_cases`      DELETE/UPDATE tables and what DuckDB expects of them.
- :mod:`tests.support.merge_cases`    one MERGE run in sqlext and in DuckDB on the same rows.
- :mod:`tests.support.empty_commit_cases`  statements that write or change no row: which commit.
- :mod:`tests.support.lazy_clause_cases`   clause values that fail for rows the clause skips.
- :mod:`tests.support.change_feeds`   hand-built histories and change feed reads to compare.
- :mod:`tests.support.fault_ops`      the fault tests' operations, journal and replay.
- :mod:`tests.support.histories`      a table's history from SQL and Python steps.

Pytest fixtures (``spark``, ``table_path``, ``fixture_table``) live in ``tests/conftest.py``.
"""

from tests.support.compare import assert_same_rows, rows
from tests.support.fixtures import FIXTURES_DIR, copy_fixture, fixture_names
from tests.support.readers import (
    deltalake_add_paths,
    deltalake_cdf,
    duckdb_connection,
    duckdb_query,
    duckdb_table,
    read_deltalake,
    read_duckdb,
)

__all__ = [
    "FIXTURES_DIR",
    "assert_same_rows",
    "copy_fixture",
    "deltalake_add_paths",
    "deltalake_cdf",
    "duckdb_connection",
    "duckdb_query",
    "duckdb_table",
    "fixture_names",
    "read_deltalake",
    "read_duckdb",
    "rows",
]
