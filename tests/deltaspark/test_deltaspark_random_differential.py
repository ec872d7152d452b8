"""The seeded random differential tester, quick seed set: random tables and statements
(:mod:`tests.support.differential`) run by sqlext and delta-spark 4.4, compared after every
statement (outcome, error condition, result rows, version, table rows, change feed). It runs
with ``./test.sh`` (tests/deltaspark); each seed is one batch to the delta-spark worker, run while
sqlext runs the same statements.

The long run is ``scripts/differential.py --seeds N --statements M``. Each difference it has
found that is not fixed is in ``KNOWN_DISAGREEMENTS`` with its reason and a named test below
showing both engines' behaviour.
"""

from __future__ import annotations

import pytest

from tests.support.compare import rows as normalised_rows
from tests.support.differential import (
    KNOWN_DISAGREEMENTS,
    Sequence,
    TableSpec,
    compare,
    make_sequence,
    run_both,
    rows_at,
    run_pair,
)

QUICK_SEEDS = [1, 2, 3]
QUICK_STATEMENTS = 10


def test_sequences_are_reproducible_and_cover_every_statement_kind():
    first = [make_sequence(seed, QUICK_STATEMENTS).statements for seed in QUICK_SEEDS]
    assert first == [make_sequence(seed, QUICK_STATEMENTS).statements for seed in QUICK_SEEDS]
    text = "\n".join(s for seed in range(40) for s in make_sequence(seed, 20).statements)
    for part in ("INSERT INTO {t} VALUES", "INSERT INTO {t} SELECT", "WHERE false",
                 "INSERT OVERWRITE {t} VALUES", "INSERT OVERWRITE {t} SELECT", "PARTITION (",
                 "REPLACE WHERE", "DELETE FROM", "UPDATE {t} SET", "WHEN MATCHED THEN UPDATE SET *",
                 "THEN DELETE", "THEN INSERT *", "THEN INSERT (id", "WHEN NOT MATCHED BY SOURCE AND",
                 "VERSION AS OF", "table_changes_by_path", "SET nope", "'it\\'s'", "日本語",
                 "'delta.enableDeletionVectors'", "'delta.columnMapping.mode'", "PARTITIONED BY"):
        assert part in text, part


def test_every_known_disagreement_has_a_named_test():
    names = set(globals())
    for entry in KNOWN_DISAGREEMENTS:
        assert entry.reason and entry.test in names, entry.name


@pytest.mark.parametrize("seed", QUICK_SEEDS)
def test_random_statements_agree_with_delta_spark(spark, delta_spark, tmp_path, seed):
    sequence = make_sequence(seed, QUICK_STATEMENTS)
    verdict = run_both(spark, delta_spark, sequence, tmp_path)
    assert not verdict.unlisted, "\n".join(map(str, verdict.unlisted))
    assert verdict.compared == len(sequence.statements)


def _known(spark, delta_spark, tmp_path, table: TableSpec, statements: list[str]):
    """Both runs of ``statements`` (after CREATE), and what the tester makes of the last one."""
    sequence = Sequence(0, table, [table.create_sql(), *statements])
    mine, theirs = run_pair(spark, delta_spark, sequence, tmp_path)
    return mine, theirs, compare(sequence, mine, theirs).disagreements


ROW = ("(1, 2, 'a', CAST(1.5 AS DECIMAL(10,2)), DATE'2024-01-01', TIMESTAMP'2024-01-01 00:00:00'"
       ", {b})")


def test_known_static_overwrite_of_boolean_partition(spark, delta_spark, tmp_path):
    mine, theirs, found = _known(spark, delta_spark, tmp_path, TableSpec("b", False, False), [
        "INSERT INTO {t} VALUES " + ROW.format(b="true") + ", " + ROW.format(b="false"),
        "INSERT OVERWRITE {t} PARTITION (b = true) VALUES (7, 8, 'z', CAST(2 AS DECIMAL(10,2)),"
        " DATE'2024-01-02', TIMESTAMP'2024-01-02 00:00:00')"])
    assert mine.outcomes[-1].ok and mine.outcomes[-1].version == 2     # sqlext replaces b = true
    assert sorted(normalised_rows(rows_at(mine.rows, "_version", 2), ["id", "b"])) == [(1, False), (7, True)]
    assert not theirs.outcomes[-1].ok and theirs.outcomes[-1].version == 1
    assert "does not support overwrite by expression" in theirs.outcomes[-1].message
    assert [(d.kind, d.known) for d in found] == [("outcome", "static_overwrite_of_boolean_partition")]


def test_known_static_overwrite_of_empty_string_partition(spark, delta_spark, tmp_path):
    mine, theirs, found = _known(spark, delta_spark, tmp_path, TableSpec("s", False, False), [
        "INSERT INTO {t} VALUES " + ROW.format(b="true"),
        "INSERT OVERWRITE {t} PARTITION (s = '') VALUES (7, 8, CAST(2 AS DECIMAL(10,2)),"
        " DATE'2024-01-02', TIMESTAMP'2024-01-02 00:00:00', false)"])
    assert mine.outcomes[-1].ok and mine.outcomes[-1].version == 2     # sqlext writes s = NULL
    assert sorted(normalised_rows(rows_at(mine.rows, "_version", 2), ["id", "s"]),
                  key=repr) == sorted([(1, "a"), (7, None)], key=repr)
    assert not theirs.outcomes[-1].ok and theirs.outcomes[-1].version == 1
    assert "DELTA_REPLACE_WHERE_MISMATCH" in (f"{theirs.outcomes[-1].error_class} "
                                              f"{theirs.outcomes[-1].message}")
    assert [(d.kind, d.known) for d in found] == [
        ("outcome", "static_overwrite_of_empty_string_partition")]


def test_constant_set_value_that_does_not_cast(spark, delta_spark, tmp_path):
    """Formerly a known disagreement: a constant SET value its column cannot hold fails in both,
    also when no row matches (delta-spark folds the cast while planning)."""
    mine, theirs, found = _known(spark, delta_spark, tmp_path, TableSpec(None, False, False), [
        "INSERT INTO {t} VALUES " + ROW.format(b="true"),
        "UPDATE {t} SET i = 'abc' WHERE id < 0",       # no row matches
        "UPDATE {t} SET i = 'abc' WHERE id = 1"])      # one row matches
    assert [(o.ok, o.version) for o in mine.outcomes[-2:]] == [(False, 1), (False, 1)]
    their_no_match, their_one_match = theirs.outcomes[-2:]
    assert their_no_match.error_class == their_one_match.error_class == "CAST_INVALID_INPUT"
    assert their_no_match.version == their_one_match.version == 1
    assert "CAST_INVALID_INPUT" in (mine.outcomes[-2].error_class or "")
    assert found == []
