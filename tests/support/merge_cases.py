"""Helpers for the MERGE tests: run one MERGE statement in sqlext and in DuckDB on the same rows,
and derive the change rows DuckDB implies."""

from __future__ import annotations

import uuid
from collections import Counter

import pyarrow as pa
import pyarrow.compute as pc

import sqlext
from tests.support.dml_cases import SCHEMA, SPARK_SCHEMA, rows_table
from tests.support import duckdb_query, duckdb_table, rows

TARGET, SOURCE = "tgt", "src"


def sqlext_merge(spark, path, source_rows: list[tuple], statement: str):
    """Run ``statement`` (``MERGE INTO tgt AS t USING src AS s ...``) through ``sqlext.sql`` on
    the table at ``path`` and a source view of ``source_rows``; returns the result row."""
    view = f"src_{uuid.uuid4().hex[:8]}"
    spark.createDataFrame(source_rows, SPARK_SCHEMA).createOrReplaceTempView(view)
    text = statement.replace(f"INTO {TARGET} ", f"INTO delta.`{path}` ").replace(
        f"USING {SOURCE} ", f"USING {view} ")
    try:
        return sqlext.sql(spark, text).collect()[0]
    finally:
        spark.catalog.dropTempView(view)


def duckdb_merge(target_rows: list[tuple], source_rows: list[tuple], statement: str
                 ) -> pa.Table:
    """Run ``statement`` in DuckDB on plain tables of the rows and return the target's rows after.

    No ``RETURNING``: DuckDB 1.5.5's ``MERGE ... RETURNING`` crashes the process now and then
    (a string heap allocation in the update sink, segfault or "Information loss on integer
    cast"). Count the actions with :func:`duckdb_changes` and :func:`action_counts`."""
    suffix = uuid.uuid4().hex[:8]
    tgt = duckdb_table(f"tgt_{suffix}", rows_table(target_rows))
    src = duckdb_table(f"src_{suffix}", rows_table(source_rows))
    text = statement.replace(f"INTO {TARGET} ", f"INTO {tgt} ").replace(
        f"USING {SOURCE} ", f"USING {src} ")
    duckdb_query(text)
    after = duckdb_query(f"SELECT * FROM {tgt}")
    duckdb_query(f"DROP TABLE {tgt}")
    duckdb_query(f"DROP TABLE {src}")
    return after


def action_counts(changes: Counter) -> Counter:
    """``Counter`` of ``INSERT``/``UPDATE``/``DELETE`` rows (the names of DuckDB's
    ``merge_action``) in the changes :func:`duckdb_changes` found."""
    kinds = {"insert": "INSERT", "update_preimage": "UPDATE", "delete": "DELETE"}
    out = Counter()
    for (kind, _), n in changes.items():
        if kind in kinds:
            out[kinds[kind]] += n
    return out


def duckdb_changes(target_rows: list[tuple], source_rows: list[tuple], statement: str
                   ) -> Counter:
    """``Counter((change_type, row))`` of the changes ``statement`` makes, found by DuckDB.

    ``statement`` is the tracking variant of the MERGE (see ``render(..., tracking=True)`` in the
    property test): its target has two more columns, ``rid`` (the row's identity) and ``upd``
    (set to true by every UPDATE), so each row's fate is visible in the table afterwards.
    DuckDB's ``RETURNING`` cannot be used for this: it returns zeros for the rows a NOT MATCHED
    BY SOURCE clause updates."""
    suffix = uuid.uuid4().hex[:8]
    before = rows_table(target_rows)
    tracked = before.append_column("rid", pa.array(range(before.num_rows), pa.int64())) \
        .append_column("upd", pa.array([False] * before.num_rows, pa.bool_()))
    tgt = duckdb_table(f"tgt_{suffix}", tracked)
    src = duckdb_table(f"src_{suffix}", rows_table(source_rows))
    duckdb_query(statement.replace(f"INTO {TARGET} ", f"INTO {tgt} ").replace(
        f"USING {SOURCE} ", f"USING {src} "))
    after = duckdb_query(f"SELECT * FROM {tgt}").to_pylist()
    duckdb_query(f"DROP TABLE {tgt}")
    duckdb_query(f"DROP TABLE {src}")
    cols = SCHEMA.names
    old = dict(enumerate(tuple(r[c] for c in cols) for r in before.to_pylist()))
    out = Counter()
    for r in after:
        row = tuple(r[c] for c in cols)
        if r["rid"] is None:
            out[("insert", row)] += 1
        elif r["upd"]:
            out[("update_preimage", old[r["rid"]])] += 1
            out[("update_postimage", row)] += 1
        if r["rid"] is not None:
            old.pop(r["rid"])
    for row in old.values():
        out[("delete", row)] += 1
    normal = Counter()
    for (kind, row), n in out.items():
        normal[(kind, _normal(row))] += n
    return normal


def _normal(row: tuple) -> tuple:
    return rows(pa.Table.from_pylist([dict(zip(SCHEMA.names, row))], schema=SCHEMA))[0]


def actual_changes(cdf: pa.Table) -> Counter:
    """``Counter((change_type, row))`` of a change feed read."""
    out = Counter()
    for kind in set(cdf.column("_change_type").to_pylist()):
        for row in rows(_where(cdf, "_change_type", kind), SCHEMA.names):
            out[(kind, row)] += 1
    return out


def _where(table: pa.Table, column: str, value) -> pa.Table:
    return table.filter(pc.equal(pc.cast(table.column(column), pa.string()), value))
