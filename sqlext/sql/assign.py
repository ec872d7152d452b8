"""Spark's store assignment for INSERT: source columns matched to table columns and cast.

Under ``spark.sql.storeAssignmentPolicy`` ``ANSI`` (the default) a column may be written when
Spark's ``Cast.canANSIStoreAssign`` allows it (numbers to numbers, anything to string, ...; not
string to int), under ``STRICT`` only when it can be up-cast, under ``LEGACY`` always. Values that
do not fit fail the statement when it runs, as Spark's ANSI casts do. Columns not written are NULL;
a NULL in a ``NOT NULL`` column fails the job writing the rows (the table's constraints are checked
there, see :mod:`sqlext.engine.constraints`), so nothing is committed.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine import connect_plans
from sqlext.engine.generated import computed_columns
from sqlext.engine.schemas import cast, quoted_column, same_type
from sqlext.engine.session import is_connect
from sqlext.errors import AnalysisException


def _can_assign(spark: SparkSession, source: T.DataType, target: T.DataType) -> bool:
    if same_type(source, target) or isinstance(source, T.NullType):
        return True
    policy = str(spark.conf.get("spark.sql.storeAssignmentPolicy", "ANSI")).upper()
    if policy == "LEGACY":
        return True
    if is_connect(spark):
        return connect_plans.can_cast(source, target, policy)
    key = (policy, source.json(), target.json())
    found = _ASSIGNABLE.get(key)
    if found is None:
        jvm = spark._jvm
        cast = getattr(getattr(jvm.org.apache.spark.sql.catalyst.expressions, "Cast$"), "MODULE$")
        types = jvm.org.apache.spark.sql.types.DataType
        src, dst = types.fromJson(source.json()), types.fromJson(target.json())
        found = _ASSIGNABLE[key] = bool(cast.canUpCast(src, dst) if policy == "STRICT"
                                        else cast.canANSIStoreAssign(src, dst))
    return found


#: (policy, source type, target type) -> Spark's answer, fixed by the Spark version: asked of the
#: JVM once per process (a dozen py4j round trips per cast column otherwise)
_ASSIGNABLE: dict[tuple[str, str, str], bool] = {}


def assign(spark: SparkSession, source: DataFrame, schema: T.StructType, targets: list[str],
           constants: dict[str, Column], table: str) -> DataFrame:
    """``source`` as rows of a table with ``schema``: its columns, by position, written to the
    table columns named ``targets``; ``constants`` (static partition values) for others; NULL for
    the rest."""
    fields = {f.name.lower(): f for f in schema.fields}
    if len(source.columns) != len(targets):
        raise AnalysisException(
            f"cannot write to table {table}: the data has {len(source.columns)} column(s) but "
            f"{len(targets)} are expected ({', '.join(targets)})", table=table)
    names = source.columns
    if len({n.lower() for n in names}) == len(names):
        # each column named unambiguously: referenced by its name, without a renaming step
        frame, refs = source, [quoted_column(n) for n in names]
    else:
        frame = source.toDF(*[f"_c{i}" for i in range(len(names))])
        refs = [F.col(f"_c{i}") for i in range(len(names))]
    values: dict[str, Column] = {}
    for i, (src, name) in enumerate(zip(source.schema.fields, targets)):
        field = fields[name.lower()]
        if not _can_assign(spark, src.dataType, field.dataType):
            raise AnalysisException(
                f"cannot write to table {table}: cannot safely cast column {field.name} from "
                f"{src.dataType.simpleString()} to {field.dataType.simpleString()} "
                f"(spark.sql.storeAssignmentPolicy="
                f"{spark.conf.get('spark.sql.storeAssignmentPolicy', 'ANSI')}); cast it "
                "explicitly", table=table)
        values[field.name.lower()] = refs[i] if same_type(
            src.dataType, field.dataType) else cast(refs[i], field.dataType)
    for name, value in constants.items():
        values[name.lower()] = cast(value, fields[name.lower()].dataType)
    # generated and identity columns not given stay out: the write computes them
    computed = {n.lower() for n in computed_columns(schema)}
    # a NULL is built only for a column not given (each Column costs py4j round trips)
    columns = [(values[f.name.lower()] if f.name.lower() in values
                else cast(F.lit(None), f.dataType)).alias(f.name)
               for f in schema.fields
               if f.name.lower() in values or f.name.lower() not in computed]
    return frame.select(*columns)
