"""What sqlext asks a classic session's JVM (analysed plans, expression trees, cast rules), asked
of a Spark Connect session instead: the server analyses DataFrames (their schemas), and the
client reads its own Column trees and SQL text (through sqlglot).

Each function here is the Connect branch of one JVM use elsewhere; every answer errs on the safe
side where the client cannot know for sure (a condition whose columns are unknown reads all of
them, so it is never taken for a partition-only one; a condition sqlglot cannot read is not used
to prune files).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.log.pruning import parse_predicate

#: Spark functions whose value changes between evaluations (Spark marks them non-deterministic)
NONDETERMINISTIC = frozenset({"rand", "randn", "random", "uuid", "shuffle", "randstr", "uniform",
                              "monotonically_increasing_id", "spark_partition_id",
                              "input_file_name", "current_timestamp", "now"})


def sql_tree(text: str | None) -> exp.Expression | None:
    """sqlglot's tree of a SQL expression text, or None when there is none or it is unreadable."""
    if text is None:
        return None
    try:
        return parse_predicate(text)
    except Exception:  # noqa: BLE001 - unreadable: the caller assumes the worst
        return None


def has_subquery_text(tree: exp.Expression | None) -> bool:
    """Whether a sqlglot tree holds a subquery (scalar, IN or EXISTS)."""
    return tree is not None and tree.find(exp.Subquery, exp.Select, exp.Exists) is not None


#: stands, among a Column's column names, for a reference whose column cannot be told
UNKNOWN = "\0unknown"


def _connect_parts(column: Column):
    """(column names, function names, SQL texts) a Connect Column's expression tree names
    (:data:`UNKNOWN` among the names for a star or a quoted name); None when it holds a
    subquery."""
    from pyspark.sql.connect import expressions as E
    names, functions, texts = set(), set(), []
    stack = [getattr(column, "_expr", None)]
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, (str, int, float, bool, bytes)):
            continue
        if isinstance(node, (list, tuple)):
            stack.extend(node)
            continue
        if isinstance(node, E.ColumnReference):
            identifier = node._unparsed_identifier
            # a quoted name may hold dots: which column it is is not told here
            names.add(UNKNOWN if "`" in identifier else identifier.split(".")[-1].lower())
        elif isinstance(node, E.SQLExpression):
            texts.append(node._expr)
        elif isinstance(node, E.UnresolvedFunction):
            functions.add(node._name.lower())
        elif isinstance(node, (E.UnresolvedStar, E.UnresolvedRegex)):
            names.add(UNKNOWN)
        elif type(node).__name__ == "SubqueryExpression":
            return None
        if isinstance(node, E.Expression):
            stack.extend(v for k, v in vars(node).items() if k != "_plan_id")
    return names, functions, texts


def condition_facts(frame: DataFrame, column: Column, text: str | None
                    ) -> tuple[frozenset[str], bool, bool]:
    """(lowercased names of the columns a condition reads, whether it is deterministic, whether it
    holds a subquery), from its SQL text or its Connect Column tree; every column of ``frame``
    when they cannot be told."""
    everything = frozenset(c.lower() for c in frame.columns)
    texts = [text] if text is not None else []
    names, functions = set(), set()
    if text is None:
        parts = _connect_parts(column)
        if parts is None:
            return everything, True, True
        names, functions, texts = parts[0], parts[1], parts[2]
        if UNKNOWN in names:
            names = set(everything)
    subquery = False
    for piece in texts:
        tree = sql_tree(piece)
        if tree is None:
            return everything, True, False
        subquery = subquery or has_subquery_text(tree)
        names |= {c.name.lower() for c in tree.find_all(exp.Column)}
        functions |= {(f.name if isinstance(f, exp.Anonymous) else f.sql_name()).lower()
                      for f in tree.find_all(exp.Func)}
        if tree.find(exp.Rand, exp.Randn, exp.CurrentTimestamp) is not None:
            functions.add("rand")
    return frozenset(names), not (functions & NONDETERMINISTIC), subquery


def expression_sql(frame: DataFrame, column: Column, text: str | None) -> str:
    """The SQL a commit records for a condition: its text, else the name Spark gives the
    expression (analysed by the server)."""
    if text is not None:
        return text
    return frame.select(column).columns[0]


#: aggregate and generator functions, refused in values over one row (as in delta-spark)
NOT_ONE_ROW = frozenset({"sum", "count", "avg", "mean", "min", "max", "first", "last",
                         "collect_list", "collect_set", "count_distinct", "approx_count_distinct",
                         "stddev", "variance", "any_value", "explode", "explode_outer",
                         "posexplode", "inline", "stack"})


def check_one_row(columns: list[Column], refuse) -> None:
    """Call ``refuse(why)`` when a value is not an expression over one row: a window function,
    an aggregate, a generator or a subquery (what a classic session finds in the analysed
    projection)."""
    from pyspark.sql.connect import expressions as E
    for column in columns:
        parts = _connect_parts(column)
        if parts is None:
            refuse("subquery")
            continue
        _, functions, texts = parts
        stack = [column._expr]
        while stack:
            node = stack.pop()
            if isinstance(node, E.WindowExpression):
                refuse("window")
            if isinstance(node, (list, tuple)):
                stack.extend(node)
            elif isinstance(node, E.Expression):
                stack.extend(vars(node).values())
        for text in texts:
            tree = sql_tree(text)
            if has_subquery_text(tree):
                refuse("subquery")
            if tree is not None and tree.find(exp.Window, exp.AggFunc, exp.Explode) is not None:
                refuse("window")
        if functions & NOT_ONE_ROW:
            refuse("window")


def can_cast(source: T.DataType, target: T.DataType, policy: str) -> bool:
    """Spark's store-assignment rule for ``source`` -> ``target`` (``Cast.canUpCast`` under
    STRICT, ``canANSIStoreAssign`` under ANSI, ``canCast`` under LEGACY), for the types tables
    hold, without a JVM."""
    if source == target or isinstance(source, T.NullType):
        return True
    if isinstance(source, T.StructType) and isinstance(target, T.StructType):
        return len(source.fields) == len(target.fields) and all(
            can_cast(s.dataType, t.dataType, policy) for s, t in zip(source.fields, target.fields))
    if isinstance(source, T.ArrayType) and isinstance(target, T.ArrayType):
        return can_cast(source.elementType, target.elementType, policy)
    if isinstance(source, T.MapType) and isinstance(target, T.MapType):
        return (can_cast(source.keyType, target.keyType, policy)
                and can_cast(source.valueType, target.valueType, policy))
    complex_types = (T.StructType, T.ArrayType, T.MapType)
    if isinstance(source, complex_types) or isinstance(target, complex_types):
        return isinstance(target, T.StringType) and policy == "LEGACY"
    numeric = isinstance(source, T.NumericType) and isinstance(target, T.NumericType)
    datetime = (T.DateType, T.TimestampType, T.TimestampNTZType)
    if policy == "LEGACY":
        return _legacy_cast(source, target)
    if policy == "ANSI":
        return (numeric or isinstance(target, T.StringType)
                or (isinstance(source, datetime) and isinstance(target, datetime)))
    order = [T.ByteType, T.ShortType, T.IntegerType, T.LongType]
    if numeric:
        if type(source) in order and type(target) in order:
            return order.index(type(source)) <= order.index(type(target))
        if isinstance(target, T.DoubleType):
            return not isinstance(source, T.DecimalType)
        if isinstance(target, T.FloatType):
            return type(source) in order
        if isinstance(target, T.DecimalType):
            width = {T.ByteType: 3, T.ShortType: 5, T.IntegerType: 10, T.LongType: 20}
            if isinstance(source, T.DecimalType):
                return (target.precision - target.scale >= source.precision - source.scale
                        and target.scale >= source.scale)
            return type(source) in width and target.precision - target.scale >= width[type(source)]
        return False
    timestamps = (T.TimestampType, T.TimestampNTZType)
    if isinstance(source, (T.DateType, *timestamps)) and isinstance(target, timestamps):
        return True
    if {type(source), type(target)} == {T.LongType, T.TimestampType}:
        return True
    return isinstance(target, T.StringType)


def _legacy_cast(source: T.DataType, target: T.DataType) -> bool:
    """Spark's ``Cast.canCast`` for atomic types."""
    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    if isinstance(source, T.StringType) or isinstance(target, T.StringType):
        return True
    if isinstance(target, T.BinaryType):
        return isinstance(source, integral)
    if isinstance(source, T.BinaryType):
        return False
    if isinstance(target, T.BooleanType):
        return isinstance(source, (T.NumericType, T.DateType, T.TimestampType))
    if isinstance(target, T.TimestampType):
        return True
    if isinstance(target, T.TimestampNTZType):
        return isinstance(source, (T.DateType, T.TimestampType))
    if isinstance(target, T.DateType):
        return isinstance(source, (T.TimestampType, T.TimestampNTZType))
    if isinstance(target, T.NumericType):
        return isinstance(source, (T.NumericType, T.BooleanType, T.TimestampType, T.DateType))
    return False


def dataframe_alias(df: DataFrame) -> str | None:
    """The alias of a Connect DataFrame (``df.alias("s")``), or None."""
    from pyspark.sql.connect.plan import SubqueryAlias
    plan = getattr(df, "_plan", None)
    return plan._alias if isinstance(plan, SubqueryAlias) else None


def ddl_schema(spark, ddl: str) -> T.StructType:
    """The schema of column definitions ``ddl`` (``id BIGINT NOT NULL, ...``), parsed by the
    server."""
    return spark.createDataFrame([], ddl).schema
