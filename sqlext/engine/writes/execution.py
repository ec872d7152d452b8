"""The write stage: the planned rows become data files, and the files an overwrite replaces
are chosen (delta-rs ``operations/write/execution.rs``). Nothing is committed here."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sqlext.engine import codegen
from sqlext.engine.conditions import check_condition, spark_condition
from sqlext.engine.constraints import table_constraints
from sqlext.engine.dml.assignments import runtime_error
from sqlext.engine.dml.rewrite import delete_matching_rows
from sqlext.engine.generated import IdentityValues, with_identity_values
from sqlext.engine.io.files import CHANGE_TYPE, FileWrite, WrittenFile, write_table_files
from sqlext.engine.io.partitions import files_matching_partition_predicate
from sqlext.engine.io.scan import partition_value
from sqlext.engine.local.insert import write_without_job
from sqlext.engine.schemas import quote_identifier
from sqlext.engine.spark_jobs import spark_job_errors
from sqlext.engine.writes.options import WriteOptions
from sqlext.engine.writes.plan import TableWrite
from sqlext.log.actions import AddCDCFile, AddFile
from sqlext.log.column_mapping import ColumnMapping
from sqlext.log.pruning import Pruner, only_partition_columns, parse_predicate


@dataclass
class WriteOutcome:
    """What the write stage did: ``written`` data files (empty ones included), and for an
    overwrite the files ``removed``, the files ``rewritten`` (a replaceWhere on data columns
    keeps their other rows) and the ``changes`` (change data files)."""
    written: list[WrittenFile]
    identity: IdentityValues
    removed: list[AddFile] = field(default_factory=list)
    rewritten: list[WrittenFile] = field(default_factory=list)
    changes: list[AddCDCFile] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)     # the replaceWhere's own metrics
    dynamic: bool = False                           # a dynamic partition overwrite


def execute_write(spark: SparkSession, plan: TableWrite, options: WriteOptions) -> WriteOutcome:
    """Write ``plan``'s rows as data files of the table (on the driver when they are few:
    :mod:`sqlext.engine.local`, else by one Spark job) and, for an overwrite, choose what they
    replace, recording the reads in the plan's transaction."""
    spark_job = spark_job_errors(plan.ref.display, plan.version, options.operation_name)
    data, snapshot, size = plan.data, plan.snapshot, codegen.input_bytes(plan.data)
    with spark_job, codegen.interpreted_when_small(spark, size):
        # rows outside replaceWhere are refused before anything is written
        condition = None
        if options.replace_where is not None:
            condition = spark_condition(options.replace_where, plan.ref.display)
            check_condition(data, condition, options.replace_where, plan.ref.display)
            data = _replace_where_checked(data, condition, options.replace_where,
                                          plan.ref.display, plan.version)
        identity = IdentityValues()
        if snapshot is not None and not plan.replace_schema:
            data, identity = with_identity_values(data, plan.schema.table_schema, plan.supplied)
        replaced = None
        with_inserts = False
        if condition is not None and snapshot is not None and options.overwrite:
            replaced = _replaced_files(snapshot, options.replace_where)
            # rows a replaceWhere on data columns deletes become change rows, and a version
            # with change files must hold all of its changes there: the new rows are written
            # as inserts too, by the same job as the data (one evaluation of the rows)
            with_inserts = plan.change_data_feed and bool(replaced[1]) and not \
                only_partition_columns(replaced[0], snapshot.partition_columns)
        written = _write(spark, plan, data, with_inserts, size)
        inserts = [w for w in written if w.is_change_file]
        outcome = WriteOutcome([w for w in written if not w.is_change_file], identity)
        if snapshot is None or not options.overwrite:
            return outcome
        if condition is not None:
            _replace_where(spark, plan, condition, replaced, inserts, outcome)
        elif plan.partition_columns and not plan.replace_schema \
                and _dynamic(spark, options.partition_overwrite_mode):
            outcome.dynamic = True
            # "" is null in the log too (delta-rs writes it); names match case-insensitively
            mapping, pcols = ColumnMapping.of(plan.metadata), plan.partition_columns
            written_parts = {tuple(partition_value(w, c, mapping) or None for c in pcols)
                             for w in outcome.written}
            outcome.removed = [f for f in snapshot.files
                               if tuple(partition_value(f, c, mapping) or None for c in pcols)
                               in written_parts]
            plan.txn.read_whole_table()
        else:
            outcome.removed = snapshot.files
            plan.txn.read_whole_table()
    return outcome


def _write(spark: SparkSession, plan: TableWrite, data: DataFrame, with_inserts: bool,
           size: int | None) -> list[WrittenFile]:
    """The files of ``data`` (and, ``with_inserts``, of its rows as insert change rows)."""
    constraints = table_constraints(plan.schema.table_schema, plan.metadata.configuration)
    # little data, no Spark job: the rows written on the driver (sqlext.engine.local)
    written = None if with_inserts else write_without_job(
        spark, data, plan.log, plan.metadata, constraints, plan.version, size)
    if written is None:
        spec = FileWrite(tuple(plan.partition_columns), plan.schema.table_schema,
                         tuple(constraints), kind="mixed" if with_inserts else "data",
                         metadata=plan.metadata)
        written = write_table_files(spark, _with_insert_images(data) if with_inserts else data,
                                    plan.log, spec)
    return written


def _dynamic(spark: SparkSession, override: str | None) -> bool:
    mode = override or spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static")
    return str(mode).lower() == "dynamic"


def _replace_where_checked(data: DataFrame, condition, replace_where: str, table: str,
                           version: int | None) -> DataFrame:
    """``data`` with a check, made by the write's own Spark job (no separate pass over the rows),
    that fails it at the first row outside ``replace_where``; the failure becomes an
    :class:`~sqlext.errors.InvariantViolationError` naming the predicate and the row."""
    at = f"table {table}" + (f", version {version}" if version is not None else "")
    message = (f"{at}: written data contains rows that do not satisfy the replaceWhere "
               f"predicate {replace_where!r}, e.g. ")
    row = F.to_json(F.struct(*[F.col(quote_identifier(c)) for c in data.columns]))
    try:
        data.select(row.alias("row")).schema  # noqa: B018 - a type to_json cannot show
        failure = runtime_error(message, row)
    except PySparkException:
        failure = runtime_error(message + "a row of the data")
    return data.filter(F.when(~condition.eqNullSafe(F.lit(True)), failure)
                       .otherwise(F.lit(True)))


def _replaced_files(snapshot, text: str) -> tuple:
    """(the parsed ``replaceWhere`` predicate, the files it may select by their statistics)."""
    predicate = parse_predicate(text)
    return predicate, Pruner.of(predicate, snapshot).prune(snapshot.files)


def _with_insert_images(data: DataFrame) -> DataFrame:
    """Each row of ``data`` twice: as data (``_change_type`` NULL) and as an ``insert`` change
    row, from one evaluation (a ``kind="mixed"`` input of
    :func:`~sqlext.engine.io.files.write_files`)."""
    fields = ", ".join(f"{quote_identifier(c)} AS {quote_identifier(c)}" for c in data.columns)

    def image(change_type: str) -> str:
        return f"struct({fields}, {change_type} AS {quote_identifier(CHANGE_TYPE)})"

    data_row, insert_row = image("CAST(NULL AS STRING)"), image("'insert'")
    return data.selectExpr(f"inline(array({data_row}, {insert_row}))")


def _replace_where(spark: SparkSession, plan: TableWrite, condition, replaced, inserts,
                   outcome: WriteOutcome) -> None:
    """Remove what ``replaceWhere`` replaces (``replaced``: :func:`_replaced_files`): whole files
    for a partition predicate, matching rows (touched files rewritten) for a predicate on data
    columns; ``inserts``, the new rows as change rows, join the deleted rows' change rows."""
    predicate, candidates = replaced
    snapshot, txn = plan.snapshot, plan.txn
    txn.read_predicate(predicate)
    txn.read_files(candidates)
    if only_partition_columns(predicate, snapshot.partition_columns):
        outcome.removed = files_matching_partition_predicate(spark, snapshot, candidates,
                                                             condition)
        return
    result = delete_matching_rows(spark, plan.log, snapshot, candidates, condition,
                                  plan.change_data_feed)
    txn.row_ids_preserved = result.row_ids_preserved
    outcome.removed, outcome.rewritten = result.removed, result.added
    outcome.changes = list(result.changes) + list(inserts)
    outcome.metrics = {"numDeletedRows": result.metrics["numDeletedRows"],
                       "numCopiedRows": result.metrics["numCopiedRows"]}
