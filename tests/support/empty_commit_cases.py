"""Statements that write, remove or change no row, and whether each leaves a commit (issue 31,
item 2): the case table that ``tests/deltaspark/test_deltaspark_empty_commits.py`` runs on
delta-spark 4.4 and sqlext, and ``tests/engine/test_empty_commits.py`` on sqlext alone.

Each :class:`Case` starts from a base table (:data:`BASES`: made by SQL, so both engines can make
it, or copy one made once), runs one step (a SQL statement, or a DataFrame write of no rows) and
says what delta-spark 4.4 does (measured, ``spark.databricks.delta.skipRecordingEmptyCommits``
at its default, true): ``commits`` and the ``operation`` of the commit. With the setting false,
every case commits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

COLUMNS = "id BIGINT, v STRING, day STRING"

#: base name -> (PARTITIONED BY clause, TBLPROPERTIES clause, whether rows are inserted)
BASES = {
    "rows": ("", "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'false')", True),
    "rows_part": ("PARTITIONED BY (day)", "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'false')",
                  True),
    "rows_cdf": ("", "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')", True),
    "rows_dv": ("", "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
                    "'delta.enableChangeDataFeed' = 'false')", True),
    "empty": ("", "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'false')", False),
    None: None,                                  # no table: the step creates it
}

_ROWS = "(1, 'a', 'd1'), (2, 'b', 'd2'), (3, 'c', 'd1')"


def base_statements(base: str, table: str) -> list[str]:
    """The SQL that makes ``base`` at ``table`` (``delta.`path```): CREATE, then one INSERT."""
    part, props, rows = BASES[base]
    out = [f"CREATE TABLE {table} ({COLUMNS}) USING DELTA {part} {props}"]
    if rows:
        out.append(f"INSERT INTO {table} VALUES {_ROWS}")
    return out


@dataclass(frozen=True)
class Case:
    name: str
    base: str | None
    sql: str | None = None                   # a statement on {t}; or a write of no rows:
    mode: str | None = None                  # append / overwrite
    options: dict = field(default_factory=dict)   # delta-spark writer options (strings)
    extra_column: bool = False               # the empty DataFrame has a column ``more INT`` too
    commits: bool = False                    # delta-spark 4.4 commits
    operation: str | None = None             # ... this operation


S_ONE = "(SELECT * FROM VALUES (1L, 'x', 'd1') AS s(id, v, day)) s"
S_ALL = ("(SELECT * FROM VALUES (1L, 'x', 'd1'), (2L, 'y', 'd2'), (3L, 'z', 'd1')"
         " AS s(id, v, day)) s")
S_NONE = "(SELECT * FROM VALUES (9L, 'x', 'd1') AS s(id, v, day)) s"
S_EMPTY = "(SELECT * FROM VALUES (9L, 'x', 'd1') AS s(id, v, day) WHERE false) s"
FALSE_CLAUSES = ("WHEN MATCHED AND s.v = 'no' THEN UPDATE SET v = s.v"
                 " WHEN MATCHED AND t.v = 'no' THEN DELETE"
                 " WHEN NOT MATCHED AND s.v = 'no' THEN INSERT *")


def merge(source: str, clauses: str) -> str:
    return f"MERGE INTO {{t}} t USING {source} ON t.id = s.id {clauses}"


W, M, D, U = "WRITE", "MERGE", "DELETE", "UPDATE"
EMPTY_SELECT = "INSERT INTO {t} SELECT * FROM {t} WHERE false"
VALUES_WHERE_FALSE = ("INSERT INTO {t} SELECT * FROM VALUES (4L, 'd', 'd3') AS s(id, v, day)"
                      " WHERE false")

CASES = [
    # INSERT / append of no rows: nothing to commit
    Case("insert_select_empty", "rows", EMPTY_SELECT),
    Case("insert_select_empty_partitioned", "rows_part", EMPTY_SELECT),
    Case("insert_values_where_false", "rows", VALUES_WHERE_FALSE),
    Case("insert_values_where_false_partitioned", "rows_part", VALUES_WHERE_FALSE),
    Case("insert_empty_into_empty_table", "empty", EMPTY_SELECT),
    Case("append_empty_dataframe", "rows", mode="append"),
    Case("append_empty_dataframe_partitioned", "rows_part", mode="append"),
    Case("append_empty_dataframe_user_metadata", "rows", mode="append",
         options={"userMetadata": "m"}),
    # ... unless the commit has something else to say: a new table, a new column, a txn
    Case("append_empty_dataframe_creates_table", None, mode="append", commits=True, operation=W),
    Case("append_empty_dataframe_creates_partitioned_table", None, mode="append",
         options={"partitionBy": "day"}, commits=True, operation=W),
    Case("append_empty_dataframe_merge_schema", "rows", mode="append",
         options={"mergeSchema": "true"}, extra_column=True, commits=True, operation=W),
    Case("append_empty_dataframe_idempotent", "rows", mode="append",
         options={"txnAppId": "app", "txnVersion": "1"}, commits=True, operation=W),
    # overwrite with no rows: commits when it removes files
    Case("overwrite_empty_dataframe", "rows", mode="overwrite", commits=True, operation=W),
    Case("overwrite_empty_dataframe_partitioned", "rows_part", mode="overwrite", commits=True,
         operation=W),
    Case("overwrite_empty_dataframe_on_empty_table", "empty", mode="overwrite"),
    Case("overwrite_empty_dataframe_dynamic", "rows_part", mode="overwrite",
         options={"partitionOverwriteMode": "dynamic"}),
    Case("replace_where_partition_matching", "rows_part", mode="overwrite",
         options={"replaceWhere": "day = 'd1'"}, commits=True, operation=W),
    Case("replace_where_partition_matching_nothing", "rows_part", mode="overwrite",
         options={"replaceWhere": "day = 'd7'"}),
    Case("replace_where_data_matching", "rows", mode="overwrite",
         options={"replaceWhere": "id > 1"}, commits=True, operation=W),
    Case("replace_where_data_matching_nothing", "rows", mode="overwrite",
         options={"replaceWhere": "id > 100"}),
    Case("insert_overwrite_empty", "rows", "INSERT OVERWRITE {t} SELECT * FROM {t} WHERE false",
         commits=True, operation=W),
    Case("insert_overwrite_empty_on_empty_table", "empty",
         "INSERT OVERWRITE {t} SELECT * FROM {t} WHERE false"),
    Case("insert_overwrite_partition_empty", "rows_part",
         "INSERT OVERWRITE {t} PARTITION (day = 'd1') SELECT id, v FROM {t} WHERE false",
         commits=True, operation=W),
    # DELETE / UPDATE
    Case("update_matching_nothing", "rows", "UPDATE {t} SET v = 'q' WHERE id < 0"),
    Case("update_same_value", "rows", "UPDATE {t} SET v = v WHERE id = 1", commits=True,
         operation=U),
    Case("update_on_empty_table", "empty", "UPDATE {t} SET v = 'q'"),
    Case("delete_matching_nothing", "rows", "DELETE FROM {t} WHERE id < 0"),
    Case("delete_partition_matching_nothing", "rows_part", "DELETE FROM {t} WHERE day = 'd7'"),
    Case("delete_all_on_empty_table", "empty", "DELETE FROM {t}"),
    Case("delete_matching_nothing_dv", "rows_dv", "DELETE FROM {t} WHERE id < 0"),
    # MERGE: delta-spark rewrites (and commits) every file holding a row its join keeps
    Case("merge_matching_nothing", "rows", merge(S_NONE, "WHEN MATCHED THEN DELETE")),
    Case("merge_matching_nothing_upsert", "rows", merge(
        S_NONE, "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED AND s.v = 'no' THEN "
                "INSERT *")),
    Case("merge_empty_source", "rows", merge(
        S_EMPTY, "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")),
    Case("merge_into_empty_table", "empty", merge(
        S_NONE, "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED BY SOURCE THEN DELETE")),
    Case("merge_clauses_false_for_matched_row", "rows", merge(S_ONE, FALSE_CLAUSES),
         commits=True, operation=M),
    Case("merge_clauses_false_for_matched_row_partitioned", "rows_part",
         merge(S_ONE, FALSE_CLAUSES), commits=True, operation=M),
    Case("merge_clauses_false_for_matched_row_cdf", "rows_cdf", merge(S_ONE, FALSE_CLAUSES),
         commits=True, operation=M),
    Case("merge_clauses_false_for_matched_row_dv", "rows_dv", merge(S_ONE, FALSE_CLAUSES)),
    Case("merge_matched_only_clauses_false", "rows", merge(
        S_ONE, "WHEN MATCHED AND s.v = 'no' THEN UPDATE SET v = s.v"
               " WHEN MATCHED AND t.v = 'no' THEN DELETE")),
    Case("merge_not_matched_by_source_source_covers", "rows", merge(
        S_ALL, "WHEN NOT MATCHED BY SOURCE THEN DELETE"), commits=True, operation=M),
    Case("merge_not_matched_by_source_source_covers_dv", "rows_dv", merge(
        S_ALL, "WHEN NOT MATCHED BY SOURCE THEN DELETE")),
    Case("merge_not_matched_by_source_condition_false", "rows", merge(
        S_ONE, "WHEN NOT MATCHED BY SOURCE AND t.id < 0 THEN UPDATE SET v = 'gone'"),
         commits=True, operation=M),
    Case("merge_not_matched_by_source_empty_source", "rows", merge(
        S_EMPTY, "WHEN NOT MATCHED BY SOURCE AND t.id < 0 THEN DELETE"), commits=True,
         operation=M),
    Case("merge_insert_only_all_matching", "rows", merge(S_ALL, "WHEN NOT MATCHED THEN INSERT *")),
    Case("merge_insert_only_condition_false", "rows", merge(
        S_NONE, "WHEN NOT MATCHED AND s.v = 'no' THEN INSERT *")),
    Case("merge_update_same_value", "rows", merge(S_ONE, "WHEN MATCHED THEN UPDATE SET v = t.v"),
         commits=True, operation=M),
    Case("merge_schema_evolution_changing_no_row", "rows", (
        "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING (SELECT 9L AS id, 'x' AS v, 'd1' AS day,"
        " 1 AS more) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *"), commits=True,
         operation=M),
]

CASES_BY_NAME = {c.name: c for c in CASES}


def write_arguments(case: Case) -> dict:
    """``sqlext.write`` keyword arguments for a write case's options."""
    args = dict(case.options)
    if "mergeSchema" in args:
        args["mergeSchema"] = args["mergeSchema"] == "true"
    if "txnVersion" in args:
        args["txnVersion"] = int(args["txnVersion"])
    return args


def empty_frame_schema(case: Case) -> str:
    return COLUMNS + (", more INT" if case.extra_column else "")


def delta_spark_write_code(case: Case, path: str) -> str:
    """Python for the delta-spark worker: the case's write of an empty DataFrame to ``path``."""
    options = "".join(f".option({k!r}, {v!r})" for k, v in case.options.items()
                      if k != "partitionBy")
    partition = (f".partitionBy({case.options['partitionBy']!r})"
                 if "partitionBy" in case.options else "")
    return (f"spark.createDataFrame([], {empty_frame_schema(case)!r}).write.format('delta')"
            f".mode({case.mode!r}){options}{partition}.save({path!r})\nresult = None")
