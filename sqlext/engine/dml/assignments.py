"""SET assignments of UPDATE and MERGE, with delta-spark's meaning.

- A target is a column or one nested struct field (``a.c.d``, as a multipart name with backquotes
  for parts holding dots); the struct around an assigned field is rebuilt with its other fields
  unchanged (NULL structs become structs, as in delta-spark). Assigning a field and a struct
  holding it, or one target twice, is refused.
- Values are analysed over one row before any work: window functions, aggregates and generators
  are refused (delta-spark refuses them too), as are subqueries.
- Each value is cast to its target's type as delta-spark's UPDATE and MERGE do under
  ``spark.sql.storeAssignmentPolicy``: ``ANSI`` (the default) allows every ANSI cast (``'5'`` into
  an int, ``'false'`` into a boolean) and fails the job for a value the cast rejects; ``STRICT``
  allows up-casts only; ``LEGACY`` any cast, with NULL for what does not convert. Structs are
  matched by field name, not position, at every level (also inside arrays).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine import connect_plans
from sqlext.engine.conditions import RUNTIME_ERROR_MARK, as_column, has_subquery
from sqlext.engine.session import is_connect
from sqlext.engine.pyspark_errors import spark_fields
from sqlext.engine.constraints import constraint_error
from sqlext.engine.dml.constant_casts import check_constant
from sqlext.engine.schemas import can_upcast, quoted_column, same_type
from sqlext.errors import AnalysisException, SqlextError, UnsupportedOperationError


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__).split(" SQLSTATE:")[0]


def split_name(key: str) -> list[str]:
    """The parts of a multipart column name: ``a.b`` -> ``[a, b]``, ```x.y`.z`` -> ``[x.y, z]``."""
    parts: list[str] = []
    current, quoted, was_quoted, i = "", False, False, 0
    text = key.strip()
    while i < len(text):
        ch = text[i]
        if ch == "`" and quoted and text[i + 1:i + 2] == "`":
            current += "`"
            i += 1
        elif ch == "`":
            quoted, was_quoted = not quoted, True
        elif ch == "." and not quoted:
            parts.append(current if was_quoted else current.strip())
            current, was_quoted = "", False
        else:
            current += ch
        i += 1
    parts.append(current if was_quoted else current.strip())
    return parts


def one_row_projection(frame: DataFrame, columns: list[Column], where: str, what: str):
    """``frame.select(*columns)`` and its analysed plan, after checking that every column is an
    expression over one row: no window function, aggregate or generator (which would make the
    plan anything but one projection of ``frame``), no subquery."""
    connect = is_connect(frame.sparkSession)
    try:
        projected = frame.select(*columns)
        plan = None if connect else projected._jdf.queryExecution().analyzed()
        if connect:
            # the server analyses the projection; over a one-row filter an aggregate, window
            # function or generator no longer has the shape of one projection and fails
            projected.isStreaming  # noqa: B018 - an analysis by the server
    except PySparkException as exc:
        raise AnalysisException(f"{where}: a value of {what} is invalid: {_first_line(exc)}. "
                                f"Columns: {', '.join(frame.columns)}. The table is unchanged.",
                                **spark_fields(exc)) from exc
    if connect:
        connect_plans.check_one_row(columns, lambda why: _refuse_values(why, where, what))
        return projected, plan
    base = frame._jdf.queryExecution().analyzed()
    if plan.nodeName() != "Project" or not plan.child().equals(base):
        _refuse_values("window", where, what)
    expressions = plan.expressions()
    for i in range(expressions.size()):
        if has_subquery(frame.sparkSession, expressions.apply(i)):
            _refuse_values("subquery", where, what)
    return projected, plan


def _refuse_values(why: str, where: str, what: str) -> None:
    if why == "subquery":
        raise UnsupportedOperationError(
            f"{where}: subqueries are not supported in the values of {what} (as in "
            "delta-spark). The table is unchanged.")
    raise AnalysisException(
        f"{where}: the values of {what} must be expressions over one row: window functions, "
        "aggregate functions and generators (explode, ...) are not allowed, as in "
        "delta-spark. The table is unchanged.")


# --- store assignment casts ----------------------------------------------------------------------


def store_assign(frame: DataFrame, value: Column, value_type: T.DataType, field: T.StructField,
                 where: str, shown: str, policy: str | None = None) -> Column:
    """``value`` (of ``value_type``) as a value of ``field``, cast as delta-spark's UPDATE and
    MERGE cast under the session's ``spark.sql.storeAssignmentPolicy`` (``policy``: that
    setting, when the caller has read it already). A cast the policy does not allow raises
    :class:`AnalysisException` now; a value the cast rejects (malformed, out of range), or NULL
    for a NOT NULL field, fails the job that evaluates it."""
    session = frame.sparkSession
    if policy is None:
        policy = assignment_policy(session)
    value = _cast(_Caster(session, policy, where, shown), value, value_type, field.dataType,
                  field.name)
    if not field.nullable:
        value = F.when(value.isNull(), constraint_error(
            f"NOT NULL constraint violated for column: {field.name} (the value {shown!r} is "
            "NULL)")).otherwise(value)
    return value


def assignment_policy(session) -> str:
    """The session's ``spark.sql.storeAssignmentPolicy`` (upper-cased; ANSI when unset)."""
    return str(session.conf.get("spark.sql.storeAssignmentPolicy", "ANSI")).upper()


#: (policy, source type, target type) -> whether Spark's Cast allows the store assignment: fixed
#: by the Spark version, so asked of the JVM once per process (four py4j round trips and a class
#: lookup each time otherwise)
_CAST_ALLOWED: dict[tuple[str, str, str], bool] = {}


@dataclass
class _Caster:
    session: object
    policy: str
    where: str
    shown: str

    def allowed(self, source: T.DataType, target: T.DataType) -> bool:
        if is_connect(self.session):
            return connect_plans.can_cast(source, target, self.policy)
        key = (self.policy, source.json(), target.json())
        found = _CAST_ALLOWED.get(key)
        if found is None:
            found = _CAST_ALLOWED[key] = self._ask_spark(source, target)
        return found

    def _ask_spark(self, source: T.DataType, target: T.DataType) -> bool:
        jvm = self.session.sparkContext._jvm
        cast = jvm.org.apache.spark.sql.catalyst.expressions.Cast
        parse = self.session._jsparkSession.parseDataType
        src, dst = parse(source.json()), parse(target.json())
        if self.policy == "STRICT":
            return bool(cast.canUpCast(src, dst))
        if self.policy == "LEGACY":
            return bool(cast.canCast(src, dst))
        return bool(cast.canAnsiCast(src, dst))

    def refuse(self, source: T.DataType, target: T.DataType, name: str, why: str = "") -> None:
        raise AnalysisException(
            f"{self.where}: cannot assign {self.shown!r} of type {source.simpleString()} to "
            f"{name!r} of type {target.simpleString()}{why} (spark.sql.storeAssignmentPolicy="
            f"{self.policy}). Cast or reshape the value. The table is unchanged.")


def _cast(c: _Caster, value: Column, source: T.DataType, target: T.DataType, name: str) -> Column:
    if isinstance(source, T.NullType):
        return F.lit(None).cast(target)
    if same_type(source, target):
        return value
    if isinstance(source, T.StructType) and isinstance(target, T.StructType):
        return _struct_by_name(c, value, source, target, name)
    if isinstance(source, T.ArrayType) and isinstance(target, T.ArrayType) \
            and isinstance(source.elementType, T.StructType) \
            and isinstance(target.elementType, T.StructType):
        return F.transform(value, lambda e: _cast(c, e, source.elementType, target.elementType,
                                                  name))
    if not c.allowed(source, target):
        c.refuse(source, target, name)
    # under ANSI a widening cannot fail: a plain cast, fewer expressions to build through py4j
    if c.policy == "STRICT" or (c.policy == "ANSI" and can_upcast(source, target)):
        return value.cast(target)
    converted = value.try_cast(target)
    if c.policy == "LEGACY":
        return converted
    return F.when(value.isNotNull() & converted.isNull(), runtime_error(
        f"{c.where}: a value of {c.shown!r} does not fit column {name!r} of type "
        f"{target.simpleString()} (the ANSI cast fails): ", value.cast("string"))
    ).otherwise(converted)


def _struct_by_name(c: _Caster, value: Column, source: T.StructType, target: T.StructType,
                    name: str) -> Column:
    """A struct matched to ``target`` field by field, by name (case-insensitive); both must have
    the same fields (delta-spark: no field may be lost, none left out)."""
    by_name = {f.name.lower(): f for f in source.fields}
    names = {f.name.lower() for f in target.fields}
    if len(by_name) != len(source.fields) or set(by_name) != names:
        c.refuse(source, target, name, ": struct fields are matched by name and must be the "
                                       "same")
    parts = [_cast(c, value.getField(by_name[f.name.lower()].name),
                   by_name[f.name.lower()].dataType, f.dataType, f"{name}.{f.name}").alias(f.name)
             for f in target.fields]
    return F.when(value.isNull(), F.lit(None).cast(target)).otherwise(F.struct(*parts))


def runtime_error(message: str, detail: Column | None = None) -> Column:
    """A Column that fails the Spark job with ``message`` (marked as sqlext's) when evaluated."""
    text = F.lit(f"{RUNTIME_ERROR_MARK} {message}")
    return F.raise_error(text if detail is None else F.concat(text, detail))


# --- targets, nested fields -----------------------------------------------------------------


@dataclass
class _Item:
    path: list[str]            # field names as in the schema, top-level column first
    fields: list[T.StructField]
    value: Column
    shown: str


@dataclass
class Assigned:
    """The values of a SET list by top-level column; ``direct`` names the columns set by an
    uncast value (index into ``plan``'s projection), which one-sided MERGE clauses pass
    through by name."""

    values: dict[str, Column]
    direct: dict[str, int]
    plan: object


def _find(fields: list[T.StructField], name: str, case_sensitive: bool) -> T.StructField | None:
    for f in fields:
        if f.name == name or (not case_sensitive and f.name.lower() == name.lower()):
            return f
    return None


def target_path(schema: T.StructType, key: str | list[str], case_sensitive: bool = False
                ) -> list[T.StructField] | None:
    """The fields a SET key (text, or its name parts) names, top-level column first (None: no
    such column or field). A key equal to a top-level column's name is that column, even with
    dots in it."""
    if isinstance(key, str):
        whole = _find(list(schema.fields), key.strip(), case_sensitive)
        if whole is not None:
            return [whole]
        key = split_name(key)
    path: list[T.StructField] = []
    fields: list[T.StructField] | None = list(schema.fields)
    for part in key:
        f = _find(fields, part, case_sensitive) if fields is not None else None
        if f is None:
            return None
        path.append(f)
        fields = list(f.dataType.fields) if isinstance(f.dataType, T.StructType) else None
    return path


def assign(frame: DataFrame, schema: T.StructType, items: list[tuple], old: Callable[[str], Column],
           where: str, what: str) -> Assigned:
    """The new value of every top-level column that ``items`` (target path, SQL text or Column[,
    text to show]) set, analysed against ``frame`` and cast to the target's type; ``old(name)``
    is a column's current value (the struct a nested assignment rebuilds)."""
    parsed: list[_Item] = []
    for path, raw, *shown in items:
        dotted = ".".join(f.name for f in path)
        column, text = as_column(raw, f"value for {dotted!r}", where)
        text = shown[0] if shown and shown[0] is not None else text
        parsed.append(_Item([f.name for f in path], path, column,
                            text if text is not None else str(column)))
    _check_overlaps(parsed, where, what)
    projected, plan = one_row_projection(
        frame, [it.value.alias(f"__sqlext_v{i}") for i, it in enumerate(parsed)], where, what)
    types = [f.dataType for f in projected.schema.fields]
    values: dict[str, Column] = {}
    direct: dict[str, int] = {}
    nested: dict[str, list[tuple[list[str], Column]]] = {}
    policy = assignment_policy(frame.sparkSession)
    for i, it in enumerate(parsed):
        cast = store_assign(frame, it.value, types[i], it.fields[-1], where, it.shown, policy)
        if policy == "ANSI" and cast is not it.value and plan is not None:
            check_constant(frame.sparkSession, plan.projectList().apply(i).child(), it.value,
                           types[i], it.fields[-1], where, it.shown)
        top = it.path[0]
        if len(it.path) == 1:
            values[top] = cast
            if cast is it.value:
                direct[top] = i
        else:
            nested.setdefault(top, []).append((it.path[1:], cast))
    by_name = {f.name: f for f in schema.fields}
    for top, ops in nested.items():
        values[top] = _rebuild(old(top), by_name[top].dataType, ops)
    return Assigned(values, direct, plan)


def _check_overlaps(items: list[_Item], where: str, what: str) -> None:
    seen: dict[tuple[str, ...], str] = {}
    for it in items:
        key = tuple(p.lower() for p in it.path)
        dotted = ".".join(it.path)
        if key in seen:
            raise AnalysisException(f"{where}: {what} assigns {dotted!r} more than once. The "
                                    "table is unchanged.")
        for other, other_dotted in seen.items():
            shorter, longer = sorted((key, other), key=len)
            if longer[:len(shorter)] == shorter:
                raise AnalysisException(
                    f"{where}: {what} assigns both {other_dotted!r} and {dotted!r}, one inside "
                    "the other (delta-spark refuses such conflicting assignments). The table is "
                    "unchanged.")
        seen[key] = dotted


def _rebuild(old: Column, dtype: T.StructType, ops: list[tuple[list[str], Column]]) -> Column:
    """The struct ``old`` with the fields ``ops`` (path below it, new value) replaced."""
    parts = []
    for f in dtype.fields:
        exact = [v for p, v in ops if len(p) == 1 and p[0] == f.name]
        below = [(p[1:], v) for p, v in ops if len(p) > 1 and p[0] == f.name]
        if exact:
            parts.append(exact[0].alias(f.name))
        elif below:
            parts.append(_rebuild(old.getField(f.name), f.dataType, below).alias(f.name))
        else:
            parts.append(old.getField(f.name).alias(f.name))
    return F.struct(*parts)


def resolve_set(frame: DataFrame, assignments, schema: T.StructType, where: str, operation: str,
                case_sensitive: bool = False) -> dict[str, Column]:
    """UPDATE's ``set`` map (column or nested field name -> SQL text or Column) as the new value
    of each top-level column it changes, analysed against ``frame`` (the table's columns)."""
    if not isinstance(assignments, dict) or not assignments:
        raise SqlextError(f"{where}: {operation} needs `set`, a non-empty dict mapping column "
                          "names to SQL strings or Columns")
    items = []
    for key, value in assignments.items():
        if not isinstance(key, str):
            raise SqlextError(f"{where}: {operation} `set` keys must be column names, not {key!r}")
        path = target_path(schema, key, case_sensitive)
        if path is None:
            raise AnalysisException(
                f"{where}: {operation} sets {key!r}, which the table does not have (a nested "
                "field is named by its path, e.g. a.b.c). Columns: "
                f"{', '.join(f.name for f in schema.fields)}. The table is unchanged.")
        items.append((path, value))
    return assign(frame, schema, items, quoted_column, where,
                  operation).values
