"""Property test: random targets (NULL keys, partitioned or not, several files), random key-unique
sources and random MERGE statements (every clause kind, with and without conditions, NULL-producing
conditions and values). The same statement runs in sqlext and in DuckDB on the same rows:

- the table after sqlext's MERGE holds DuckDB's rows, and deltalake reads the same;
- deltalake's change feed of the MERGE version holds exactly the changed rows, with their change
  types, as DuckDB finds them (no version when nothing changed, unless delta-spark would commit
  one: see the end of the test);
- the result row counts what DuckDB returned.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlext.engine.merge.command import SINGLE_PASS_CONF, SINGLE_PASS_DEFAULT
from tests.support.dml_cases import changes_of, latest_version, spark_table
from tests.support.merge_cases import (action_counts, actual_changes, duckdb_changes, duckdb_merge,
                                       sqlext_merge)
from tests.support import assert_same_rows, read_deltalake

ON = ["t.id = s.id", "t.id = s.id AND t.p = 1", "t.id = s.id AND s.v > 5",
      "s.id = t.id AND t.p IS NOT NULL"]
CONDITIONS = {
    "matched": ["s.v > 20", "t.v < s.v", "t.s = 'a'", "s.s IS NULL", "t.p = 1",
                "t.v IS NOT NULL AND s.s <> 'b'"],
    "notMatched": ["s.v > 20", "s.s = 'b'", "s.p IS NULL", "s.v IS NULL OR s.v < 10"],
    "notMatchedBySource": ["t.v > 20", "t.s = 'a'", "t.p = 2", "t.v IS NULL"],
}
UPDATE_VALUES = {"v": ["s.v", "t.v + 1", "s.v * 2", "NULL"], "s": ["s.s", "t.s || 'x'", "'z'"],
                 "p": ["s.p", "2"]}
SOURCE_UPDATE_VALUES = {"v": ["t.v + 100", "NULL"], "s": ["'gone'", "t.s || 'y'"], "p": ["0"]}
INSERT_VALUES = {"p": ["s.p", "1"], "s": ["s.s", "'new'"], "v": ["s.v + 5", "NULL"]}

ids = st.one_of(st.none(), st.integers(0, 14))
small = st.one_of(st.none(), st.integers(0, 40))
parts = st.one_of(st.none(), st.integers(0, 2))
strings = st.one_of(st.none(), st.sampled_from(["a", "b", "c"]))
target_rows = st.lists(st.tuples(ids, parts, strings, small), max_size=24)


@st.composite
def source_rows(draw):
    keys = draw(st.lists(st.integers(0, 20), unique=True, max_size=10))
    nulls = draw(st.integers(0, 2))
    return [(k, draw(parts), draw(strings), draw(small)) for k in [*keys, *[None] * nulls]]


COLUMNS = ["id", "p", "s", "v"]
HEADS = {"matched": "WHEN MATCHED", "notMatched": "WHEN NOT MATCHED",
         "notMatchedBySource": "WHEN NOT MATCHED BY SOURCE"}


@st.composite
def assignments(draw, pool: dict[str, list[str]]) -> list[tuple[str, str]]:
    columns = draw(st.lists(st.sampled_from(sorted(pool)), min_size=1, unique=True))
    return [(c, draw(st.sampled_from(pool[c]))) for c in columns]


@st.composite
def insert_values(draw) -> list[tuple[str, str]] | None:
    if draw(st.booleans()):
        return None                                   # INSERT *
    columns = draw(st.lists(st.sampled_from(sorted(INSERT_VALUES)), unique=True))
    return [("id", "s.id")] + [(c, draw(st.sampled_from(INSERT_VALUES[c]))) for c in columns]


@st.composite
def clauses(draw, kind: str) -> list[tuple]:
    """(kind, condition or None, action, assignments or None for *) per clause."""
    n = draw(st.integers(0, 2))
    out = []
    for i in range(n):
        last = i == n - 1
        cond = draw(st.sampled_from(CONDITIONS[kind])) if not last or draw(st.booleans()) \
            else None
        if kind == "notMatched":
            out.append((kind, cond, "insert", draw(insert_values())))
        elif draw(st.integers(0, 2)) == 0:
            out.append((kind, cond, "delete", None))
        elif kind == "matched" and draw(st.booleans()):
            out.append((kind, cond, "update", None))  # UPDATE SET *
        else:
            pool = UPDATE_VALUES if kind == "matched" else SOURCE_UPDATE_VALUES
            out.append((kind, cond, "update", draw(assignments(pool))))
    return out


@st.composite
def merges(draw) -> tuple[str, list[tuple]]:
    per_kind = {kind: draw(clauses(kind)) for kind in CONDITIONS}
    if not any(per_kind.values()):
        per_kind["notMatched"] = [("notMatched", None, "insert", None)]
    # clauses of different kinds interleave; within a kind their order stays
    labels = draw(st.permutations([k for k, whens in per_kind.items() for _ in whens]))
    return draw(st.sampled_from(ON)), [per_kind[k].pop(0) for k in labels]


def render(on: str, whens: list[tuple], tracking: bool = False) -> str:
    """The MERGE statement; ``tracking``: the variant for :func:`duckdb_changes`, whose UPDATEs
    also set ``upd = true`` and whose ``*`` are spelled out (the target has two more columns)."""
    parts = [f"MERGE INTO tgt AS t USING src AS s ON {on}"]
    for kind, cond, action, values in whens:
        head = HEADS[kind] + (f" AND {cond}" if cond else "")
        if action == "delete":
            body = "DELETE"
        elif action == "update":
            if values is None and not tracking:
                body = "UPDATE SET *"
            else:
                values = values or [(c, f"s.{c}") for c in COLUMNS]
                body = "UPDATE SET " + ", ".join(f"{c} = {v}" for c, v in
                                                 values + ([("upd", "true")] if tracking else []))
        elif values is None and not tracking:
            body = "INSERT *"
        else:
            values = values or [(c, f"s.{c}") for c in COLUMNS]
            body = (f"INSERT ({', '.join(c for c, _ in values)}) "
                    f"VALUES ({', '.join(v for _, v in values)})")
        parts.append(f"{head} THEN {body}")
    return " ".join(parts)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(target=target_rows, source=source_rows(), merge=merges(),
       partitioned=st.booleans(), files=st.integers(1, 3), two_pass=st.booleans())
def test_merge_matches_duckdb(spark, tmp_path_factory, target, source, merge, partitioned,
                              files, two_pass):
    statement = render(*merge)
    path = tmp_path_factory.mktemp("merge") / "t"
    spark_table(spark, path, target, partition_by=["p"] if partitioned else None, files=files)
    expected = duckdb_merge(target, source, statement)
    changes = duckdb_changes(target, source, render(*merge, tracking=True))

    # both execution paths: one join cached (small candidate sets), or two joins
    spark.conf.set(SINGLE_PASS_CONF, "0" if two_pass else str(SINGLE_PASS_DEFAULT))
    try:
        result = sqlext_merge(spark, path, source, statement)
    finally:
        spark.conf.unset(SINGLE_PASS_CONF)

    after = read_deltalake(path)
    assert_same_rows(after, expected, sort_by=["id"])
    actions = action_counts(changes)
    assert (result.num_inserted_rows, result.num_updated_rows, result.num_deleted_rows) == (
        actions["INSERT"], actions["UPDATE"], actions["DELETE"]), statement
    assert result.num_affected_rows == actions.total()
    if actions.total() == 0:
        # as delta-spark 4.4 (tests/deltaspark/test_deltaspark_empty_commits.py): a MERGE that
        # changes nothing commits when its join keeps target rows: every row with a NOT MATCHED
        # BY SOURCE clause, matched rows with both WHEN MATCHED and WHEN NOT MATCHED clauses
        kinds = {w[0] for w in merge[1]}
        reaches = bool(target) and ("notMatchedBySource" in kinds or (
            {"matched", "notMatched"} <= kinds and _any_match(merge[0], target, source)))
        assert latest_version(path) == (1 if reaches else 0), statement
        return
    assert latest_version(path) == 1
    assert actual_changes(changes_of(path, 1)) == changes, statement


def _any_match(on: str, target: list[tuple], source: list[tuple]) -> bool:
    """Whether the ON condition (one of :data:`ON`) holds for a target and a source row (rows are
    (id, p, s, v); NULL never compares)."""
    def holds(t, s) -> bool:
        if t[0] is None or s[0] is None or t[0] != s[0]:
            return False
        if on.endswith("t.p = 1"):
            return t[1] == 1
        if on.endswith("s.v > 5"):
            return s[3] is not None and s[3] > 5
        if on.endswith("t.p IS NOT NULL"):
            return t[1] is not None
        return True
    assert on in ON
    return any(holds(t, s) for t in target for s in source)
