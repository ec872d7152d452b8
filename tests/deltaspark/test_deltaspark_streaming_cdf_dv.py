"""The change feed as a stream over deletion vectors, against delta-spark 4.4 (issue 28): on a
table with ``delta.enableDeletionVectors`` and the change feed on, a DELETE marks rows in a
vector (no change data file) and a second DELETE on the same file replaces that vector. Both
engines stream each DELETE's rows as ``delete`` changes of its version (the rows the new vector
deletes and the old did not), from ``startingVersion`` and from the snapshot, on a table each
engine wrote."""

from __future__ import annotations

import pytest

import sqlext
from tests.support.deltaspark import delta_path, run_on_both
from tests.deltaspark.test_deltaspark_streaming_cdf import RUN

PROPS = {"delta.enableChangeDataFeed": "true", "delta.enableDeletionVectors": "true"}
CASES = {"from0": {"startingVersion": "0"}, "from2": {"startingVersion": "2"},
         "snapshot": {}}
DELETES = ("id = 1", "id IN (2, 5)", "v = 'b' AND id = 7")


def _expected_deletes(rows) -> list:
    return sorted((r[0], r[3]) for r in rows if r[2] == "delete")


@pytest.mark.parametrize("writer", ["sqlext", "delta-spark"])
def test_change_feed_stream_over_replaced_deletion_vectors(drop_in, delta_spark, tmp_path,
                                                           writer):
    spark, table = drop_in, str(tmp_path / "t")
    statements = [f"DELETE FROM {delta_path(table)} WHERE {cond}" for cond in DELETES]
    if writer == "sqlext":
        # one file, so every DELETE marks rows of the same file
        sqlext.write(spark.range(8).selectExpr("id", "IF(id < 6, 'a', 'b') AS v")
                     .coalesce(1), table, configuration=PROPS)
        for sql in statements:
            spark.sql(sql)
    else:
        props = ", ".join(f"'{k}' = '{v}'" for k, v in PROPS.items())
        delta_spark.batch([("sql", {"sql": f"CREATE TABLE {delta_path(table)} (id BIGINT, "
                                           f"v STRING) USING delta TBLPROPERTIES ({props})"}),
                           ("sql", {"sql": f"INSERT INTO {delta_path(table)} SELECT /*+ "
                                           "COALESCE(1) */ id, IF(id < 6, 'a', 'b') FROM "
                                           "range(8)"})]
                          + [("sql", {"sql": sql}) for sql in statements], check=True)
    theirs, ours = run_on_both(spark, delta_spark, RUN, table, tmp_path / "ck", CASES)
    first = 1 if writer == "sqlext" else 2       # delta-spark's CREATE TABLE is version 0
    assert _expected_deletes(theirs["from0"]) == [(1, first), (2, first + 1), (5, first + 1),
                                                  (7, first + 2)]
    for name in CASES:
        assert [list(r) for r in ours[name]] == [list(r) for r in theirs[name]], name
