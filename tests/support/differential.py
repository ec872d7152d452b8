"""Seeded random differential testing against delta-spark: tables, statements, runs, verdicts.

From a seed, :func:`make_sequence` draws a table (bigint, int, string with quotes and unicode,
decimal, date, timestamp and boolean columns, NULLs; partitioned or not; the change data feed
on; sometimes deletion vectors or column mapping) and a sequence of statements over it: INSERT
(VALUES, SELECT, some writing nothing), INSERT OVERWRITE (static partition too), REPLACE WHERE,
DELETE, UPDATE, MERGE with every clause kind, time-travel reads (``VERSION AS OF``) and
``table_changes_by_path``. Some statements are meant to fail (unknown columns, values that do
not cast, several source rows matching one target row, a version that does not exist).

:func:`run_sqlext` runs a sequence in this process; :func:`submit_delta_spark` sends it to the
delta-spark worker as one batch (one round trip), so both engines run it at the same time.
:func:`compare` then checks, after every statement: success or failure (and the error condition
where both give one), the statement's result rows, the latest version, the table's rows at that
version and the change feed of that version. A disagreement listed in
:data:`KNOWN_DISAGREEMENTS` (with its reason; each has a named test in
``tests/deltaspark/test_deltaspark_random_differential.py``) is reported as known; once the
tables differ the rest of the sequence is not compared.

Used by ``tests/deltaspark/test_deltaspark_random_differential.py`` (a quick seed set) and
``scripts/differential.py`` (a long run).
"""

from __future__ import annotations

import datetime as dt
import os
import random
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from tests.support.compare import rows as normalised_rows
from tests.support.deltaspark import delta_path

#: The random tables' columns and their SQL types.
COLUMNS = {"id": "BIGINT", "i": "INT", "s": "STRING", "d": "DECIMAL(10,2)", "dt": "DATE",
           "ts": "TIMESTAMP", "b": "BOOLEAN"}
PARTITION_CHOICES = [None, None, "s", "dt", "b", "i"]
STRINGS = ["a", "b", "it's", "naïve", "日本語", "", 'x"y', "a/b=c", "Ω%_", "back\\slash"]


class Grammar:
    """Random literals, predicates and values over ``columns`` (name -> SQL type), from ``rng``."""

    def __init__(self, rng: random.Random, columns: dict[str, str] = COLUMNS):
        self.rng = rng
        self.columns = columns

    def value(self, column: str):
        """A Python value for ``column`` (None sometimes)."""
        rng, typ = self.rng, self.columns[column]
        if column != "id" and rng.random() < 0.12:
            return None
        if typ in ("BIGINT", "INT"):
            return rng.randint(0, 15) if column == "id" else rng.randint(-3, 40)
        if typ == "STRING":
            return rng.choice(STRINGS)
        if typ.startswith("DECIMAL"):
            return Decimal(rng.randint(-5000, 5000)) / 100
        if typ == "DATE":
            return dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 9))
        if typ == "TIMESTAMP":
            return (dt.datetime(2024, 1, 1) + dt.timedelta(seconds=rng.randint(0, 86400 * 3))
                    + dt.timedelta(microseconds=rng.choice([0, 1, 123456])))
        return rng.random() < 0.5

    def present(self, column: str):
        """A random value for ``column`` that is not None."""
        value = None
        while value is None:
            value = self.value(column)
        return value

    def literal(self, column: str, value=...) -> str:
        """``value`` (default: a random one) as a SQL literal of ``column``'s type."""
        typ = self.columns[column]
        value = self.value(column) if value is ... else value
        if value is None:
            return f"CAST(NULL AS {typ})"
        if typ == "STRING":
            return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        if typ.startswith("DECIMAL"):
            return f"CAST({value} AS {typ})"
        if typ == "DATE":
            return f"DATE'{value.isoformat()}'"
        if typ == "TIMESTAMP":
            return f"TIMESTAMP'{value.isoformat(sep=' ')}'"
        if typ == "BOOLEAN":
            return "true" if value else "false"
        return str(value)

    def row(self, columns=None) -> str:
        """``(lit, lit, ...)`` for ``columns`` (default: all)."""
        return "(" + ", ".join(self.literal(c) for c in columns or self.columns) + ")"

    def atom(self, alias: str = "") -> str:
        """One comparison on one column (``alias`` prefixes the column, e.g. ``t.``)."""
        rng = self.rng
        column = rng.choice(list(self.columns))
        c, typ = alias + column, self.columns[column]
        if rng.random() < 0.12:
            return f"{c} IS {rng.choice(['', 'NOT '])}NULL"
        if typ == "BOOLEAN":
            return rng.choice([c, f"NOT {c}", f"{c} = true"])
        if typ == "STRING":
            return rng.choice([f"{c} = {self.literal(column)}", f"{c} <> {self.literal(column)}",
                               f"{c} LIKE 'a%'", f"length({c}) > 1",
                               f"{c} IN ({self.literal(column)}, {self.literal(column)})"])
        op = rng.choice(["<", "<=", ">", ">=", "=", "<>"])
        if rng.random() < 0.15:
            return f"{c} BETWEEN {self.literal(column)} AND {self.literal(column)}"
        return f"{c} {op} {self.literal(column)}"

    def predicate(self, alias: str = "") -> str:
        """A condition: one to three atoms joined by AND / OR, sometimes negated."""
        text = self.atom(alias)
        for _ in range(self.rng.choice([0, 0, 1, 2])):
            text = f"{text} {self.rng.choice(['AND', 'OR'])} {self.atom(alias)}"
        return f"NOT ({text})" if self.rng.random() < 0.1 else text

    def expression(self, column: str, alias: str = "", other: str | None = None) -> str:
        """A new value for ``column``: from the row itself (``alias``), another side (``other``,
        e.g. a MERGE source ``s.``) or a literal."""
        rng, typ = self.rng, self.columns[column]
        c = alias + column
        if other is not None and rng.random() < 0.4:
            return other + column
        if rng.random() < 0.25:
            return self.literal(column)
        choices = {
            "BIGINT": [f"{c} + 100", f"{c} * 2"],
            "INT": [f"{c} + 1", f"coalesce({c}, 0) - 7", f"{c} * 2"],
            "STRING": [f"concat({c}, 'é')", f"upper({c})", f"CAST({alias}i AS STRING)"],
            "DATE": [f"date_add({c}, 1)", f"date_sub({c}, 3)"],
            "TIMESTAMP": [f"{c} + INTERVAL 1 HOUR", f"{c} - INTERVAL 2 DAYS"],
            "BOOLEAN": [f"NOT {c}", f"{alias}i > 10"],
        }.get(typ, [f"{c} + 1.5", f"{c} * 2", f"-{c}"])
        return rng.choice(choices)

    def assignments(self, alias: str = "", other: str | None = None, avoid=()) -> str:
        """``col = value, ...`` for one to three columns not in ``avoid``."""
        columns = [c for c in self.columns if c not in avoid]
        chosen = self.rng.sample(columns, self.rng.randint(1, min(3, len(columns))))
        return ", ".join(f"{c} = {self.expression(c, alias, other)}" for c in chosen)


@dataclass
class TableSpec:
    """The random table of one sequence."""

    partition: str | None
    deletion_vectors: bool
    column_mapping: bool

    def create_sql(self) -> str:
        """CREATE TABLE for ``{t}``: the change data feed on, the spec's features."""
        columns = ", ".join(f"{c} {typ}" for c, typ in COLUMNS.items())
        props = {"delta.enableChangeDataFeed": "true"}
        if self.deletion_vectors:
            props["delta.enableDeletionVectors"] = "true"
        if self.column_mapping:
            props["delta.columnMapping.mode"] = "name"
        text = f"CREATE TABLE {{t}} ({columns}) USING delta"
        if self.partition:
            text += f" PARTITIONED BY ({self.partition})"
        return text + " TBLPROPERTIES (" + ", ".join(f"'{k}' = '{v}'" for k, v in props.items()) + ")"


@dataclass
class Sequence:
    """A seed's table and statements; ``{t}`` stands for the table, ``{path}`` for its path."""

    seed: int
    table: TableSpec
    statements: list[str]


class StatementMaker:
    """Draws the statements of one sequence (see the module docstring)."""

    def __init__(self, rng: random.Random, table: TableSpec):
        self.rng = rng
        self.g = Grammar(rng)
        self.table = table
        self.versions = 1    # a bound for VERSION AS OF: the versions made so far, at least

    def rows(self, low=1, high=4) -> str:
        return ", ".join(self.g.row() for _ in range(self.rng.randint(low, high)))

    def source(self, alias: str = "s") -> str:
        """A MERGE / INSERT source with the table's columns: VALUES (keys may repeat) or the
        table itself at an older version."""
        names = ", ".join(COLUMNS)
        if self.rng.random() < 0.25:
            version = self.rng.randint(0, self.versions)
            return (f"(SELECT id + {self.rng.choice([0, 0, 1, 5])} AS id, i, s, d, dt, ts, b"
                    f" FROM {{t}} VERSION AS OF {version} WHERE {self.g.predicate()}) {alias}")
        return f"(SELECT * FROM VALUES {self.rows(1, 5)} AS v({names})) {alias}"

    def insert(self) -> str:
        kind = self.rng.choice(["values", "values", "select_self", "select_none", "overwrite",
                                "replace_where", "partition_overwrite"])
        names = ", ".join(COLUMNS)
        if kind == "values":
            return f"INSERT INTO {{t}} VALUES {self.rows()}"
        if kind == "select_self":
            return (f"INSERT INTO {{t}} SELECT id + 20, i, s, d, dt, ts, b FROM {{t}}"
                    f" WHERE {self.g.predicate()}")
        if kind == "select_none":
            return f"INSERT INTO {{t}} SELECT * FROM VALUES {self.rows(1, 2)} AS v({names}) WHERE false"
        if kind == "overwrite":
            if self.rng.random() < 0.5:
                return f"INSERT OVERWRITE {{t}} VALUES {self.rows()}"
            return f"INSERT OVERWRITE {{t}} SELECT * FROM {{t}} WHERE {self.g.predicate()}"
        if kind == "partition_overwrite" and self.table.partition:
            p = self.table.partition
            others = [c for c in COLUMNS if c != p]
            return (f"INSERT OVERWRITE {{t}} PARTITION ({p} = {self.g.literal(p, self.g.present(p))})"
                    f" VALUES {', '.join(self.g.row(others) for _ in range(self.rng.randint(1, 3)))}")
        # REPLACE WHERE: rows outside the condition make it fail in both engines
        column = self.table.partition or self.rng.choice(["i", "dt", "b"])
        condition = self.g.atom() if self.rng.random() < 0.3 else f"{column} = {self.g.literal(column, self.g.present(column))}"
        return f"INSERT INTO {{t}} REPLACE WHERE {condition} VALUES {self.rows(1, 3)}"

    def merge(self) -> str:
        g, rng = self.g, self.rng
        clauses = []
        for _ in range(rng.choice([0, 1, 1, 2])):
            action = rng.choice(["UPDATE SET *", "UPDATE", "DELETE"])
            action = f"UPDATE SET {g.assignments('t.', 's.', avoid=('id',))}" if action == "UPDATE" else action
            clauses.append(("WHEN MATCHED", action))
        for _ in range(rng.choice([0, 1, 1, 2])):
            action = "INSERT *" if rng.random() < 0.6 else (
                "INSERT (id, i, s) VALUES (s.id, " + g.expression("i", "s.") + ", s.s)")
            clauses.append(("WHEN NOT MATCHED", action))
        for _ in range(rng.choice([0, 0, 1, 2])):
            action = "DELETE" if rng.random() < 0.4 else f"UPDATE SET {g.assignments('t.', avoid=('id',))}"
            clauses.append(("WHEN NOT MATCHED BY SOURCE", action))
        if not clauses:
            clauses.append(("WHEN MATCHED", "DELETE"))
        text = []
        for i, (when, action) in enumerate(clauses):
            later = any(w == when for w, _ in clauses[i + 1:])
            # only the last clause of a kind may go without a condition (else both engines refuse)
            conditional = later and rng.random() < 0.95 or rng.random() < 0.4
            alias = "s." if when == "WHEN NOT MATCHED" else "t."
            condition = f" AND {g.predicate(alias)}" if conditional else ""
            text.append(f"{when}{condition} THEN {action}")
        on = "t.id = s.id" if rng.random() < 0.85 else f"t.id = s.id AND {g.atom('t.')}"
        return f"MERGE INTO {{t}} t USING {self.source()} ON {on} " + " ".join(text)

    def failing(self) -> str:
        g = self.g
        return self.rng.choice([
            "UPDATE {t} SET nope = 1",
            "DELETE FROM {t} WHERE nope > 1",
            "INSERT INTO {t} VALUES (1, 2)",
            # SET i = 'abc' (a constant that does not cast) fails as in delta-spark even when
            # no row matches: test_constant_set_value_that_does_not_cast
            f"UPDATE {{t}} SET i = concat('x', s) WHERE {g.predicate()}",
            f"INSERT INTO {{t}} SELECT 'x' AS id, i, s, d, dt, ts, b FROM {{t}} WHERE {g.predicate()}",
            f"UPDATE {{t}} SET d = d * 10000000 WHERE {g.predicate()}",
            "SELECT * FROM {t} VERSION AS OF 999",
            "MERGE INTO {t} t USING (SELECT id, i FROM {t}) s ON t.id = s.id"
            " WHEN MATCHED THEN UPDATE SET i = s.i WHEN MATCHED AND s.i > 0 THEN DELETE",
        ])

    def statement(self) -> str:
        """One random statement."""
        rng, g = self.rng, self.g
        kind = rng.choices(["insert", "delete", "update", "merge", "read", "changes", "fail"],
                           weights=[4, 2, 3, 5, 1, 1, 1])[0]
        if kind == "insert":
            return self.insert()
        if kind == "delete":
            return f"DELETE FROM {{t}} WHERE {g.predicate()}"
        if kind == "update":
            return f"UPDATE {{t}} SET {g.assignments()} WHERE {g.predicate()}"
        if kind == "merge":
            return self.merge()
        if kind == "read":
            return (f"SELECT * FROM {{t}} VERSION AS OF {rng.randint(0, self.versions)}"
                    f" WHERE {g.predicate()}")
        if kind == "changes":
            start = rng.randint(0, self.versions)
            end = f", {start + rng.randint(0, 2)}" if rng.random() < 0.5 else ""
            return f"SELECT * FROM table_changes_by_path('{{path}}', {start}{end})"
        return self.failing()


def make_sequence(seed: int, statements: int) -> Sequence:
    """The table and ``statements`` random statements of ``seed`` (after CREATE and a first
    INSERT), the same on every run; statements a KNOWN_DISAGREEMENTS entry covers are drawn
    again."""
    rng = random.Random(seed)
    table = TableSpec(partition=rng.choice(PARTITION_CHOICES),
                      deletion_vectors=rng.random() < 0.3, column_mapping=rng.random() < 0.25)
    maker = StatementMaker(rng, table)
    texts = [table.create_sql(), f"INSERT INTO {{t}} VALUES {maker.rows(4, 8)}"]
    while len(texts) < statements + 2:
        text = maker.statement()
        if not any(entry.matches(text) for entry in KNOWN_DISAGREEMENTS):  # the tester skips them
            texts.append(text)
            maker.versions += 1   # an upper bound: a statement makes at most one version
    return Sequence(seed, table, texts)


def render(statement: str, path: Path) -> str:
    """``statement`` for the table at ``path``."""
    return statement.replace("{t}", delta_path(path)).replace("{path}", str(path).replace("'", "\\'"))


# ---------------------------------------------------------------------------------- running


@dataclass
class Outcome:
    """One statement's outcome in one engine."""

    ok: bool
    result: pa.Table | None = None    # the statement's result rows
    error_class: str | None = None
    error_type: str | None = None
    message: str = ""
    version: int | None = None        # the table's latest version after the statement


@dataclass
class Run:
    """A sequence run by one engine: each statement's outcome, then the table's rows at every
    version (``_version`` column) and its whole change feed."""

    outcomes: list[Outcome]
    rows: pa.Table | None = None
    changes: pa.Table | None = None


def latest_version(path: Path) -> int | None:
    """The newest commit in ``path``'s log (None before the table exists)."""
    log = Path(path) / "_delta_log"
    if not log.is_dir():
        return None
    versions = [int(f[:20]) for f in os.listdir(log) if f.endswith(".json") and f[:20].isdigit()]
    return max(versions, default=None)


_DS_LATEST = """
import os
log = os.path.join(P, "_delta_log")
names = os.listdir(log) if os.path.isdir(log) else []
result = max([int(f[:20]) for f in names if f.endswith(".json") and f[:20].isdigit()], default=None)
"""
_DS_ROWS = _DS_LATEST + """
frames = [spark.read.format("delta").option("versionAsOf", v).load(P).withColumn("_version", F.lit(v))
          for v in range(result + 1)]
union = frames[0]
for frame in frames[1:]:
    union = union.unionByName(frame)
result = union
"""


def submit_delta_spark(ds, sequence: Sequence, path: Path):
    """Send ``sequence`` on ``path`` to the delta-spark worker ``ds`` as one batch; a pending
    answer whose ``result()`` is the :class:`Run`."""
    requests = []
    for statement in sequence.statements:
        requests.append(("sql", {"sql": render(statement, path)}))
        requests.append(("exec", {"code": f"P = {str(path)!r}\n" + _DS_LATEST}))
    requests.append(("exec", {"code": f"P = {str(path)!r}\n" + _DS_ROWS}))
    requests.append(("changes", {"path": str(path), "start": 0}))
    pending = ds.submit_batch(requests)

    class _Pending:
        def result(self) -> Run:
            answers = pending.result()
            outcomes = []
            for answer, version in zip(answers[0:-2:2], answers[1:-2:2]):
                outcome = (Outcome(False, error_class=answer.condition, error_type=answer.java_class,
                                   message=answer.message)
                           if isinstance(answer, Exception) else Outcome(True, result=answer))
                outcome.version = version
                outcomes.append(outcome)
            rows, changes = (None if isinstance(a, Exception) else a for a in answers[-2:])
            return Run(outcomes, rows, changes)

    return _Pending()


def run_sqlext(spark, sequence: Sequence, path: Path) -> Run:
    """Run ``sequence`` on ``path`` with sqlext in this process."""
    import sqlext
    from sqlext.errors import SqlextError

    outcomes = []
    for statement in sequence.statements:
        try:
            frame = sqlext.sql(spark, render(statement, path))
            outcome = Outcome(True, result=frame.toArrow() if frame is not None else None)
        except SqlextError as exc:
            outcome = Outcome(False, error_class=exc.error_class, error_type=type(exc).__name__,
                              message=str(exc))
        except Exception as exc:  # noqa: BLE001 - not a SqlextError: a disagreement of its own
            outcome = Outcome(False, error_class=getattr(exc, "getCondition", lambda: None)(),
                              error_type="not a SqlextError: " + type(exc).__name__, message=str(exc))
        outcome.version = latest_version(path)
        outcomes.append(outcome)
    latest = latest_version(path)
    if latest is None:
        return Run(outcomes)
    frames = [sqlext.read(spark, str(path), versionAsOf=v).selectExpr("*", f"{v} AS _version")
              for v in range(latest + 1)]
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return Run(outcomes, union.toArrow(), sqlext.changes(spark, str(path), startingVersion=0).toArrow())


# ------------------------------------------------------------------------------ comparing


@dataclass
class Disagreement:
    """Where the engines differ: ``kind`` is outcome, error_class, not_sqlext_error, result,
    version, rows or changes; ``known`` names the KNOWN_DISAGREEMENTS entry it matches."""

    seed: int
    index: int
    statement: str
    kind: str
    ours: str
    theirs: str
    known: str | None = None

    def __str__(self) -> str:
        label = f"known ({self.known})" if self.known else "UNLISTED"
        return (f"seed {self.seed} statement {self.index} [{self.kind}, {label}]: {self.statement}\n"
                f"  sqlext:      {self.ours[:600]}\n  delta-spark: {self.theirs[:600]}")


@dataclass
class KnownDisagreement:
    """A listed difference: ``kind`` of disagreement, the statements it concerns (``matches``:
    statement text -> bool), the reason, and the named test showing it."""

    name: str
    kind: str
    matches: object
    reason: str
    test: str


#: Differences the tester reports as known (README "Tests" lists them with these reasons).
KNOWN_DISAGREEMENTS: list[KnownDisagreement] = [
    KnownDisagreement(
        "static_overwrite_of_boolean_partition", "outcome",
        lambda statement: statement.startswith("INSERT OVERWRITE {t} PARTITION (b = "),
        "delta-spark 4.4 refuses INSERT OVERWRITE ... PARTITION (b = true) on a BOOLEAN partition "
        "column (SparkException: Table does not support overwrite by expression: Spark hands "
        "the static partition to Delta's V2 write as an expression Delta cannot translate); "
        "sqlext replaces the partition as it does for every other partition type",
        "test_known_static_overwrite_of_boolean_partition"),
    KnownDisagreement(
        "static_overwrite_of_empty_string_partition", "outcome",
        lambda statement: statement.startswith("INSERT OVERWRITE {t} PARTITION (s = '')"),
        "INSERT OVERWRITE t PARTITION (s = '') on a STRING partition column: delta-spark 4.4 "
        "refuses it (DELTA_REPLACE_WHERE_MISMATCH: the empty string is stored as NULL, which its "
        "own condition s <=> '' does not hold); sqlext replaces the partition of NULL and '' "
        "(stored alike) with the rows",
        "test_known_static_overwrite_of_empty_string_partition"),
]


@dataclass
class Verdict:
    """The comparison of one sequence: statements compared and disagreements found."""

    seed: int
    compared: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def unlisted(self) -> list[Disagreement]:
        return [d for d in self.disagreements if d.known is None]


def _multiset(table: pa.Table | None, drop=("_commit_timestamp", "_version")) -> Counter:
    if table is None:
        return Counter()
    table = table.drop_columns([c for c in drop if c in table.column_names])
    columns = sorted(table.column_names)
    return Counter(normalised_rows(table, columns=columns))


def rows_at(table: pa.Table | None, column: str, version: int) -> pa.Table | None:
    """The rows of ``table`` whose ``column`` (``_version``, ``_commit_version``) is ``version``."""
    if table is None:
        return None
    return table.filter(pc.equal(table[column], version))


def _first_line(message: str) -> str:
    """The line of an error message that says what failed (py4j's "An error occurred while
    calling o47.sql." and stack frames are not it)."""
    lines = [line.strip().lstrip(": ") for line in message.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("An error occurred", "at "))]
    return lines[0][:300] if lines else ""


def _describe(outcome: Outcome) -> str:
    if outcome.ok:
        return f"ok (version {outcome.version})"
    return (f"{outcome.error_type} [{outcome.error_class}] (version {outcome.version}): "
            + _first_line(outcome.message))


def same_error_class(ours: Outcome, theirs: Outcome) -> bool:
    """Both failed the same way, as far as both say: delta-spark's condition is sqlext's, or
    delta-spark names sqlext's in its causes (a task's failure wraps a write's
    ``[DELTA_...]``), or one of them names none."""
    if not ours.error_class or not theirs.error_class:
        return True
    return ours.error_class == theirs.error_class or f"[{ours.error_class}]" in theirs.message


def _shown(counter: Counter) -> str:
    return repr(sorted(counter.elements(), key=repr)[:8]) + (" ..." if sum(counter.values()) > 8 else "")


def _differences(statement: str, ours: Outcome, theirs: Outcome, mine: Run, their: Run):
    """``(kind, ours, theirs, state_differs)`` for each way the two outcomes differ."""
    if ours.ok != theirs.ok:
        yield "outcome", _describe(ours), _describe(theirs), ours.version != theirs.version
        return
    if not ours.ok:
        if ours.error_type and ours.error_type.startswith("not a SqlextError"):
            yield "not_sqlext_error", _describe(ours), _describe(theirs), False
        elif not same_error_class(ours, theirs):
            yield "error_class", _describe(ours), _describe(theirs), False
    elif ours.result is not None and theirs.result is not None:
        shared = [c for c in theirs.result.column_names if c in ours.result.column_names]
        a, b = _multiset(ours.result.select(shared)), _multiset(theirs.result.select(shared))
        if a != b:
            yield "result", _shown(a - b), _shown(b - a), False
    if ours.version != theirs.version:
        yield "version", str(ours.version), str(theirs.version), True
        return
    if ours.version is None:
        return
    a, b = _multiset(rows_at(mine.rows, "_version", ours.version)), _multiset(rows_at(their.rows, "_version", ours.version))
    if a != b:
        yield "rows", _shown(a - b), _shown(b - a), True
    a = _multiset(rows_at(mine.changes, "_commit_version", ours.version))
    b = _multiset(rows_at(their.changes, "_commit_version", ours.version))
    if a != b:
        yield "changes", _shown(a - b), _shown(b - a), True


def known_as(kind: str, statement: str) -> str | None:
    """The KNOWN_DISAGREEMENTS entry covering a ``kind`` disagreement on ``statement``."""
    for entry in KNOWN_DISAGREEMENTS:
        if entry.kind == kind and entry.matches(statement):
            return entry.name
    return None


def compare(sequence: Sequence, mine: Run, their: Run) -> Verdict:
    """Compare two runs statement by statement; stop at the first statement after which the
    tables differ (everything later would differ too)."""
    verdict = Verdict(sequence.seed)
    for index, (statement, ours, theirs) in enumerate(zip(sequence.statements, mine.outcomes,
                                                          their.outcomes)):
        verdict.compared += 1
        diverged, cause = False, None
        for kind, a, b, state_differs in _differences(statement, ours, theirs, mine, their):
            # a known difference of outcome explains the version and rows that follow from it
            cause = cause or known_as(kind, statement)
            verdict.disagreements.append(Disagreement(sequence.seed, index, statement, kind, a, b,
                                                      cause))
            diverged = diverged or state_differs
        if diverged:
            break
    return verdict


def run_pair(spark, ds, sequence: Sequence, workdir: Path) -> tuple[Run, Run]:
    """Run ``sequence`` on sqlext and on delta-spark (at the same time) under ``workdir``:
    ``(sqlext's run, delta-spark's run)``."""
    pending = submit_delta_spark(ds, sequence, Path(workdir) / f"delta-spark-{sequence.seed}")
    mine = run_sqlext(spark, sequence, Path(workdir) / f"sqlext-{sequence.seed}")
    return mine, pending.result()


def run_both(spark, ds, sequence: Sequence, workdir: Path) -> Verdict:
    """Run ``sequence`` on both engines (:func:`run_pair`); the comparison."""
    return compare(sequence, *run_pair(spark, ds, sequence, workdir))
