"""The README's Python quick start runs as pasted (issue 17), on a scratch path, and leaves the
table where its comments say; and it runs again as pasted (issue 27): its second block alone,
then both blocks again, in the same session."""

from __future__ import annotations

import re
from pathlib import Path

import deltalake

README = Path(__file__).resolve().parents[2] / "README.md"
PATH = "/tmp/sqlext-quickstart/events"
#: the DELETE matches no row and OPTIMIZE finds one file in the partition: neither commits
EXPECTED = ["WRITE", "WRITE", "WRITE", "WRITE", "UPDATE", "MERGE", "RESTORE", "VACUUM START",
            "VACUUM END"]


def quick_start_python() -> list[str]:
    text = README.read_text()
    section = text[text.index("## Quick start in Python"):text.index("## Quick start in SQL")]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_python_quick_start_runs_and_runs_again(spark, tmp_path):
    blocks = quick_start_python()
    assert len(blocks) == 2 and PATH in blocks[0]
    table = str(tmp_path / "events")
    scope: dict = {}
    first, dml = (compile(block.replace(PATH, table), "README.md", "exec") for block in blocks)
    for code in (first, dml, dml, first, dml):
        exec(code, scope)  # noqa: S102
    history = deltalake.DeltaTable(table).history()
    operations = [h["operation"] for h in sorted(history, key=lambda h: h["version"])]
    assert operations == EXPECTED, str(operations)
    rows = deltalake.DeltaTable(table).to_pyarrow_table().to_pylist()
    assert sorted((r["id"], r["v"]) for r in rows) == [(1, "a"), (2, "b")]   # RESTORE to v1
    assert scope["sqlext"].read(spark, "sales.orders").count() == 1
