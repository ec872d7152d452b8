"""The Pruner: may a file hold rows matching a predicate, judged by partition values and stats.

``False`` must only be said when no row can match (a wrong ``False`` loses rows); ``True`` for
anything not understood.
"""

from __future__ import annotations

import json

import pytest

from sqlext.errors import ParseError
from sqlext.log.actions import AddFile
from sqlext.log.pruning import Pruner, only_partition_columns, parse_predicate, referenced_columns
from sqlext.log.schema import Field

SCHEMA = [Field("i", "integer"), Field("l", "long"), Field("s", "string"), Field("d", "date"),
          Field("ts", "timestamp"), Field("ntz", "timestamp_ntz"), Field("dec", "decimal(10,2)"),
          Field("f", "double"), Field("b", "boolean"), Field("bin", "binary"),
          Field("st", {"type": "struct", "fields": [{"name": "i", "type": "integer",
                                                     "nullable": True, "metadata": {}}]}),
          Field("p", "string"), Field("pi", "integer"), Field("pd", "date"),
          Field("pts", "timestamp"), Field("pb", "boolean"), Field("pdec", "decimal(5,1)")]
PARTS = ["p", "pi", "pd", "pts", "pb", "pdec"]

STATS = {"numRecords": 10,
         "minValues": {"i": 10, "l": -5, "s": "bbb", "d": "2021-01-10", "ts": "2021-01-10T10:00:00.000Z",
                       "ntz": "2021-01-10T10:00:00.000", "dec": 1.50, "f": 0.5, "st": {"i": 1}},
         "maxValues": {"i": 20, "l": 5000000000, "s": "ddd", "d": "2021-01-20",
                       "ts": "2021-01-20T10:00:00.123Z", "ntz": "2021-01-20T10:00:00.123",
                       "dec": 99.99, "f": 9.5, "st": {"i": 9}},
         "nullCount": {"i": 0, "l": 2, "s": 0, "d": 0, "ts": 0, "ntz": 0, "dec": 0, "f": 0,
                       "b": 10, "bin": 0, "st": {"i": 0}}}
PV = {"p": "x", "pi": "7", "pd": "2021-02-03", "pts": "2021-02-03 04:05:06.789",
      "pb": "true", "pdec": "12.5"}


def _file(stats=STATS, pv=PV) -> AddFile:
    return AddFile("f.parquet", dict(pv), 1, 1, True,
                   None if stats is None else json.dumps(stats))


def may(pred: str, add: AddFile | None = None) -> bool:
    return Pruner(pred, SCHEMA, PARTS).might_match(add or _file())


KEEP = [
    # integers
    "i = 10", "i = 20", "i = 15", "i >= 20", "i > 19", "i < 11", "i <= 10", "i != 15", "i <> 10",
    "i BETWEEN 0 AND 10", "i BETWEEN 20 AND 30", "i IN (1, 2, 15)", "i IN (NULL, 12)",
    "15 = i", "25 > i", "i = 15.0", "i = CAST('15' AS INT)", "I = 15", "t.i = 15",
    "l = -5", "l > 4999999999", "l < -4", "l = 5000000000", "-5 = l",
    # strings
    "s = 'bbb'", "s = 'ccc'", "s = 'ddd'", "s > 'dd'", "s < 'bbc'", "s LIKE 'z%'", "s IN ('a', 'c')",
    # dates and timestamps
    "d = '2021-01-10'", "d = DATE'2021-01-20'", "d > '2021-01-19'", "d BETWEEN '2021-01-01' AND '2021-01-10'",
    "ts = TIMESTAMP'2021-01-20 10:00:00.123'", "ts > '2021-01-20 10:00:00.123'",
    "ts >= '2021-01-20T10:00:00.1235'",      # max is written truncated to ms: may hold .1235
    "ts < '2021-01-10 10:00:00.001'", "ntz = '2021-01-15 00:00:00'", "ts >= DATE'2021-01-20'",
    # decimals
    "dec = 1.5", "dec = 99.99", "dec > 99.98", "dec < 1.51",
    # nulls
    "l IS NULL", "l IS NOT NULL", "b IS NULL", "l <=> NULL", "l <=> 5", "NOT (l IS NOT NULL)",
    # floats are never pruned
    "f = 100", "f < 0", "f > 1e10",
    # unknown / not understood
    "nosuchcol = 1", "i + 1 = 100", "upper(s) = 'Z'", "st.i = 100", "bin = 'x'",
    "i = l", "rand() > 0.5", "i IN (SELECT 1)", "TRUE", "NOT FALSE",
    # boolean structure
    "i = 100 OR i = 15", "i = 15 AND s = 'ccc'", "NOT (i = 100)", "NOT (i > 100)",
    "NOT (i = 15 AND i = 100)", "NOT (i < 10 OR i > 20)", "NOT i BETWEEN 11 AND 19",
    "NOT (l IS NULL OR l IS NOT NULL)",       # never true, but each side may be: kept
    # partitions
    "p = 'x'", "p IN ('x', 'y')", "p != 'y'", "p IS NOT NULL", "pi = 7", "pi > 6", "pi BETWEEN 7 AND 7",
    "pd = '2021-02-03'", "pd > DATE'2021-02-02'", "pts = '2021-02-03 04:05:06.789'",
    "pb = true", "pb", "pdec = 12.5", "pdec > 12.4", "NOT (p = 'y')", "p <=> 'x'",
    "p = 'x' AND i = 15", "p = 'y' OR i = 15", "P = 'x'",
]

PRUNE = [
    "i = 9", "i = 21", "i > 20", "i >= 21", "i < 10", "i <= 9", "i BETWEEN 0 AND 9",
    "i BETWEEN 21 AND 30", "i IN (1, 2, 21)", "i IN (NULL)", "25 < i", "i = NULL", "i <> NULL",
    "NOT (i = NULL)", "i = -100", "l = -6", "l > 5000000000", "i = 9.5",
    "s = 'aaa'", "s = 'dde'", "s < 'bbb'", "s > 'ddd'", "s IN ('a', 'e')",
    "d = '2021-01-09'", "d > DATE'2021-01-20'", "d < '2021-01-10'",
    "ts < '2021-01-10 10:00:00'", "ts > '2021-01-20 10:00:00.124'", "ts = '2020-01-01'",
    "ntz > '2021-01-20 10:00:00.124'",
    "dec = 1.49", "dec > 99.99", "dec < 1.5",
    "i IS NULL", "s IS NULL", "b IS NOT NULL", "i <=> NULL", "b = true AND b IS NOT NULL",
    "b > false",                          # all null: no comparison can be true
    "NOT (i >= 10)", "NOT (i <= 20)", "NOT (i IS NOT NULL)", "NOT i NOT IN (100)", "b = true",
    "b", "NOT b",                               # b is all null
    "NOT (i > 0 AND i < 100)", "NOT TRUE", "FALSE", "i = 100 OR s = 'zzz'", "i = 15 AND s = 'zzz'",
    "i = 100 AND nosuchcol = 1",
    "p = 'y'", "p IN ('y', 'z')", "p != 'x'", "p IS NULL", "pi = 8", "pi > 7", "pi IN (1, 2)",
    "pd = '2021-02-04'", "pd < DATE'2021-02-03'", "pts > '2021-02-03 04:05:06.789'",
    "pb = false", "NOT pb", "pdec = 12.6", "pdec <= 12.4", "NOT (p = 'x')", "p <=> NULL",
    "p = NULL", "p = 'x' AND i = 100", "p = 'y' OR i = 100", "P = 'X'",
]


@pytest.mark.parametrize("pred", KEEP)
def test_may_match(pred):
    assert may(pred) is True, pred


@pytest.mark.parametrize("pred", PRUNE)
def test_pruned(pred):
    assert may(pred) is False, pred


def test_null_partition_values():
    f = _file(pv={**PV, "p": None, "pi": None})
    assert may("p IS NULL", f) and may("pi IS NULL", f) and may("p <=> NULL", f)
    for pred in ("p = 'x'", "p != 'x'", "NOT (p = 'x')", "p IS NOT NULL", "pi = 7", "pi > 0",
                 "p IN ('x')", "NOT (p IS NULL)"):
        assert not may(pred, f), pred
    # an empty string partition value reads as null
    f = _file(pv={**PV, "pi": ""})
    assert may("pi IS NULL", f) and not may("pi = 7", f)


def test_truncated_string_maximum_bounds_nothing():
    long_max = "m" * 31 + "\U0010ffff"          # delta-spark: 32-char prefix + tie-breaker
    stats = {**STATS, "minValues": {**STATS["minValues"], "s": "a" * 32},
             "maxValues": {**STATS["maxValues"], "s": long_max}}
    f = _file(stats)
    assert may("s = 'zzzz'", f) and may("s > 'n'", f) and may("s >= 'm'", f)
    assert not may("s < 'a'", f)                # the (truncated) minimum is still a lower bound
    exact_32 = {**stats, "maxValues": {**STATS["maxValues"], "s": "m" * 32}}
    assert may("s = 'mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmz'", _file(exact_32))
    short = {**stats, "maxValues": {**STATS["maxValues"], "s": "mm"}}
    assert not may("s > 'mm'", _file(short))


def test_missing_or_broken_stats_keep_the_file():
    for stats in (None, {}, {"numRecords": 10}, {"minValues": {"i": 10}}):
        f = _file(stats)
        for pred in ("i = 100", "i IS NULL", "s = 'zzz'", "b IS NOT NULL"):
            assert may(pred, f), (stats, pred)
    f = AddFile("f.parquet", dict(PV), 1, 1, True, "{broken")
    assert may("i = 100", f)
    weird = {**STATS, "minValues": {**STATS["minValues"], "i": "not a number", "d": "garbage"}}
    assert may("i = 100", _file(weird)) and may("d = '1999-01-01'", _file(weird))
    assert not may("p = 'y'", _file(None))      # partition values need no stats


def test_empty_file_matches_nothing():
    f = _file({"numRecords": 0, "minValues": {}, "maxValues": {}, "nullCount": {"i": 0}})
    assert not may("i = 1", f)


def test_timestamp_maximum_truncated_to_milliseconds():
    # a writer that truncated .123999 to .123 must not lose the row at .1239
    assert may("ts = '2021-01-20 10:00:00.123999'")
    assert may("ts >= '2021-01-20 10:00:00.1239'")
    assert not may("ts > '2021-01-20 10:00:00.124'")
    assert may("ts = '2021-01-20T11:00:00.123+01:00'")          # same instant, other zone
    assert not may("ts = '2021-01-20T10:00:00.123-01:00'")


def test_pruner_without_predicate_and_prune_list():
    files = [_file(), _file(pv={**PV, "p": "y"})]
    assert Pruner(None, SCHEMA, PARTS).prune(files) == files
    assert Pruner("p = 'y'", SCHEMA, PARTS).prune(files) == [files[1]]
    assert Pruner(parse_predicate("p = 'y'"), SCHEMA, PARTS).prune(files) == [files[1]]


def test_predicate_helpers():
    e = parse_predicate("p = 'x' AND t.PI > 3")
    assert referenced_columns(e) == {"p", "pi"}
    assert only_partition_columns(e, ["P", "pi"])
    assert not only_partition_columns(parse_predicate("p = 'x' AND i > 3"), PARTS)
    assert not only_partition_columns(parse_predicate("TRUE"), PARTS)
    with pytest.raises(ParseError) as err:
        parse_predicate("i = = 3")
    assert "line" in str(err.value) and "column" in str(err.value)


def test_struct_field_is_not_mistaken_for_a_top_level_column():
    # `st.i` is the field i of struct st, not column i: its stats must not be used for it
    assert may("st.i = 100")
    assert may("st.i > 50 AND st.i < 60")
