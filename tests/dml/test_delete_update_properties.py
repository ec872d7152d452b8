"""Property test: random tables (partitioned or not, with NULLs, several files, written by
delta-rs) and random DELETE / UPDATE statements (conditions on partition columns only, data
columns only, both, matching nothing, everything, producing NULL).

For every example: the rows after sqlext's statement equal DuckDB running the same statement on
the same rows; deltalake and DuckDB's delta extension read the table identically; deltalake's
change feed of the new version holds exactly the changed rows with the right change types (and
there is no new version when nothing matched); the commit's row metrics agree.
"""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.dml_cases import (changes_of, duckdb_select, expected_changes, latest_version,
                               operation, read_deltalake, rs_table, run_and_expect)
from tests.support.table_checks import assert_readers_agree
from tests.support import assert_same_rows

SMALL = st.integers(-2, 12)

PARTITION_ATOMS = st.one_of(
    st.builds("p = {}".format, st.integers(0, 2)),
    st.builds("p > {}".format, st.integers(0, 2)),
    st.sampled_from(["p IS NULL", "p IS NOT NULL", "p IN (0, 2)", "p <> 1"]),
)
DATA_ATOMS = st.one_of(
    st.builds("v > {}".format, SMALL),
    st.builds("v = {}".format, SMALL),
    st.builds("v <= {}".format, SMALL),
    st.builds("v + id > {}".format, st.integers(0, 30)),
    st.builds("coalesce(v, 0) < {}".format, SMALL),
    st.sampled_from(["v IS NULL", "s = 'a'", "s IS NULL", "s LIKE 'a%'", "id % 3 = 0",
                     "s IN ('a', 'b')", "v IS NOT NULL"]),
)
NULL_ATOMS = st.sampled_from(["v > NULL", "s = NULL", "NOT (p = NULL)", "v + NULL = 1"])
NOTHING = st.sampled_from(["FALSE", "v > 1000", "id < 0", "p = 7"])
EVERYTHING = st.sampled_from(["TRUE", "id >= 0", "1 = 1"])


def combine(atoms):
    """Conditions of up to two connectives over ``atoms``."""
    return st.recursive(atoms, lambda inner: st.one_of(
        st.builds("({}) AND ({})".format, inner, inner),
        st.builds("({}) OR ({})".format, inner, inner),
        st.builds("NOT ({})".format, inner)), max_leaves=3)


CONDITIONS = st.one_of(
    combine(PARTITION_ATOMS),                                            # partition only
    combine(DATA_ATOMS),                                                 # data only
    st.builds("({}) AND ({})".format, PARTITION_ATOMS, combine(DATA_ATOMS)),   # mixed
    st.builds("({}) OR ({})".format, combine(DATA_ATOMS), PARTITION_ATOMS),    # mixed
    st.builds("({}) OR ({})".format, NULL_ATOMS, combine(DATA_ATOMS)),   # NULL-producing
    NULL_ATOMS, NOTHING, EVERYTHING,
)
ASSIGNMENTS = st.sampled_from([
    {"v": "v + 1"}, {"v": "NULL"}, {"s": "s || 'x'"}, {"v": "id", "s": "'z'"},
    {"p": "(p + 1) % 3"}, {"p": "NULL"}, {"v": "CASE WHEN s IS NULL THEN -1 ELSE v * 2 END"},
    {"s": "upper(s)", "p": "v % 3"}, {"p": "2", "v": "p"},
])
ROWS = st.lists(st.tuples(st.sampled_from([None, 0, 1, 2]),
                          st.sampled_from([None, "a", "b", "ab"]),
                          st.one_of(st.none(), SMALL)), min_size=1, max_size=24)


@st.composite
def tables(draw):
    rows = [(i, p, s, v) for i, (p, s, v) in enumerate(draw(ROWS))]
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(rows) - 1)), max_size=2)))
    bounds = [0, *[c for c in cuts if c < len(rows)], len(rows)]
    chunks = [rows[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
    return chunks, draw(st.booleans())


@settings(max_examples=36, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(table=tables(), condition=CONDITIONS, assignments=st.none() | ASSIGNMENTS)
def test_dml_matches_duckdb_and_the_change_feed(spark, tmp_path_factory, table, condition,
                                                assignments):
    chunks, partitioned = table
    path = tmp_path_factory.mktemp("dml_prop") / uuid.uuid4().hex
    rs_table(path, chunks, partition_by=["p"] if partitioned else None)
    version = latest_version(path)
    before = read_deltalake(path)
    matched = duckdb_select(before, f"SELECT * FROM {{t}} WHERE ({condition}) IS TRUE")
    expected = run_and_expect(spark, path, condition, assignments, before)
    after = assert_readers_agree(spark, path, expected)
    if matched.num_rows == 0:
        assert latest_version(path) == version
        return
    assert latest_version(path) == version + 1
    op, _, metrics = operation(path, version + 1)
    if assignments is None:
        assert op == "DELETE" and metrics["numDeletedRows"] == str(matched.num_rows)
    else:
        assert op == "UPDATE" and metrics["numUpdatedRows"] == str(matched.num_rows)
    assert_same_rows(changes_of(path, version + 1),
                     expected_changes(before, after, condition, deleted=assignments is None),
                     sort_by=["id", "_change_type"])
