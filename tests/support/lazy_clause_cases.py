"""MERGE clauses and UPDATE assignments whose expressions fail when evaluated for rows the clause
does not take (issue 31, item 1): an overflowing cast, a division by zero, ``raise_error``, an
array index out of bounds (ANSI mode). delta-spark evaluates an action's expressions only for the
rows its clause takes, so these statements succeed; those whose failing rows are taken fail in
both engines. Run on delta-spark 4.4 and sqlext by
``tests/deltaspark/test_deltaspark_lazy_clause_values.py``, on sqlext alone by
``tests/dml/test_lazy_clause_values.py``.

Clause *conditions* are evaluated eagerly, on the rows delta-spark evaluates them on (its joined
rows, whatever clause then takes the row; :mod:`sqlext.engine.merge.eager`): a WHEN MATCHED
condition also after an earlier clause took the row, on unmatched target rows when the MERGE has
NOT MATCHED BY SOURCE clauses, on unmatched source rows when it has NOT MATCHED [BY SOURCE]
clauses or the table uses deletion vectors (not when no target row matched); a NOT MATCHED BY
SOURCE condition on every joined row; a NOT MATCHED condition on every source row, except with
several NOT MATCHED clauses and no other kind (only the unmatched ones then). ``error``: the
error condition both raise.

Every case starts from :data:`TABLE` with :data:`ROWS`: row 3's ``b`` does not fit
``DECIMAL(10,2)``, row 2's ``b`` is 0.
"""

from __future__ import annotations

from dataclasses import dataclass

TABLE = "id BIGINT, b BIGINT, d DECIMAL(10,2)"
ROWS = "(1, 1, 1.00), (2, 0, 2.00), (3, 1000000000009, 3.00)"
BIG = "1000000000009L"
DEC = "DECIMAL(10,2)"


def base_statements(table: str, properties: str = "", split: bool = False) -> list[str]:
    """The statements making the table; ``split``: one file per row (an INSERT each)."""
    rows = [f"({r}" for r in ROWS[1:].split(", (")] if split else [ROWS]
    return [f"CREATE TABLE {table} ({TABLE}) USING DELTA {properties}"] + [
        f"INSERT INTO {table} VALUES {r}" for r in rows]


@dataclass(frozen=True)
class Case:
    name: str
    sql: str                  # on {t}
    succeeds: bool = True     # what delta-spark 4.4 does (measured)
    deletion_vectors: bool = False
    error: str | None = None  # the error condition of a failure, in both
    split: bool = False       # the table has one file per row (else one file)


def src(*rows: tuple) -> str:
    values = ", ".join(f"({i}L, {b})" for i, b in rows)
    return f"(SELECT * FROM VALUES {values} AS s(id, b)) s"


INSERT = "WHEN NOT MATCHED THEN INSERT (id, b) VALUES (s.id, s.b)"
DIV0 = "DIVIDE_BY_ZERO"


def merge(source: str, clauses: str) -> str:
    return f"MERGE INTO {{t}} t USING {source} ON t.id = s.id {clauses}"


CASES = [
    # WHEN NOT MATCHED values, for a matched source row
    Case("insert_cast_overflow_for_matched_row", merge(
        src((1, BIG)), "WHEN MATCHED THEN UPDATE SET b = s.b WHEN NOT MATCHED THEN INSERT "
                       f"(id, b, d) VALUES (s.id, s.b, CAST(s.b AS {DEC}))")),
    Case("insert_division_by_zero_for_matched_row", merge(
        src((2, 0)), "WHEN MATCHED THEN UPDATE SET b = s.b + 1 WHEN NOT MATCHED THEN INSERT "
                     "(id, b) VALUES (s.id, CAST(10 / s.b AS BIGINT))")),
    Case("insert_raise_error_for_matched_row", merge(
        src((1, 5)), "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, b) VALUES "
                     "(s.id, CAST(raise_error(concat('inserted ', s.id)) AS BIGINT))")),
    Case("insert_array_index_for_matched_row", merge(
        src((1, 7)), "WHEN MATCHED THEN UPDATE SET b = s.b WHEN NOT MATCHED THEN INSERT "
                     "(id, b) VALUES (s.id, array(10, 20)[s.b])")),
    # a WHEN NOT MATCHED [BY SOURCE] condition is evaluated for every row of its side, by
    # delta-spark too: failing there fails the MERGE in both
    Case("insert_condition_division_by_zero_for_matched_row", merge(
        src((2, 0)), "WHEN MATCHED THEN UPDATE SET b = 5 WHEN NOT MATCHED AND 10 / s.b > 1 "
                     "THEN INSERT (id, b) VALUES (s.id, s.b)"), succeeds=False),
    Case("insert_only_cast_overflow_for_matched_row", merge(
        src((1, BIG)), f"WHEN NOT MATCHED THEN INSERT (id, b, d) VALUES (s.id, s.b, "
                       f"CAST(s.b AS {DEC}))")),
    Case("insert_second_clause_not_taken", merge(
        src((7, BIG)), "WHEN NOT MATCHED AND s.b > 100 THEN INSERT (id, b) VALUES (s.id, s.b) "
                       f"WHEN NOT MATCHED THEN INSERT (id, d) VALUES (s.id, CAST(s.b AS {DEC}))")),
    # ... and for an unmatched source row it takes: fails
    Case("insert_cast_overflow_for_inserted_row", merge(
        src((9, BIG)), "WHEN MATCHED THEN UPDATE SET b = s.b WHEN NOT MATCHED THEN INSERT "
                       f"(id, b, d) VALUES (s.id, s.b, CAST(s.b AS {DEC}))"), succeeds=False),
    # WHEN MATCHED values
    Case("update_clause_not_taken", merge(
        src((1, BIG)), f"WHEN MATCHED AND s.b < 0 THEN UPDATE SET d = CAST(s.b AS {DEC}) "
                       "WHEN MATCHED THEN UPDATE SET b = s.b")),
    Case("update_value_for_unmatched_source_row", merge(
        src((1, 5), (9, BIG)), f"WHEN MATCHED THEN UPDATE SET d = CAST(s.b AS {DEC}) "
                               "WHEN NOT MATCHED THEN INSERT (id, b) VALUES (s.id, s.b)")),
    Case("update_after_delete_taken", merge(
        src((1, BIG)), "WHEN MATCHED AND t.id = 1 THEN DELETE "
                       f"WHEN MATCHED THEN UPDATE SET d = CAST(s.b AS {DEC})")),
    Case("update_cast_overflow_for_taken_row", merge(
        src((3, 1)), f"WHEN MATCHED THEN UPDATE SET d = CAST(t.b AS {DEC})"), succeeds=False),
    # WHEN NOT MATCHED BY SOURCE values and conditions
    Case("by_source_value_for_row_its_condition_skips", merge(
        src((1, 5)), "WHEN MATCHED THEN UPDATE SET b = s.b WHEN NOT MATCHED BY SOURCE AND "
                     f"t.b < 100 THEN UPDATE SET d = CAST(t.b AS {DEC})")),
    Case("by_source_value_for_matched_row", merge(
        src((3, 5)), f"WHEN NOT MATCHED BY SOURCE THEN UPDATE SET d = CAST(t.b AS {DEC})")),
    Case("by_source_condition_division_by_zero_for_matched_row", merge(
        src((2, 5)), "WHEN MATCHED THEN UPDATE SET b = s.b "
                     "WHEN NOT MATCHED BY SOURCE AND 10 / t.b > 1 THEN DELETE"), succeeds=False),
    Case("by_source_array_index_for_matched_row", merge(
        src((3, 5)), "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET b = array(10, 20, 30)[t.b]")),
    Case("by_source_value_for_taken_row", merge(
        src((1, 5)), f"WHEN NOT MATCHED BY SOURCE THEN UPDATE SET d = CAST(t.b AS {DEC})"),
         succeeds=False),
    Case("insert_cast_overflow_for_matched_row_dv", merge(
        src((1, BIG)), "WHEN MATCHED THEN UPDATE SET b = s.b WHEN NOT MATCHED THEN INSERT "
                       f"(id, b, d) VALUES (s.id, s.b, CAST(s.b AS {DEC}))"),
         deletion_vectors=True),
    Case("by_source_value_for_matched_row_dv", merge(
        src((3, 5)), f"WHEN NOT MATCHED BY SOURCE THEN UPDATE SET d = CAST(t.b AS {DEC})"),
         deletion_vectors=True),
    # UPDATE: SET values only for the rows WHERE takes
    Case("update_set_cast_overflow_outside_where",
         f"UPDATE {{t}} SET d = CAST(b AS {DEC}) WHERE b < 100"),
    Case("update_set_division_by_zero_outside_where",
         "UPDATE {t} SET b = CAST(10 / b AS BIGINT) WHERE b <> 0 AND b < 100"),
    Case("update_set_raise_error_outside_where",
         "UPDATE {t} SET b = CAST(raise_error(concat('updated ', id)) AS BIGINT) WHERE b < 0"),
    Case("update_set_array_index_outside_where",
         "UPDATE {t} SET b = array(10, 20)[b] WHERE b < 2"),
    Case("update_set_cast_overflow_outside_where_dv",
         f"UPDATE {{t}} SET d = CAST(b AS {DEC}) WHERE b < 100", deletion_vectors=True),
    Case("update_set_cast_overflow_inside_where",
         f"UPDATE {{t}} SET d = CAST(b AS {DEC}) WHERE b > 100", succeeds=False),
    Case("update_set_two_failing_values_outside_where",
         f"UPDATE {{t}} SET d = CAST(b AS {DEC}), b = CAST(10 / b AS BIGINT) WHERE id = 1"),
    Case("update_where_guarded_division", "UPDATE {t} SET b = 7 WHERE b <> 0 AND 10 / b > 1"),
    # unqualified names of columns both sides have: a WHEN NOT MATCHED clause's name the
    # source's, a NOT MATCHED BY SOURCE clause's the target's; their values too are evaluated
    # only for the rows the clause takes
    Case("insert_unqualified_cast_overflow_for_matched_row", merge(
        src((1, BIG)), "WHEN MATCHED THEN UPDATE SET b = s.b WHEN NOT MATCHED THEN INSERT "
                       f"(id, b, d) VALUES (id, b, CAST(b AS {DEC}))")),
    Case("insert_unqualified_mixed_with_qualified_for_matched_row", merge(
        src((1, BIG), (8, 4)), "WHEN MATCHED THEN UPDATE SET b = s.b WHEN NOT MATCHED THEN "
                               f"INSERT (id, b, d) VALUES (s.id, b, CAST(b + s.id AS {DEC}))")),
    Case("insert_only_unqualified_cast_overflow_for_matched_row", merge(
        src((1, BIG), (8, 4)), f"WHEN NOT MATCHED THEN INSERT (id, b, d) VALUES (id, b, "
                               f"CAST(b AS {DEC}))")),
    Case("insert_unqualified_cast_overflow_for_matched_row_dv", merge(
        src((1, BIG)), "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT "
                       f"(id, b, d) VALUES (id, b, CAST(b AS {DEC}))"), deletion_vectors=True),
    Case("insert_unqualified_cast_overflow_for_inserted_row", merge(
        src((9, BIG)), "WHEN MATCHED THEN UPDATE SET b = s.b WHEN NOT MATCHED THEN INSERT "
                       f"(id, b, d) VALUES (id, b, CAST(b AS {DEC}))"), succeeds=False),
    Case("by_source_unqualified_cast_overflow_for_matched_row", merge(
        src((3, 5)), "WHEN MATCHED THEN UPDATE SET b = s.b "
                     f"WHEN NOT MATCHED BY SOURCE THEN UPDATE SET d = CAST(b AS {DEC})")),
    Case("by_source_unqualified_array_index_for_matched_row", merge(
        src((3, 5)), "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET b = array(10, 20, 30)[b]")),
    Case("by_source_unqualified_cast_overflow_for_taken_row", merge(
        src((1, 5)), f"WHEN NOT MATCHED BY SOURCE THEN UPDATE SET d = CAST(b AS {DEC})"),
         succeeds=False),
    Case("both_sides_unqualified_in_one_merge", merge(
        src((3, 0), (9, 4)), "WHEN MATCHED THEN UPDATE SET b = s.b WHEN NOT MATCHED THEN INSERT "
                             "(id, b) VALUES (id, CAST(10 / b AS BIGINT)) WHEN NOT MATCHED BY "
                             f"SOURCE THEN UPDATE SET d = CAST(b AS {DEC})")),
    # conditions: evaluated on delta-spark's joined rows (see the module's docstring)
    Case("matched_condition_division_by_zero_for_unmatched_source_row", merge(
        src((1, 5), (9, 0)), f"WHEN MATCHED AND 10 / s.b > 1 THEN UPDATE SET b = s.b {INSERT}"),
         succeeds=False, error=DIV0),
    Case("matched_condition_after_a_clause_took_the_row", merge(
        src((1, 0)), "WHEN MATCHED AND t.id = 1 THEN DELETE "
                     "WHEN MATCHED AND 10 / s.b > 1 THEN UPDATE SET b = s.b"),
         succeeds=False, error=DIV0),
    Case("matched_condition_division_by_zero_for_matched_row", merge(
        src((1, 0)), "WHEN MATCHED AND 10 / s.b > 1 THEN UPDATE SET b = s.b"), succeeds=False),
    Case("insert_condition_unqualified_division_by_zero_for_matched_row", merge(
        src((2, 0)), "WHEN MATCHED THEN UPDATE SET b = 5 WHEN NOT MATCHED AND 10 / b > 1 "
                     "THEN INSERT (id, b) VALUES (s.id, s.b)"), succeeds=False),
    Case("insert_second_condition_after_first_took_the_row", merge(
        src((9, 0)), "WHEN NOT MATCHED AND s.b = 0 THEN INSERT (id, b) VALUES (s.id, 1) "
                     "WHEN NOT MATCHED AND 10 / s.b > 1 THEN INSERT (id, b) VALUES (s.id, 2)"),
         succeeds=False),
    Case("by_source_condition_unqualified_division_by_zero_for_matched_row", merge(
        src((2, 5)), "WHEN MATCHED THEN UPDATE SET b = s.b "
                     "WHEN NOT MATCHED BY SOURCE AND 10 / b > 1 THEN DELETE"), succeeds=False),
    Case("by_source_second_condition_after_first_took_the_row", merge(
        src((1, 5)), "WHEN NOT MATCHED BY SOURCE AND t.b = 0 THEN DELETE "
                     "WHEN NOT MATCHED BY SOURCE AND 10 / t.b > 1 THEN UPDATE SET b = 1"),
         succeeds=False),
]

UPDATE_IF = "WHEN MATCHED AND 10 / s.b > 1 THEN UPDATE SET b = s.b"
BY_SOURCE_3 = "WHEN NOT MATCHED BY SOURCE AND t.id = 3 THEN DELETE"
# which joined rows each kind of condition is evaluated on (measured on delta-spark 4.4)
CONDITION_CASES = [
    Case("matched_condition_for_unmatched_source_row_matched_only", merge(
        src((1, 5), (9, 0)), UPDATE_IF)),
    Case("matched_condition_for_unmatched_source_row_matched_only_dv", merge(
        src((1, 5), (9, 0)), UPDATE_IF), succeeds=False, deletion_vectors=True, error=DIV0),
    Case("matched_delete_condition_for_unmatched_source_row_dv", merge(
        src((1, 5), (9, 0)), "WHEN MATCHED AND 10 / s.b > 1 THEN DELETE"), succeeds=False,
         deletion_vectors=True, error=DIV0),
    Case("matched_condition_for_unmatched_source_row_with_insert_dv", merge(
        src((1, 5), (9, 0)), f"{UPDATE_IF} {INSERT}"), succeeds=False, deletion_vectors=True,
         error=DIV0),
    Case("matched_condition_after_a_clause_took_the_row_dv", merge(
        src((1, 0)), "WHEN MATCHED AND t.id = 1 THEN DELETE "
                     "WHEN MATCHED AND 10 / s.b > 1 THEN UPDATE SET b = s.b"),
         succeeds=False, deletion_vectors=True, error=DIV0),
    Case("matched_conditions_for_unmatched_source_row_matched_only", merge(
        src((1, 5), (9, 0)), f"WHEN MATCHED AND s.b = 5 THEN DELETE {UPDATE_IF}")),
    Case("matched_conditions_for_unmatched_source_row_matched_only_dv", merge(
        src((1, 5), (9, 0)), f"WHEN MATCHED AND s.b = 5 THEN DELETE {UPDATE_IF}"),
         succeeds=False, deletion_vectors=True, error=DIV0),
    Case("matched_condition_for_unmatched_source_row_no_match", merge(
        src((9, 0)), f"{UPDATE_IF} {INSERT}")),
    Case("matched_condition_for_unmatched_source_row_no_match_dv", merge(
        src((9, 0)), UPDATE_IF), deletion_vectors=True),
    Case("matched_condition_for_unmatched_source_row_no_match_by_source", merge(
        src((9, 0)), f"{UPDATE_IF} {BY_SOURCE_3}"), succeeds=False, error=DIV0),
    Case("matched_condition_cast_overflow_for_unmatched_source_row", merge(
        src((1, 5), (9, BIG)), f"WHEN MATCHED AND CAST(s.b AS INT) > 0 THEN UPDATE SET b = s.b "
                               f"{INSERT}"), succeeds=False, error="CAST_OVERFLOW"),
    Case("matched_condition_raise_error_for_unmatched_source_row", merge(
        src((1, 5), (9, 5)), "WHEN MATCHED AND (t.id IS NOT NULL OR raise_error('boom') IS NULL)"
                             f" THEN UPDATE SET b = s.b {INSERT}"), succeeds=False,
         error="USER_RAISED_EXCEPTION"),
    Case("matched_condition_for_unmatched_target_row_with_by_source", merge(
        src((1, 5)), f"WHEN MATCHED AND 10 / t.b > 1 THEN UPDATE SET b = s.b {BY_SOURCE_3}"),
         succeeds=False, error=DIV0),
    Case("matched_condition_for_unmatched_target_row_with_by_source_dv", merge(
        src((1, 5)), f"WHEN MATCHED AND 10 / t.b > 1 THEN UPDATE SET b = s.b {BY_SOURCE_3}"),
         succeeds=False, deletion_vectors=True, error=DIV0),
    Case("matched_condition_for_unmatched_target_row_matched_only", merge(
        src((1, 5)), "WHEN MATCHED AND 10 / t.b > 1 THEN UPDATE SET b = s.b")),
    Case("matched_condition_for_unmatched_target_row_with_insert", merge(
        src((1, 5)), f"WHEN MATCHED AND 10 / t.b > 1 THEN UPDATE SET b = s.b {INSERT}")),
    Case("matched_condition_for_unmatched_target_row_with_insert_dv", merge(
        src((1, 5)), f"WHEN MATCHED AND 10 / t.b > 1 THEN UPDATE SET b = s.b {INSERT}"),
         deletion_vectors=True),
    Case("insert_only_conditions_for_matched_row", merge(
        src((2, 0)), "WHEN NOT MATCHED AND s.b = 5 THEN INSERT (id, b) VALUES (s.id, s.b) "
                     "WHEN NOT MATCHED AND 10 / s.b > 1 THEN INSERT (id, b) VALUES (s.id, 1)")),
    Case("insert_only_conditions_for_matched_row_dv", merge(
        src((2, 0)), "WHEN NOT MATCHED AND s.b = 5 THEN INSERT (id, b) VALUES (s.id, s.b) "
                     "WHEN NOT MATCHED AND 10 / s.b > 1 THEN INSERT (id, b) VALUES (s.id, 1)"),
         deletion_vectors=True),
    Case("insert_only_condition_for_matched_row", merge(
        src((2, 0)), "WHEN NOT MATCHED AND 10 / s.b > 1 THEN INSERT (id, b) VALUES (s.id, s.b)"),
         succeeds=False, error=DIV0),
    Case("insert_condition_for_unmatched_target_row", merge(
        src((1, 5)), "WHEN NOT MATCHED AND 10 / coalesce(s.id, 0) > 1 THEN INSERT (id, b) "
                     f"VALUES (s.id, s.b) {BY_SOURCE_3}")),
    Case("by_source_condition_for_unmatched_source_row", merge(
        src((1, 5), (9, 5)), f"{INSERT} WHEN NOT MATCHED BY SOURCE AND 10 / coalesce(t.id, 0) > 1"
                             " THEN DELETE"), succeeds=False, error=DIV0),
    Case("by_source_condition_for_unmatched_source_row_without_insert", merge(
        src((1, 5), (9, 5)), "WHEN NOT MATCHED BY SOURCE AND 10 / coalesce(t.id, 0) > 1 "
                             "THEN DELETE"), succeeds=False, error=DIV0),
]
CASES += CONDITION_CASES
UNQUALIFIED_BY_SOURCE = "WHEN NOT MATCHED BY SOURCE AND 10 / coalesce(id, 0) > 1 THEN DELETE"
# a NOT MATCHED BY SOURCE condition sees the target's columns only: an unqualified name both sides
# have is the target's, NULL on an unmatched source row, where delta-spark evaluates it too
SCOPE_CASES = [
    Case("by_source_unqualified_condition_for_unmatched_source_row", merge(
        src((1, 5), (9, 5)), f"{INSERT} {UNQUALIFIED_BY_SOURCE}"), succeeds=False, error=DIV0),
    Case("by_source_unqualified_condition_for_unmatched_source_row_without_insert", merge(
        src((1, 5), (9, 5)), UNQUALIFIED_BY_SOURCE), succeeds=False, error=DIV0),
    Case("by_source_unqualified_condition_no_unmatched_source_row", merge(
        src((1, 5)), f"{INSERT} {UNQUALIFIED_BY_SOURCE}")),
    # with deletion vectors and no other clause kind, delta-spark's join keeps no unmatched
    # source row
    Case("by_source_unqualified_condition_for_unmatched_source_row_dv", merge(
        src((1, 5), (9, 5)), UNQUALIFIED_BY_SOURCE), deletion_vectors=True),
    Case("by_source_condition_for_unmatched_source_row_dv", merge(
        src((1, 5), (9, 5)), "WHEN NOT MATCHED BY SOURCE AND 10 / coalesce(t.id, 0) > 1 "
                             "THEN DELETE"), deletion_vectors=True),
]
CASES += SCOPE_CASES
# a table of one file per row: delta-spark evaluates the conditions of its second join on the
# files its first join touched only
FILE_CASES = [
    Case("matched_condition_for_untouched_file_with_by_source", merge(
        src((1, 5)), f"WHEN MATCHED AND 10 / t.b > 1 THEN UPDATE SET b = s.b {BY_SOURCE_3}"),
         succeeds=False, error=DIV0, split=True),
    Case("matched_condition_for_untouched_file_with_insert", merge(
        src((1, 5), (2, 50)), f"WHEN MATCHED AND 10 / s.b > 1 THEN UPDATE SET b = s.b {INSERT}"),
         split=True),
    Case("matched_only_condition_false_for_every_match_dv", merge(
        src((1, 50), (9, 0)), UPDATE_IF), deletion_vectors=True),
    Case("matched_only_condition_false_for_every_match_split_dv", merge(
        src((1, 50), (9, 0)), UPDATE_IF), deletion_vectors=True, split=True),
    Case("matched_only_conditions_for_untouched_file_dv", merge(
        src((1, 5), (2, 50), (9, 0)), UPDATE_IF), succeeds=False, deletion_vectors=True,
         error=DIV0, split=True),
]
CASES += FILE_CASES
BAD = "CAST_INVALID_INPUT"
OVERFLOW = "DELTA_CAST_OVERFLOW_IN_TABLE_WRITE"
# a constant value its column cannot hold: delta-spark folds the cast while planning, so the
# statement fails even when no row is written; a castable constant works
CONSTANT_CASES = [
    Case("update_set_malformed_constant_no_row", "UPDATE {t} SET b = 'abc' WHERE id = 99",
         succeeds=False, error=BAD),
    Case("update_set_malformed_constant_where_false", "UPDATE {t} SET b = 'abc' WHERE false",
         succeeds=False, error=BAD),
    Case("update_set_malformed_decimal_constant_no_row", "UPDATE {t} SET d = 'x1' WHERE id = 99",
         succeeds=False, error=BAD),
    Case("update_set_overflowing_constant_no_row",
         "UPDATE {t} SET d = 1000000000009 WHERE id = 99", succeeds=False, error=OVERFLOW),
    Case("update_set_malformed_constant_no_row_dv", "UPDATE {t} SET b = 'abc' WHERE id = 99",
         succeeds=False, deletion_vectors=True, error=BAD),
    Case("update_set_castable_constant_no_row", "UPDATE {t} SET b = '12' WHERE id = 99"),
    Case("merge_update_malformed_constant_no_match", merge(
        src((9, 5)), f"WHEN MATCHED THEN UPDATE SET b = 'abc' {INSERT}"), succeeds=False,
         error=BAD),
    Case("merge_update_malformed_constant_matched_only_no_match", merge(
        src((9, 5)), "WHEN MATCHED THEN UPDATE SET b = 'abc'"), succeeds=False, error=BAD),
    Case("merge_update_overflowing_constant_no_match", merge(
        src((9, 5)), f"WHEN MATCHED THEN UPDATE SET d = 1000000000009 {INSERT}"),
         succeeds=False, error=OVERFLOW),
    Case("merge_insert_malformed_constant_no_insert", merge(
        src((1, 5)), "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, b) "
                     "VALUES (s.id, 'abc')"), succeeds=False, error=BAD),
    Case("merge_by_source_malformed_constant_no_row", merge(
        src((1, 5), (2, 5), (3, 5)), "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET b = 'abc'"),
         succeeds=False, error=BAD),
]
CASES += CONSTANT_CASES

DV_PROPERTIES = "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"


def properties(case: Case) -> str:
    return DV_PROPERTIES if case.deletion_vectors else ""


def base_key(case: Case) -> tuple[str, bool]:
    """The cases sharing a base table: same properties, same files."""
    return properties(case), case.split
