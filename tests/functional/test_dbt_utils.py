"""dbt's cross-database utility macros on ``type: sqlext``: dbt-tests-adapter's util suites, the
ones dbt-spark runs and the ones it skips on its session method (concat, date diff, hash,
replace, right), with Spark-specific fixtures where dbt-spark gives them (last_day without the
NULL row, split_part without empty parts, listagg without ORDER BY, which Spark's collect_list
based macro cannot honour)."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.utils import test_timestamps
from dbt.tests.adapter.utils.fixture_listagg import models__test_listagg_yml
from dbt.tests.adapter.utils.test_any_value import BaseAnyValue
from dbt.tests.adapter.utils.test_array_append import BaseArrayAppend
from dbt.tests.adapter.utils.test_array_concat import BaseArrayConcat
from dbt.tests.adapter.utils.test_array_construct import BaseArrayConstruct
from dbt.tests.adapter.utils.test_bool_or import BaseBoolOr
from dbt.tests.adapter.utils.test_cast_bool_to_text import BaseCastBoolToText
from dbt.tests.adapter.utils.test_concat import BaseConcat
from dbt.tests.adapter.utils.test_current_timestamp import BaseCurrentTimestampNaive
from dbt.tests.adapter.utils.test_date_trunc import BaseDateTrunc
from dbt.tests.adapter.utils.test_dateadd import BaseDateAdd
from dbt.tests.adapter.utils.test_datediff import BaseDateDiff
from dbt.tests.adapter.utils.test_escape_single_quotes import BaseEscapeSingleQuotesBackslash
from dbt.tests.adapter.utils.test_except import BaseExcept
from dbt.tests.adapter.utils.test_hash import BaseHash
from dbt.tests.adapter.utils.test_intersect import BaseIntersect
from dbt.tests.adapter.utils.test_last_day import BaseLastDay
from dbt.tests.adapter.utils.test_length import BaseLength
from dbt.tests.adapter.utils.test_listagg import BaseListagg
from dbt.tests.adapter.utils.test_position import BasePosition
from dbt.tests.adapter.utils.test_replace import BaseReplace
from dbt.tests.adapter.utils.test_right import BaseRight
from dbt.tests.adapter.utils.test_safe_cast import BaseSafeCast
from dbt.tests.adapter.utils.test_split_part import BaseSplitPart
from dbt.tests.adapter.utils.test_string_literal import BaseStringLiteral

LAST_DAY_SEED = """date_day,date_part,result
2018-01-02,month,2018-01-31
2018-01-02,quarter,2018-03-31
2018-01-02,year,2018-12-31
"""

#: the base's rows, with dbt-spark's third row: Spark's split of an empty string gives one
#: empty part, not the NULL parts the base expects
SPLIT_PART_SEED = """parts,split_on,result_1,result_2,result_3,result_4
a|b|c,|,a,b,c,c
1|2|3,|,1,2,3,3
EMPTY|EMPTY|EMPTY,|,EMPTY,EMPTY,EMPTY,EMPTY
"""

#: every case on group 3, whose values are all 'g', so the order Spark cannot promise is moot
LISTAGG_UNORDERED = """
with data as (select * from {{ ref('data_listagg') }} where group_col = 3),
data_output as (select * from {{ ref('data_listagg_output') }}),
calculate as (
    select group_col, {{ listagg('string_text', "'_|_'", "order by order_col") }} as actual,
           'bottom_ordered' as version
    from data group by group_col
    union all
    select group_col, {{ listagg('string_text', "'_|_'", "order by order_col", 2) }} as actual,
           'bottom_ordered_limited' as version
    from data group by group_col
    union all
    select group_col, {{ listagg('string_text', "', '") }} as actual,
           'comma_whitespace_unordered' as version
    from data group by group_col
    union all
    select group_col, {{ listagg('DISTINCT string_text', "','") }} as actual,
           'distinct_comma' as version
    from data group by group_col
    union all
    select group_col, {{ listagg('string_text') }} as actual, 'no_params' as version
    from data group by group_col
)
select calculate.actual, data_output.expected
from calculate
left join data_output
on calculate.group_col = data_output.group_col and calculate.version = data_output.version
"""


class TestAnyValue(BaseAnyValue):
    pass


class TestArrayAppend(BaseArrayAppend):
    pass


class TestArrayConcat(BaseArrayConcat):
    pass


class TestArrayConstruct(BaseArrayConstruct):
    pass


class TestBoolOr(BaseBoolOr):
    pass


class TestCastBoolToText(BaseCastBoolToText):
    pass


class TestConcat(BaseConcat):
    pass


class TestCurrentTimestamp(BaseCurrentTimestampNaive):
    pass


class TestDateAdd(BaseDateAdd):
    pass


class TestDateDiff(BaseDateDiff):
    pass


class TestDateTrunc(BaseDateTrunc):
    pass


class TestEscapeSingleQuotes(BaseEscapeSingleQuotesBackslash):
    pass


class TestExcept(BaseExcept):
    pass


class TestHash(BaseHash):
    pass


class TestIntersect(BaseIntersect):
    pass


class TestLastDay(BaseLastDay):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"data_last_day.csv": LAST_DAY_SEED}


class TestLength(BaseLength):
    pass


class TestListagg(BaseListagg):
    @pytest.fixture(scope="class")
    def models(self):
        return {"test_listagg.yml": models__test_listagg_yml,
                "test_listagg.sql": self.interpolate_macro_namespace(LISTAGG_UNORDERED,
                                                                     "listagg")}


class TestPosition(BasePosition):
    pass


class TestReplace(BaseReplace):
    pass


class TestRight(BaseRight):
    pass


class TestSafeCast(BaseSafeCast):
    pass


class TestSplitPart(BaseSplitPart):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"data_split_part.csv": SPLIT_PART_SEED}


class TestStringLiteral(BaseStringLiteral):
    pass


class TestCurrentTimestamps(test_timestamps.BaseCurrentTimestamps):
    @pytest.fixture(scope="class")
    def expected_sql(self):
        # dbt-spark's spark__current_timestamp; the backcompat macros are dbt-core's defaults
        return ("select current_timestamp() as current_timestamp, "
                "current_timestamp::timestamp as current_timestamp_in_utc_backcompat, "
                "current_timestamp::timestamp as current_timestamp_backcompat")

    @pytest.fixture(scope="class")
    def expected_schema(self):
        return {"current_timestamp": "timestamp",
                "current_timestamp_in_utc_backcompat": "timestamp",
                "current_timestamp_backcompat": "timestamp"}
