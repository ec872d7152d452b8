"""A grammar-driven generator of Spark SQL queries over two small tables, ``t1`` and ``t2``, for
the differential test (``test_sql_differential.py``): each statement runs through ``sqlext.sql`` on
sqlext tables and through plain ``spark.sql`` on the same rows in temporary views.

The grammar covers what Spark's own ``sql-tests`` (``sql/core/src/test/resources/sql-tests/
inputs/``: ``literals.sql``, ``string-functions.sql``, ``higher-order-functions.sql``,
``window.sql``, ``group-by.sql``, ``cte.sql``, ``except.sql``, ``intersect-all.sql``,
``pivot.sql``, ``subquery/``, ``join-*``) exercise: literals and their escapes, casts, CASE,
string / date / array / map functions, lambdas, aggregates, windows, joins, CTEs, set operations,
subqueries, hints, PIVOT, LATERAL VIEW, GROUP BY / HAVING / ORDER BY / LIMIT. A share of the
statements are deliberately invalid (syntax or analysis errors): both sides must raise.

Each generated :class:`Case` knows whether its rows come in a defined order (a top-level
``ORDER BY`` over a unique key).
"""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass
from decimal import Decimal

T1_DDL = ("id INT, s STRING, x DOUBLE, d DATE, ts TIMESTAMP, arr ARRAY<INT>, "
          "dec DECIMAL(10,2), b BOOLEAN, grp STRING")
T2_DDL = "id INT, v STRING, n BIGINT"

_STRINGS = ["o'neil", 'say "hi"', "back\\slash", "ünï €", "line\nbreak", "", None, "a%b_c",
            "Tab\tbed", "mixed Case"]
T1_ROWS = [
    (i, _STRINGS[i % len(_STRINGS)], None if i % 7 == 3 else i * 1.5 - 4,
     datetime.date(2024, 1, 1) + datetime.timedelta(days=i * 11),
     datetime.datetime(2024, 1, 1, 12, 0) + datetime.timedelta(hours=i * 17),
     None if i % 5 == 4 else list(range(i % 4)), Decimal(f"{i * 3}.{i % 10}5"),
     None if i % 6 == 5 else i % 2 == 0, ["a", "b", "c", None][i % 4])
    for i in range(1, 13)
]
T2_ROWS = [(i, ["x", "o'neil", "y", None, "z"][i % 5], i * 100 - 250) for i in range(3, 11)]

# --- literals (Spark's literals.sql and string escapes) -----------------------------------------

STRING_LITERALS = [
    "'o''neil'", "'it\\'s'", '"double"', '"dq \\"inner\\" q"', "'a' 'b'", "'a' \"b\" 'c'",
    "'\\n'", "'tab\\there'", "'\\\\'", "'back\\\\slash'", "r'raw\\n'", "R'C:\\new'",
    "'ünï €'", "'\\u00e9t\\u00e9'", "'\\101'", "'%'", "'a%b\\_c'", "''", "'o''neil' 'x'",
    "'semi;colon'", "'-- not a comment'", "'/* nor this */'", "'`tick`'", "'$dollar$'",
]
NUMBER_LITERALS = [
    "1", "-2", "0", "1e3", "1.5E-2", "1.0BD", "10L", "5Y", "7S", "3.14", ".5", "1.", "2D",
    "1.5F", "123456789012345678901234567890.1BD", "0x1F", "1_000", "9223372036854775807",
    "-9223372036854775808L", "2147483648", "1e0", "000123",
]
OTHER_LITERALS = [
    "DATE '2024-02-29'", "TIMESTAMP '2024-01-02 03:04:05.678'", "TIMESTAMP_NTZ '2024-01-02 03:04'",
    "INTERVAL '1' DAY", "INTERVAL 2 HOURS", "INTERVAL '1-2' YEAR TO MONTH",
    "INTERVAL '3 04:05:06' DAY TO SECOND", "X'0A1B'", "NULL", "TRUE", "false",
    "array(1, 2, 3)", "map('k', 'v', 'o''k', 'w')", "named_struct('a', 1, 'b', 'x''y')",
    "struct(1 AS a, 'q' AS b)", "CAST(NULL AS STRING)", "date'2024-01-01'",
]

TYPES = ["INT", "BIGINT", "STRING", "DOUBLE", "DECIMAL(12,3)", "DATE", "TIMESTAMP", "BOOLEAN",
         "SMALLINT", "TINYINT", "FLOAT", "BINARY", "VARCHAR(5)", "CHAR(3)", "ARRAY<STRING>"]

LIKE_PATTERNS = ["'%o%'", "'%''%'", r"'a\%%'", "'_%'", r'"%\'%"', r"'%\\%'"]
NUM_COLS = ["id", "x", "dec", "t1.id", "t1.x"]
STR_COLS = ["s", "grp", "t1.s", "`s`"]


@dataclass
class Case:
    """One statement; ``ordered``: its rows come in a defined order."""

    sql: str
    ordered: bool = False


class Generator:
    """Random statements from the grammar below (deterministic for a seed)."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def pick(self, items):
        return self.r.choice(items)

    # --- expressions ---------------------------------------------------------------------------

    def literal(self) -> str:
        return self.pick([self.pick(STRING_LITERALS), self.pick(NUMBER_LITERALS),
                          self.pick(OTHER_LITERALS)])

    def num(self, depth: int = 0) -> str:
        r = self.r.random()
        if depth > 2 or r < 0.35:
            return self.pick(NUM_COLS + ["1", "2.5", "1e3", "1.0BD", "10L", "-3", "7S"])
        op = self.pick(["+", "-", "*", "/", "%", "div", "&", "|", "^"])
        if op in ("&", "|", "^", "div"):
            return f"(CAST({self.num(depth + 1)} AS BIGINT) {op} {self.pick(['3', '5L', 'id'])})"
        if r < 0.7:
            return f"({self.num(depth + 1)} {op} {self.num(depth + 1)})"
        return self.pick([
            f"abs({self.num(depth + 1)})", f"round({self.num(depth + 1)}, 1)",
            f"coalesce(x, {self.num(depth + 1)})", f"nvl(dec, 0)", f"greatest(id, 3, {self.num(3)})",
            f"length({self.str_(depth + 1)})", f"size(arr)", f"CAST({self.str_(depth + 1)} AS INT)",
            f"try_cast('12' AS INT)", "id::DOUBLE", f"pmod(id, 3)", f"element_at(arr, 1)",
            f"aggregate(coalesce(arr, array()), 0, (acc, y) -> acc + y)", "datediff(d, DATE '2024-01-01')",
            f"CASE WHEN id > 5 THEN 1 WHEN id = 2 THEN 2 ELSE 0 END", "hash(s, id)",
            "unix_timestamp(ts)", "year(d) * 100 + month(d)", "bit_count(id)", "sign(x)",
        ])

    def str_(self, depth: int = 0) -> str:
        r = self.r.random()
        if depth > 2 or r < 0.35:
            return self.pick(STR_COLS + STRING_LITERALS)
        return self.pick([
            f"upper({self.str_(depth + 1)})", f"lower({self.str_(depth + 1)})",
            f"concat({self.str_(depth + 1)}, {self.pick(STRING_LITERALS)})",
            f"{self.str_(depth + 1)} || {self.pick(STRING_LITERALS)}",
            f"substr({self.str_(depth + 1)}, 2, 3)", f"replace(s, 'o', {self.pick(STRING_LITERALS)})",
            f"regexp_replace(s, '[aeiou]', 'X')", "regexp_replace(s, '\\\\s+', '_')",
            "regexp_extract(s, '(\\\\w+)', 1)", f"lpad(grp, 4, {self.pick(STRING_LITERALS)})",
            f"trim({self.str_(depth + 1)})", f"coalesce(s, {self.pick(STRING_LITERALS)})",
            f"CAST({self.num(depth + 1)} AS STRING)", "format_string('%s-%d', s, id)",
            "date_format(ts, 'yyyy-MM-dd''T''HH')", "CAST(d AS STRING)", "initcap(s)",
            "translate(s, 'on', 'ON')", "split_part(coalesce(s, 'a b'), ' ', 1)",
            f"CASE grp WHEN 'a' THEN 'was a' WHEN {self.pick(STRING_LITERALS)} THEN 'lit' ELSE grp END",
            f"if(b, {self.pick(STRING_LITERALS)}, 'no')", "reverse(s)", "repeat(grp, 2)",
            "concat_ws('|', s, grp, 'x''y')", "array_join(transform(coalesce(arr, array()), "
            "y -> CAST(y AS STRING)), ',')", "hex(id)", "base64(CAST(s AS BINARY))",
            "get_json_object('{\"a\": \"o''neil\"}', '$.a')", "sha2(coalesce(s, ''), 256)",
            "typeof(" + self.literal() + ")", "CAST(" + self.literal() + " AS STRING)",
        ])

    def pred(self, depth: int = 0) -> str:
        r = self.r.random()
        if depth < 2 and r < 0.25:
            return f"({self.pred(depth + 1)} {self.pick(['AND', 'OR'])} {self.pred(depth + 1)})"
        return self.pick([
            f"{self.num(depth + 1)} {self.pick(['>', '<', '>=', '<=', '=', '<>', '!=', '<=>'])} "
            f"{self.num(depth + 1)}",
            f"{self.str_(depth + 1)} = {self.pick(STRING_LITERALS)}",
            f"s {self.pick(['LIKE', 'NOT LIKE', 'ILIKE'])} "
            f"{self.pick(LIKE_PATTERNS)}",
            "s LIKE 'a!%%' ESCAPE '!'", "s RLIKE '^[a-z]+$'", "s IS NULL", "x IS NOT NULL",
            f"id IN (1, 3, {self.pick(['5', '7L', '9.0'])})", "grp IN ('a', 'b''', NULL)",
            f"id BETWEEN 2 AND {self.pick(['6', '8', '10'])}", "b", "NOT b", "b IS NOT TRUE",
            "exists(coalesce(arr, array()), y -> y > 1)", "array_contains(arr, 1)",
            "d > DATE '2024-03-01'", "ts < TIMESTAMP '2024-01-05 00:00:00'",
            "d + INTERVAL 1 DAY > DATE '2024-02-01'", "dec > 10.5BD",
            f"s = {self.pick(STRING_LITERALS)} OR s IS NULL", "contains(s, '''')",
            "startswith(s, 'o''')", "x > 0 AND x / 2 < 10",
        ])

    def scalar(self) -> str:
        return self.pick([self.num(), self.str_(), self.str_(), self.pred(), self.literal(),
                          self.literal(), f"CAST({self.pick(NUM_COLS + STR_COLS)} AS {self.pick(TYPES)})",
                          f"CAST({self.literal()} AS {self.pick(TYPES)})",
                          "transform(arr, y -> y * 2)", "filter(arr, y -> y % 2 = 0)",
                          "zip_with(coalesce(arr, array()), array(10, 20), (a, b) -> a + b)",
                          "map_filter(map(1, 'o''neil', 2, 'b'), (k, v) -> k > 1)",
                          "named_struct('k', s, 'v', id).k", "array(id, 2)[0]",
                          "map('a', s)['a']", "date_add(d, 3)", "add_months(d, 1)",
                          "ts + INTERVAL '2' HOUR", "last_day(d)", "struct(id, s).id",
                          "sequence(1, id % 4 + 1)", "array_sort(array(s, grp, 'm'))"])

    # --- queries -------------------------------------------------------------------------------

    def select_list(self, n: int | None = None) -> str:
        n = n or self.r.randint(1, 4)
        items = []
        for i in range(n):
            e = self.scalar()
            alias = self.pick(["", f" AS c{i}", f" c{i}", f" AS `col {i}`", f" AS `o''{i}`"])
            items.append(e + alias)
        return ", ".join(items)

    def table(self) -> str:
        return self.pick(["t1", "t1", "t1 AS a", "t1 a"])

    def case(self) -> Case:
        kind = self.r.random()
        for threshold, make in ((0.24, self.simple), (0.36, self.aggregate), (0.46, self.window),
                                (0.58, self.join), (0.66, self.cte), (0.74, self.setop),
                                (0.82, self.subquery), (0.86, self.misc), (0.92, self.literals_only),
                                (1.0, self.invalid)):
            if kind < threshold:
                return make()
        raise AssertionError("unreachable")

    def simple(self) -> Case:
        hint = self.pick(["", "", "/*+ REPARTITION(2) */ ", "/*+ COALESCE(1) */ "])
        distinct = self.pick(["", "", "DISTINCT "])
        where = f" WHERE {self.pred()}" if self.r.random() < 0.6 else ""
        if self.r.random() < 0.4:
            return Case(f"SELECT {hint}id, {self.select_list()} FROM t1{where} ORDER BY id"
                        + self.pick(["", " LIMIT 4", " DESC LIMIT 3"]), ordered=True)
        return Case(f"SELECT {hint}{distinct}{self.select_list()} FROM {self.table()}{where}")

    def aggregate(self) -> Case:
        agg = self.pick(["count(*)", "count(s)", "sum(id)", "avg(x)", "max(s)", "min(d)",
                         "array_sort(collect_list(id))", "count(DISTINCT grp)", "sum(dec)",
                         "max_by(s, id)", "array_join(array_sort(collect_list(s)), ',')", "count_if(b)",
                         "sum(id) FILTER (WHERE s LIKE '%''%')", "percentile_approx(x, 0.5)",
                         "array_sort(collect_set(s))", "bool_or(b)", "count(x)",
                         "stddev(x)", "max(struct(id, s)).s", "min_by(grp, x)"])
        agg2 = self.pick(["count(*)", "sum(x)", "max(id)", "count(DISTINCT s)"])
        key = self.pick(["grp", "b", "id % 3", "upper(grp)", "year(d)", "grp, b"])
        having = self.pick(["", f" HAVING count(*) > {self.pick(['0', '1', '2'])}",
                            " HAVING max(s) <> 'o''neil'"])
        shape = self.pick(["", " WITH ROLLUP", ""]) if "," not in key else ""
        if self.r.random() < 0.3:
            return Case(f"SELECT {agg}, {agg2} FROM t1 WHERE {self.pred()}")
        return Case(f"SELECT {key}, {agg} AS a1, {agg2} FROM t1 GROUP BY {key}{shape}{having}")

    def window(self) -> Case:
        fn = self.pick(["row_number()", "rank()", "dense_rank()", "lag(s, 1, 'o''neil')",
                        "lead(id)", "sum(id)", "count(*)", "first_value(s)", "ntile(2)",
                        "percent_rank()", "max(x)", "nth_value(s, 2)", "cume_dist()"])
        frame = self.pick(["", " ROWS BETWEEN 1 PRECEDING AND CURRENT ROW",
                           " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
                           " RANGE BETWEEN 2 PRECEDING AND 2 FOLLOWING"])
        if frame and fn in ("row_number()", "rank()", "dense_rank()", "ntile(2)",
                            "percent_rank()", "cume_dist()", "lag(s, 1, 'o''neil')", "lead(id)"):
            frame = ""
        part = self.pick(["PARTITION BY grp ", "", "PARTITION BY b, grp "])
        if self.r.random() < 0.3:
            return Case(f"SELECT id, {fn} OVER w AS w1 FROM t1 WINDOW w AS ({part}ORDER BY id{frame})"
                        " ORDER BY id", ordered=True)
        return Case(f"SELECT id, s, {fn} OVER ({part}ORDER BY id{frame}) AS w1 FROM t1 "
                    f"WHERE {self.pred()} ORDER BY id", ordered=True)

    def join(self) -> Case:
        kind = self.pick(["JOIN", "INNER JOIN", "LEFT JOIN", "LEFT OUTER JOIN", "RIGHT JOIN",
                          "FULL OUTER JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN", "CROSS JOIN"])
        hint = self.pick(["", "/*+ BROADCAST(b) */ ", "/*+ MERGE(a, b) */ ",
                          "/*+ SHUFFLE_HASH(b) */ "])
        on = "" if kind == "CROSS JOIN" else self.pick([
            " ON a.id = b.id", " ON a.id = b.id AND b.v <> 'o''neil'", " USING (id)",
            " ON a.s = b.v OR a.id = b.id + 1"])
        if kind in ("LEFT SEMI JOIN", "LEFT ANTI JOIN"):
            cols = self.pick(["a.id, a.s", "a.*", "upper(a.s) || 'x''y'"])
        else:
            cols = self.pick(["a.id, b.v, a.s", "a.id, b.n * 2 AS n2, concat(b.v, '''')",
                              "*", "coalesce(a.s, b.v, 'none') AS sv, b.id"])
            if on == " USING (id)":
                cols = self.pick(["id, a.s, b.v", "*"])
        where = self.pick(["", f" WHERE {self.pred().replace('t1.', 'a.')}"]) \
            if kind not in ("RIGHT JOIN", "FULL OUTER JOIN") else ""
        where = where.replace(" id ", " a.id ").replace("(id", "(a.id") if on != " USING (id)" \
            else where
        return Case(f"SELECT {hint}{cols} FROM t1 a {kind} t2 b{on}{where}")

    def cte(self) -> Case:
        body = self.pick([
            f"SELECT id, {self.str_()} AS sv FROM t1 WHERE {self.pred()}",
            "SELECT grp, count(*) AS c FROM t1 GROUP BY grp",
            "SELECT id, v FROM t2 WHERE v <> 'o''neil'",
        ])
        use = self.pick(["SELECT * FROM c", "SELECT c.* FROM c JOIN t2 ON c.{k} = t2.id",
                         "SELECT count(*), 'cte''s' FROM c",
                         "SELECT * FROM c WHERE {k} IN (SELECT id FROM t1)"])
        k = "grp" if body.startswith("SELECT grp") else "id"
        if "JOIN t2" in use and k == "grp":
            use = "SELECT * FROM c"
        nested = self.pick(["", ", d AS (SELECT * FROM c)"])
        return Case(f"WITH c AS ({body}){nested} " + use.format(k=k))

    def setop(self) -> Case:
        op = self.pick(["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "EXCEPT ALL",
                        "INTERSECT ALL", "UNION DISTINCT", "MINUS"])
        left = self.pick(["SELECT id, s FROM t1", "SELECT id, s FROM t1 WHERE id < 6",
                          "SELECT id, 'o''neil' FROM t1"])
        right = self.pick(["SELECT id, v FROM t2", "SELECT id + 1, upper(v) FROM t2",
                           "SELECT 3, 'o''neil'", "VALUES (1, 'it\\'s'), (4, \"dq\")"])
        tail = self.pick(["", " ORDER BY 1, 2 NULLS FIRST"])
        return Case(f"{left} {op} {right}{tail}")

    def subquery(self) -> Case:
        return self.pick([
            Case(f"SELECT id, s FROM t1 WHERE id IN (SELECT id FROM t2 WHERE {self.pick(['n > 0', 'v = ''o''''neil'''])})"
                 .replace("''o''''neil''", "'o''neil'")),
            Case("SELECT id FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.id = t1.id AND t2.v IS NOT NULL)"),
            Case("SELECT id, (SELECT max(n) FROM t2 WHERE t2.id <= t1.id) AS mx FROM t1"),
            Case("SELECT * FROM (SELECT id, s || '''' AS q FROM t1) sub WHERE q LIKE '%''%'"),
            Case("SELECT id FROM t1 WHERE NOT EXISTS (SELECT * FROM t2 WHERE t2.v = t1.s)"),
            Case("SELECT id, s FROM t1 WHERE x > (SELECT avg(x) FROM t1)"),
            Case("SELECT a.id FROM t1 a WHERE a.id = ANY (SELECT id FROM t2)")
            if self.r.random() < 0.5 else Case("SELECT s FROM t1 WHERE s IN ('o''neil', 'x')"),
            Case(f"SELECT * FROM t1 WHERE id NOT IN (SELECT id FROM t2 WHERE {self.pred().replace('t1.', 't2.')})"
                 .replace(" s ", " v ").replace("(s", "(v").replace(" x ", " n ")),
        ])

    def misc(self) -> Case:
        return self.pick([
            Case("SELECT * FROM (SELECT grp, id FROM t1) PIVOT (count(id) FOR grp IN ('a', 'b' AS bee, 'c'))"),
            Case("SELECT * FROM (SELECT b, grp, x FROM t1) PIVOT (sum(x) AS sx FOR grp IN ('a', 'c'))"),
            Case("SELECT id, e FROM t1 LATERAL VIEW explode(arr) ex AS e"),
            Case("SELECT id, e FROM t1 LATERAL VIEW OUTER explode(arr) ex AS e"),
            Case("SELECT id, pos, e FROM t1 LATERAL VIEW posexplode(transform(arr, y -> y * 10)) p AS pos, e"),
            Case("SELECT t1.*, v.* FROM t1, VALUES (1, 'o''neil') AS v(k, w) WHERE t1.id = v.k"),
            Case("SELECT id, inline(array(struct(1, 'a'), struct(2, 'o''neil'))) FROM t1 WHERE id < 3"),
            Case("SELECT id FROM t1 TABLESAMPLE (100 PERCENT)"),
            Case("SELECT /*+ REPARTITION(3, grp) */ grp, s FROM t1"),
            Case("FROM t1 SELECT id, s WHERE id > 4"),
            Case("SELECT t1.id, t2.v FROM t1, t2 WHERE t1.id = t2.id"),
            Case("SELECT id, s FROM t1 ORDER BY s NULLS LAST, id", ordered=True),
            Case("SELECT id, x FROM t1 ORDER BY x DESC NULLS LAST, id LIMIT 5", ordered=True),
            Case("SELECT id FROM t1 ORDER BY id LIMIT 3 OFFSET 2", ordered=True),
            Case("SELECT grp, array_sort(collect_list(s) OVER (PARTITION BY grp)) AS l FROM t1"),
            Case("SELECT * FROM t1 WHERE s = 'o''neil'"),
            Case("SELECT `id`, `s` AS `o'neil` FROM `t1`"),
            Case("SELECT id, s FROM t1 t WHERE t.s <=> 'say \"hi\"'"),
            Case("SELECT id FROM t1 WHERE s = \"back\\\\slash\""),
            Case("SELECT id, stack(2, s, grp) FROM t1 WHERE id < 4"),
            Case("SELECT explode(sequence(1, 3)) AS e, 'o''neil' FROM t1 WHERE id = 1"),
            Case("SELECT * FROM t1 CLUSTER BY id"),
            Case("SELECT id FROM t1 DISTRIBUTE BY grp SORT BY id"),
            Case("SELECT grp, count(*) FROM t1 GROUP BY ALL"),
            Case("SELECT grp, b, count(*) FROM t1 GROUP BY GROUPING SETS ((grp), (b), ())"),
            Case("SELECT grp, b, sum(id), grouping(grp) FROM t1 GROUP BY CUBE(grp, b)"),
            Case("SELECT id, s FROM t1 QUALIFY row_number() OVER (PARTITION BY grp ORDER BY id) = 1"),
            Case("SELECT id FROM t1 WHERE id = 1 UNION ALL SELECT id FROM t1 WHERE id = 1"),
            Case("SELECT max(id) FILTER (WHERE s LIKE '%''%') FROM t1"),
            Case("SELECT id, s FROM t1 WHERE s ILIKE ANY ('%O''N%', 'x%')"),
        ])

    def literals_only(self) -> Case:
        items = ", ".join(self.literal() for _ in range(self.r.randint(1, 4)))
        return Case(f"SELECT {items} FROM t1 WHERE id = {self.r.randint(1, 12)}")

    def invalid(self) -> Case:
        return self.pick([
            Case("SELECT id,, s FROM t1"), Case("SELECT id, s FROM t1 WHERE id ="),
            Case("SELECT nope FROM t1"), Case("SELECT id FROM t1 WHERE s = 'x' AND"),
            Case("SELECT id FROM t1 GROUP BY"), Case("SELECT t9.id FROM t1"),
            Case("SELECT upper(id, s) FROM t1"), Case("SELECT id FROM t1 ORDER BY nope"),
            Case("SELECT sum(s, id) FROM t1"), Case("SELECT id FROM t1 JOIN t2"),
            Case("SELECT id FROM t1 a JOIN t2 b ON a.id = b.id"),
            Case("SELECT CAST('x' AS INT) FROM t1"), Case("SELECT 1 / 0 FROM t1"),
            Case("SELECT concat(s,, 'x') FROM t1"), Case("SELECT id FROM t1 WHERE id IN ()"),
            Case("SELECT 'unterminated FROM t1 WHERE s = 'a'"),
            Case("SELECT id FROM t1 LIMIT -1"), Case("SELECT id FROM t1 UNION SELECT id, s FROM t2"),
            Case("SELECT transform(arr, y -> nope) FROM t1"), Case("SELECT element_at(arr, 9) FROM t1"),
        ])


def cases(seed: int, count: int) -> list[Case]:
    """``count`` distinct statements generated from ``seed``."""
    gen = Generator(seed)
    seen: dict[str, Case] = {}
    while len(seen) < count:
        case = gen.case()
        seen.setdefault(case.sql, case)
    return list(seen.values())
