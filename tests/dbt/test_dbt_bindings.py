"""Seed values (dbt's query bindings) rendered as SQL literals: exact through sqlext.sql."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbt.adapters.sqlext.bindings import literal, render

VALUES = [
    None, True, False, 0, -7, 2**62, 1.5, -0.1, 1e300, 5e-324, Decimal("12345678901234567890.123"),
    Decimal("1E+2"), Decimal("-0.000001"), "", "it's", 'say "hi"', "back\\slash", "\\'", "a\nb\tc",
    "%s ? -- /* */ ;", "ünïcödé ✓ 😀", dt.date(2024, 2, 29), dt.datetime(2024, 1, 2, 3, 4, 5, 678901),
]


def test_placeholders_are_replaced_in_order_and_only_outside_strings_and_comments():
    sql = "insert into t values (?, '?', `?`, %s) -- ?\n/* %s */"
    assert render(sql, [1, None]) == "insert into t values (1, '?', `?`, NULL) -- ?\n/* %s */"
    assert render("select 1", None) == "select 1"
    with pytest.raises(ValueError, match="2 placeholders but 1 values"):
        render("select ?, ?", [1])


def test_literals_are_exact_through_sqlext_sql(spark):
    import sqlext

    sql = "select " + ", ".join(f"{literal(v)} as c{i}" for i, v in enumerate(VALUES))
    row = sqlext.sql(spark, sql).collect()[0]
    got = [row[f"c{i}"] for i in range(len(VALUES))]
    expected = [v.replace(tzinfo=None) if isinstance(v, dt.datetime) else v for v in VALUES]
    # dates and timestamps are string literals: dbt's seed SQL casts them to the column type
    expected = [v.isoformat(sep=" ") if isinstance(v, dt.datetime)
                else v.isoformat() if isinstance(v, dt.date) else v for v in expected]
    assert got == expected
    assert [type(g) for g in got[:2]] == [type(None), bool]


def test_special_floats_stay_special(spark):
    import sqlext

    row = sqlext.sql(spark, "select " + ", ".join(literal(v) for v in
                                                  (math.nan, math.inf, -math.inf))).collect()[0]
    assert math.isnan(row[0]) and row[1] == math.inf and row[2] == -math.inf


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                               blacklist_characters="\x00"), max_size=20),
                min_size=1, max_size=8))
def test_any_text_round_trips(spark, texts):
    import sqlext

    sql = render("select " + ", ".join("?" for _ in texts), texts)
    assert list(sqlext.sql(spark, sql).collect()[0]) == texts
