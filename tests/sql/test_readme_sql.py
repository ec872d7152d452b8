"""The README's SQL quick start runs as written, and does what its comments say; run a second
time in the same schema (the warehouse outlives a shell), it does the same (issue 27)."""

from __future__ import annotations

import re
from pathlib import Path

import sqlext
from sqlext.catalog import Catalog

README = Path(__file__).resolve().parents[2] / "README.md"


def quick_start_sql() -> str:
    text = README.read_text()
    section = text[text.index("## Quick start in SQL"):]
    return re.search(r"```sql\n(.*?)```", section, re.S).group(1)


def test_readme_sql_quick_start_runs(spark):
    session = spark.newSession()
    Catalog(session).create_schema("readme_sql")
    session.catalog.setCurrentDatabase("readme_sql")
    result = None
    for statement in 2 * re.split(r";[^\n]*\n", quick_start_sql()):
        if statement.strip():
            result = sqlext.sql(session, statement).collect()
        if "DELETE FROM events" in statement:     # the commented TIMESTAMP AS OF, at this commit
            latest = sqlext.sql(session, "DESCRIBE HISTORY events LIMIT 1").first()["timestamp"]
            rows = sqlext.sql(session, f"SELECT * FROM events TIMESTAMP AS OF '{latest}'")
            assert {r["id"] for r in rows.collect()} == {2, 3}
    assert result == []                   # the last statement, VACUUM DRY RUN: nothing to delete
    history = sqlext.sql(session, "DESCRIBE HISTORY events").collect()
    operations = [r["operation"] for r in sorted(history, key=lambda r: r["version"])]
    assert operations[:6] == ["CREATE TABLE", "WRITE", "UPDATE", "MERGE", "DELETE", "RESTORE"]
    assert operations[6] == "OPTIMIZE"
    # after RESTORE to version 1: the two inserted rows
    assert sorted((r["id"], r["v"]) for r in sqlext.sql(session, "SELECT * FROM events").collect()) \
        == [(1, "a"), (2, "b")]
