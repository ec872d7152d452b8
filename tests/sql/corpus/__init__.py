"""The SQL statement corpus: scenario files of statements with the checks that verify them.

Each ``*.sql`` file here is one scenario, run top to bottom on one SparkSession (through
``sqlext.sql``) and, statement by statement, on an in-memory DuckDB holding the same data. A
statement is preceded by annotation comments::

    -- check: rows                  the result equals DuckDB's result of the same statement
    -- check: rows ordered          ... in the same order
    -- check: table t [= d]         afterwards, sqlext table t (read by delta-rs) equals DuckDB's
                                    table d (default: t) after DuckDB ran the statement
    -- check: expect [(1, 'a')]     the result rows (a Python literal; any order)
    -- check: api <expression>      the result equals a DataFrame from the Python API (names in
                                    scope: spark, sqlext, DeltaTable, loc(name) -> location)
    -- check: count 3               the result has 3 rows
    -- check: columns a, b          the result's column names
    -- check: match <regex>         the result rows, printed as ``a|b`` lines, match the regex
    -- check: history t 2 WRITE     table t's latest version is 2, made by operation WRITE
    -- check: error Class <regex>   the statement raises sqlext.errors.Class matching <regex>
    -- duckdb: <sql>                what DuckDB runs instead (lines join; ``-`` = nothing). By
                                    default DuckDB runs the same statement when a ``rows`` or
                                    ``table`` check needs it, and nothing otherwise.
    -- needs: merge                 the engine modules the case uses (documentation)

Statements end with ``;`` at the end of a line. ``${tmp}`` stands for a scratch directory.
Ordinary comments inside a statement are part of it (comments must survive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent
_ANNOTATION = re.compile(r"^\s*--\s*(check|duckdb|needs):\s?(.*)$")


@dataclass
class Case:
    """One statement of a scenario and how to verify it."""

    file: str
    line: int
    sql: str
    checks: list[tuple[str, str]] = field(default_factory=list)
    duckdb: str | None = None
    needs: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.sql}"


def scenario_files() -> list[Path]:
    return sorted(CORPUS_DIR.glob("*.sql"))


def load(path: Path) -> list[Case]:
    """The cases of one scenario file, in order."""
    cases: list[Case] = []
    pending: dict = {"checks": [], "duckdb": [], "needs": []}
    body: list[str] = []
    start = 0
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = _ANNOTATION.match(line) if not body else None
        if match:
            key, value = match.groups()
            if key == "check":
                kind, _, arg = value.strip().partition(" ")
                pending["checks"].append((kind, arg.strip()))
            else:
                pending[key].append(value.strip())
            continue
        if not body and (not line.strip() or line.lstrip().startswith("--")):
            continue
        if not body:
            start = number
        body.append(line)
        if line.rstrip().endswith(";"):
            sql = "\n".join(body).strip()[:-1].rstrip()
            duckdb = " ".join(pending["duckdb"]) if pending["duckdb"] else None
            cases.append(Case(path.name, start, sql, pending["checks"], duckdb, pending["needs"]))
            pending = {"checks": [], "duckdb": [], "needs": []}
            body = []
    if body:
        raise ValueError(f"{path.name}:{start}: statement without a final ';'")
    return cases


def all_cases() -> list[Case]:
    return [case for path in scenario_files() for case in load(path)]


_PLACEHOLDER = re.compile(r"\$\{(?:(tmp)|ts:([^:}]+):(\d+))\}")


def substitute(sql: str, tmp: str, commit_time) -> str:
    """Fill in ``${tmp}`` and ``${ts:<table>:<version>}`` (the commit time of that version, as
    ``commit_time(table, version)`` gives it)."""

    def fill(match: re.Match) -> str:
        if match.group(1):
            return tmp
        return commit_time(match.group(2), int(match.group(3)))

    return _PLACEHOLDER.sub(fill, sql)


def commit_time_of(spark):
    """``commit_time(table, version)`` for :func:`substitute`: the version's commit timestamp in
    UTC, as ``YYYY-MM-DD HH:MM:SS.fff``."""
    import datetime as dt

    from sqlext.catalog import Catalog
    from sqlext.log.table import DeltaLog

    def commit_time(table: str, version: int) -> str:
        location = Catalog(spark).resolve(table).location
        ms = DeltaLog(location).commit_timestamps()[version]
        when = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)
        return when.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d}"

    return commit_time
