"""Progress lines per phase of MERGE and OPTIMIZE (:mod:`sqlext.engine.progress`): printed on
standard error when the session's progress is on, in the order the phases run, naming the
table and the version committed; nothing when it is off."""

from __future__ import annotations

import sqlext


def _table(spark, path):
    sqlext.write(spark.createDataFrame([(i, "a") for i in range(4)], "id long, v string")
                 .repartition(2), str(path))
    sqlext.write(spark.createDataFrame([(9, "z")], "id long, v string"), str(path))
    return sqlext.DeltaTable.forPath(spark, str(path))


def test_merge_and_optimize_print_their_phases(spark, tmp_path, capsys):
    dt = _table(spark, tmp_path / "t")
    spark.conf.set("sqlext.progress", "true")
    try:
        source = spark.createDataFrame([(1, "b"), (7, "c")], "id long, v string")
        (dt.alias("t").merge(source.alias("s"), "t.id = s.id")
         .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
        dt.optimize().executeCompaction()
    finally:
        spark.conf.unset("sqlext.progress")
    lines = [line for line in capsys.readouterr().err.splitlines()
             if line.startswith(("MERGE ", "OPTIMIZE "))]
    merge = [line for line in lines if line.startswith("MERGE ")]
    assert all(str(tmp_path / "t") in line for line in lines)
    assert "finding the files" in merge[0]
    assert "candidate file(s); joining them with the source" in merge[1]
    assert "committing" in merge[2] and merge[3].endswith("committed version 2")
    optimize = [line for line in lines if line.startswith("OPTIMIZE ")]
    assert "rewriting" in optimize[0] and optimize[-1].endswith("committed version 3")


def test_no_lines_when_progress_is_off(spark, tmp_path, capsys):
    dt = _table(spark, tmp_path / "t")
    spark.conf.set("sqlext.progress", "false")
    try:
        dt.delete("id = 0")
        source = spark.createDataFrame([(1, "b")], "id long, v string")
        dt.alias("t").merge(source.alias("s"), "t.id = s.id").whenMatchedDelete().execute()
    finally:
        spark.conf.unset("sqlext.progress")
    assert "MERGE " not in capsys.readouterr().err
    assert [r.id for r in dt.toDF().orderBy("id").collect()] == [2, 3, 9]
