"""``delta.tables``: sqlext's :class:`~sqlext.tables.DeltaTable` and its builders under
delta-spark's names. ``from delta.tables import *`` binds the same names as delta-spark's module
(which has no ``__all__``): the classes, and the pyspark and typing names it imports."""

from dataclasses import dataclass  # noqa: F401
from typing import (  # noqa: F401
    TYPE_CHECKING, Any, Dict, Iterable, List, NoReturn, Optional, Tuple, Union, cast, overload)

from pyspark import since  # noqa: F401
from pyspark.sql import Column, DataFrame, SparkSession, functions  # noqa: F401
from pyspark.sql.types import DataType, StructField, StructType  # noqa: F401
from pyspark.sql.utils import is_remote  # noqa: F401

from sqlext.tables import (  # noqa: F401
    DeltaMergeBuilder,
    DeltaOptimizeBuilder,
    DeltaTable,
    DeltaTableBuilder,
    IdentityGenerator,
)

# delta-spark's type aliases (delta/_typing.py)
ExpressionOrColumn = Union[str, Column]
OptionalExpressionOrColumn = Optional[ExpressionOrColumn]
ColumnMapping = Dict[str, ExpressionOrColumn]
OptionalColumnMapping = Optional[ColumnMapping]
