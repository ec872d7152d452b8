"""Table definition commands of the engine: create / replace, add columns, set / unset
properties, column comments, constraints (CHECK, NOT NULL). Names (registering, dropping,
renaming) are :mod:`sqlext.names`'s.

The SQL front (``CREATE TABLE``, ``ALTER TABLE``, ``DROP TABLE``) translates its statements into
these calls, and Python callers reach the same code. Each change of a table's definition is one
metadata commit (version 0 for a new table), so it takes part in conflict detection like any
other commit; a refused change leaves the table as it was.

Column comments: Delta keeps a column's comment in its schema field's metadata under
``"comment"`` (as delta-spark's ``ALTER TABLE ... CHANGE COLUMN`` and ``CREATE TABLE (c INT
COMMENT '...')`` write it), so delta-rs, DuckDB and Spark see it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from sqlext.engine.commit import commit
from sqlext.engine.conditions import resolve_condition, sql_text
from sqlext.engine.constraints import (CONSTRAINT_PREFIX, Constraint, check_constraints,
                                       violation, without_check_constraints)
from sqlext.engine.dml.command import begin, spark_job_errors, table_frame
from sqlext.engine.io.scan import scan
from sqlext.engine.maintenance.convert import require_empty_location
from sqlext.engine.schemas import quoted_column, same_type, spark_schema
from sqlext.engine.generated import check_generated_schema, computed_columns
from sqlext.engine.table_metadata import new_table_metadata, stage_metadata
from sqlext.engine.write import write
from sqlext.errors import (AnalysisException, ConcurrentModificationException,
                           ConstraintViolationError, TableAlreadyExistsError,
                           UnsupportedOperationError)
from sqlext.log import operations as ops
from sqlext.log.column_mapping import drop_fields, rename_field
from sqlext.log.generated import identity_columns, with_high_water_marks
from sqlext.log.protocol import upgrade_for_features
from sqlext.log.pruning import parse_predicate
from sqlext.log.table import DeltaLog
from sqlext.log.table_ref import TableRef
from sqlext.log.transaction import now_ms

COMMENT_KEY = "comment"


# --- CREATE / REPLACE -------------------------------------------------------------------------


@dataclasses.dataclass
class TableDefinition:
    """What a CREATE [OR REPLACE] TABLE asks for.

    ``schema`` gives the columns of a table created empty; ``query`` (a DataFrame, or a function
    returning one, called only once the table is known to be written) gives its rows and columns
    instead. ``external`` is true when the caller chose the location (SQL ``LOCATION``): an
    existing table there is then registered under the name rather than refused.
    """

    schema: T.StructType | None = None
    query: DataFrame | Callable[[], DataFrame] | None = None
    partition_by: list[str] = dataclasses.field(default_factory=list)
    properties: dict[str, str] = dataclasses.field(default_factory=dict)
    comment: str | None = None
    external: bool = False


def create_table(spark: SparkSession, ref: TableRef, definition: TableDefinition, *,
                 replace: bool = False, if_not_exists: bool = False,
                 display: str | None = None) -> int | None:
    """Create (or with ``replace``, replace) the table at ``ref``; return the version committed,
    or None when nothing was committed (``if_not_exists`` and the table exists).

    Replacing commits the next version of the same table (same id, history kept) with the new
    schema, partitioning, data and properties (properties not restated are kept). ``display``
    names the table in messages (default: its name, else its location). Names are the caller's:
    :func:`sqlext.names.create_table` resolves and registers them.
    """
    display = display or ref.display
    if definition.schema is not None:
        check_generated_schema(spark, definition.schema, display)
    log = DeltaLog(ref.location, name=ref.display)
    exists = log.exists()
    if exists and if_not_exists:
        return None
    if exists and not replace:
        raise TableAlreadyExistsError(
            f"table {ref.display} already exists (version {log.snapshot().version}); use "
            "CREATE TABLE IF NOT EXISTS, CREATE OR REPLACE TABLE, or another name",
            table=ref.display,
            error_class="TABLE_OR_VIEW_ALREADY_EXISTS" if ref.name else "DELTA_PATH_EXISTS")
    operation = ops.CreateTable(bool(ref.managed and ref.name), tuple(definition.partition_by),
                                definition.properties, definition.comment, replace,
                                as_select=definition.query is not None)
    try:
        if definition.query is not None:
            query = definition.query
            df = query() if callable(query) else query
            _resolve_checks(lambda: df, definition, display, log)
            return write(spark, df, ref, "overwrite" if exists else "errorifexists",
                         partitionBy=definition.partition_by, overwriteSchema=exists,
                         configuration=definition.properties, operation=operation,
                         description=definition.comment, replace_table=replace)
        if definition.schema:
            _resolve_checks(lambda: spark.createDataFrame([], definition.schema), definition,
                            display, log)
        return _commit_schema(spark, log, ref, definition, operation, display)
    except ConcurrentModificationException as exc:
        if not exists:
            raise TableAlreadyExistsError(f"table {ref.display} was created by a concurrent "
                                          "writer", table=ref.display) from exc
        raise


def _resolve_checks(frame: Callable[[], DataFrame], definition: TableDefinition, display: str,
                    log: DeltaLog) -> None:
    """Refuse a CHECK constraint among the definition's properties
    (``delta.constraints.<name>``) that is not a valid condition over the new table's columns
    (``frame()``)."""
    checks = check_constraints(definition.properties)
    if checks:
        columns, version = frame(), log.snapshot().version if log.exists() else 0
        for name, text in checks.items():
            resolve_condition(columns, text, display, version, f"CHECK constraint {name}")


def _partition_columns(definition: TableDefinition, schema: T.StructType,
                       display: str) -> list[str]:
    names = {f.name.lower(): f.name for f in schema.fields}
    missing = [c for c in definition.partition_by if c.lower() not in names]
    if missing:
        raise AnalysisException(f"table {display}: partition column(s) {missing} are not "
                                f"columns of the table ({', '.join(names.values())})",
                                table=display)
    if len(definition.partition_by) == len(schema.fields) and schema.fields:
        raise AnalysisException(f"table {display}: cannot partition by every column",
                                table=display)
    return [names[c.lower()] for c in definition.partition_by]


def _commit_schema(spark: SparkSession, log: DeltaLog, ref: TableRef, definition: TableDefinition,
                   operation: ops.CreateTable, display: str) -> int:
    """Commit a table with the definition's schema and no rows: version 0, or a replacing
    version that removes every file."""
    if not definition.schema:
        raise AnalysisException(f"CREATE TABLE {display}: give the columns, e.g. "
                                "(id BIGINT, name STRING), or AS SELECT ...", table=display)
    schema = definition.schema
    pcols = _partition_columns(definition, schema, display)
    snapshot = log.snapshot() if log.exists() else None
    if snapshot is None:
        require_empty_location(log)            # never a table over someone's files
    txn = log.start_transaction(snapshot)
    if snapshot is None:
        stage_metadata(txn, new_table_metadata(schema.json(), pcols, definition.properties,
                                               ref.name, definition.comment))
        return _commit(spark, txn, operation)
    old = snapshot.metadata
    stage_metadata(txn, dataclasses.replace(
        old, schema_string=schema.json(), partition_columns=pcols,
        configuration={**without_check_constraints(old.configuration),
                       **definition.properties},
        description=definition.comment))
    txn.read_whole_table()
    ts = now_ms()
    removes = [f.remove(ts) for f in snapshot.files]
    return commit(spark, txn, removes, operation, metrics={"numRemovedFiles": len(removes)})


def check_existing_columns(spark: SparkSession, ref: TableRef, definition: TableDefinition,
                           display: str) -> None:
    """Refuse a definition whose columns (when given) are not those of the existing table at
    ``ref`` (a name given to an existing table at an external location)."""
    if definition.schema is None:
        return
    check_generated_schema(spark, definition.schema, display)
    if definition.schema:
        wanted = definition.schema
        log = DeltaLog(ref.location, name=ref.display)
        actual = spark_schema(log.snapshot().metadata.schema_string)
        same = len(wanted.fields) == len(actual.fields) and all(
            w.name.lower() == a.name.lower() and same_type(w.dataType, a.dataType)
            for w, a in zip(wanted.fields, actual.fields))
        if not same:
            raise AnalysisException(
                f"CREATE TABLE {display}: the columns given ({wanted.simpleString()}) do not "
                f"match the existing table at {ref.location} ({actual.simpleString()}); "
                "omit the columns to register the table as it is", table=display)


# --- columns ----------------------------------------------------------------------------------


def add_columns(spark: SparkSession, ref: TableRef, columns: T.StructType) -> int:
    """Append nullable top-level ``columns`` to the table's schema; return the version."""
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    current = spark_schema(snapshot.metadata.schema_string)
    existing = {f.name.lower() for f in current.fields}
    clash = [f.name for f in columns.fields if f.name.lower() in existing]
    if clash:
        raise AnalysisException(f"ALTER TABLE {ref.display} ADD COLUMNS: column(s) {clash} "
                                "already exist", table=ref.display, version=snapshot.version)
    computed = computed_columns(columns)
    if computed:
        raise UnsupportedOperationError(
            f"ALTER TABLE {ref.display} ADD COLUMNS (version {snapshot.version}): {computed} "
            "would be generated or IDENTITY columns, which only CREATE TABLE can define (as in "
            "delta-spark). The table is unchanged.", table=ref.display, version=snapshot.version)
    required = [f.name for f in columns.fields if not f.nullable]
    if required:
        raise AnalysisException(f"ALTER TABLE {ref.display} ADD COLUMNS: new column(s) "
                                f"{required} cannot be NOT NULL (existing rows have no value)",
                                table=ref.display, version=snapshot.version)
    schema = T.StructType(current.fields + columns.fields)
    txn = log.start_transaction(snapshot)
    txn.update_metadata(dataclasses.replace(snapshot.metadata, schema_string=schema.json()))
    return _commit(spark, txn, ops.AddColumns(tuple(f.jsonValue() for f in columns.fields)))


def with_column_comment(schema_string: str, column: str, comment: str | None,
                        table: str, case_sensitive: bool = False) -> tuple[str, dict]:
    """``schema_string`` with top-level ``column``'s comment set (None removes it), and the
    changed field (a dict in the schema's JSON form). Raises :class:`AnalysisException` naming
    the table's columns when there is no such column."""
    schema = json.loads(schema_string)
    fields = schema.get("fields") or []
    wanted = column if case_sensitive else column.lower()
    for field in fields:
        if (field["name"] if case_sensitive else field["name"].lower()) == wanted:
            metadata = dict(field.get("metadata") or {})
            if comment is None:
                metadata.pop(COMMENT_KEY, None)
            else:
                metadata[COMMENT_KEY] = comment
            field["metadata"] = metadata
            return json.dumps(schema, separators=(",", ":")), field
    names = ", ".join(f["name"] for f in fields)
    raise AnalysisException(f"ALTER TABLE {table} CHANGE COLUMN {column}: the table has no column "
                            f"{column} (columns: {names}); the table is unchanged", table=table)


def set_column_comment(spark: SparkSession, ref: TableRef, column: str, comment: str | None,
                       expected_type: T.DataType | None = None) -> int:
    """Commit ``column``'s new comment (None removes it) as delta-spark's ``CHANGE COLUMN``;
    return the new version. ``expected_type`` (the type restated by ``CHANGE COLUMN c c type
    COMMENT ...``) must be the column's type: only the comment changes."""
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    if expected_type is not None:
        current = {f.name.lower(): f for f in spark_schema(snapshot.metadata.schema_string).fields}
        field = current.get(column.lower())
        if field is not None and field.dataType != expected_type:
            raise UnsupportedOperationError(
                f"ALTER TABLE {ref.display} CHANGE COLUMN {column}: changing the type "
                f"({field.dataType.simpleString()} to {expected_type.simpleString()}) is not "
                "supported; only its COMMENT can change (rewrite the table with CREATE OR "
                "REPLACE TABLE ... AS SELECT to change a type)",
                table=ref.display, version=snapshot.version)
    case_sensitive = spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true"
    schema_string, field = with_column_comment(snapshot.metadata.schema_string, column, comment,
                                               ref.display, case_sensitive)
    txn = log.start_transaction(snapshot)
    txn.update_metadata(dataclasses.replace(snapshot.metadata, schema_string=schema_string))
    return _commit(spark, txn, ops.ChangeColumn(field))


def _constraint_columns(configuration: dict[str, str]) -> dict[str, set[str]]:
    """The (lowercased) names each CHECK constraint's expression mentions, qualifiers too."""
    out = {}
    for key, text in configuration.items():
        if key.lower().startswith(CONSTRAINT_PREFIX):
            try:
                expr = parse_predicate(text)
            except Exception:  # noqa: BLE001 - an unparsable constraint blocks every change
                out[key] = {"*"}
                continue
            out[key] = {n.lower() for c in expr.find_all(exp.Column)
                        for n in (c.name, c.table) if n}
    return out


def _refuse_constraint_columns(snapshot, ref: TableRef, what: str, columns: list[str]) -> None:
    for key, names in _constraint_columns(snapshot.configuration).items():
        hit = [c for c in columns if c.lower() in names or "*" in names]
        if hit:
            raise AnalysisException(
                f"ALTER TABLE {ref.display} {what}: column {hit[0]} is used by CHECK constraint "
                f"{key[len(CONSTRAINT_PREFIX):]} (version {snapshot.version}); drop the "
                "constraint first (ALTER TABLE ... DROP CONSTRAINT). The table is unchanged.",
                table=ref.display, version=snapshot.version)


def rename_column(spark: SparkSession, ref: TableRef, path: list[str], new_name: str) -> int:
    """``ALTER TABLE t RENAME COLUMN a TO b`` (``path``: ``["a"]``, or ``["s", "a"]`` for a
    struct field): a metadata-only commit changing the logical name, the physical name (files)
    unchanged, as delta-spark does; return the version. Needs column mapping (``name`` mode):
    without it :class:`UnsupportedOperationError` tells how to enable it."""
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    what = f"RENAME COLUMN {'.'.join(path)} TO {new_name}"
    metadata = rename_field(snapshot.metadata, path, new_name, ref.display)
    _refuse_constraint_columns(snapshot, ref, what, path[:1])
    txn = log.start_transaction(snapshot)
    txn.update_metadata(metadata)
    return _commit(spark, txn, ops.RenameColumn(tuple(path), (*path[:-1], new_name)))


def drop_columns(spark: SparkSession, ref: TableRef, paths: list[list[str]],
                 if_exists: bool = False) -> int | None:
    """``ALTER TABLE t DROP COLUMN[S] ...``: a metadata-only commit removing the columns (or
    struct fields) from the schema, the files untouched, as delta-spark does; return the version
    (None when ``if_exists`` and none of them exists). Needs column mapping (``name`` mode); a
    partition column cannot be dropped."""
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    what = "DROP COLUMNS " + ", ".join(".".join(p) for p in paths)
    metadata = drop_fields(snapshot.metadata, paths, ref.display, if_exists)
    if metadata.schema_string == snapshot.metadata.schema_string:
        return None
    _refuse_constraint_columns(snapshot, ref, what, [p[0] for p in paths])
    txn = log.start_transaction(snapshot)
    txn.update_metadata(metadata)
    return _commit(spark, txn, ops.DropColumns(tuple(".".join(p) for p in paths)))


# --- properties -------------------------------------------------------------------------------


def set_properties(spark: SparkSession, ref: TableRef, properties: dict[str, str]) -> int:
    """Set table properties (upgrading the protocol when one needs it); return the version."""
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    txn = log.start_transaction(snapshot)
    conf = {**snapshot.configuration, **{k: str(v) for k, v in properties.items()}}
    stage_metadata(txn, dataclasses.replace(snapshot.metadata, configuration=conf))
    return _commit(spark, txn, ops.SetTableProperties(properties))


def unset_properties(spark: SparkSession, ref: TableRef, keys: list[str],
                     if_exists: bool = False) -> int:
    """Remove table properties; return the version. A key the table lacks is an error unless
    ``if_exists`` (delta-spark's ``UNSET TBLPROPERTIES IF EXISTS``)."""
    log = DeltaLog(ref.location, name=ref.display)
    snapshot = log.snapshot()
    missing = [k for k in keys if k not in snapshot.configuration]
    if missing and not if_exists:
        raise AnalysisException(f"table {ref.display}: cannot unset propert(ies) {missing} that "
                                f"the table does not have (version {snapshot.version}); the "
                                "table is unchanged (use IF EXISTS to ignore them)",
                                table=ref.display, version=snapshot.version)
    conf = {k: v for k, v in snapshot.configuration.items() if k not in keys}
    txn = log.start_transaction(snapshot)
    stage_metadata(txn, dataclasses.replace(snapshot.metadata, configuration=conf))
    return _commit(spark, txn, ops.UnsetTableProperties(tuple(keys), bool(if_exists)))


# --- constraints ------------------------------------------------------------------------------


def add_check_constraint(spark: SparkSession, ref: TableRef, name: str, expression) -> int:
    """``ALTER TABLE t ADD CONSTRAINT name CHECK (expression)``: validate the rows already in
    the table, then commit the constraint as table property ``delta.constraints.<name>`` (name
    lower-cased), upgrading the protocol to the ``checkConstraints`` writer feature if needed;
    return the version. ``expression`` is SQL text or a sqlglot tree (its user's text is kept).

    Raises :class:`ConstraintViolationError` naming the number of rows when existing rows break
    the constraint (delta-spark's ``DELTA_NEW_CHECK_CONSTRAINT_VIOLATION``); nothing is
    committed then."""
    text = sql_text(expression) if isinstance(expression, exp.Expression) else str(expression)
    log = DeltaLog(ref.location, name=ref.display)
    txn, snapshot = begin(log, None, "ADD CONSTRAINT", removes_data=False)
    where = f"ALTER TABLE {ref.display} ADD CONSTRAINT {name}"
    existing = {k.lower(): v for k, v in check_constraints(snapshot.configuration).items()}
    if name.lower() in existing:
        raise AnalysisException(
            f"{where}: constraint '{name}' already exists on table {ref.display} (version "
            f"{snapshot.version}): CHECK ({existing[name.lower()]}). Drop the old constraint "
            "first (ALTER TABLE ... DROP CONSTRAINT); the table is unchanged",
            table=ref.display, version=snapshot.version,
            error_class="DELTA_CONSTRAINT_ALREADY_EXISTS",
            message_parameters={"constraintName": name, "oldConstraint": existing[name.lower()]})
    frame = table_frame(spark, snapshot, None)
    resolve_condition(frame, text, ref.display, snapshot.version, "CHECK constraint")
    constraint = Constraint("CHECK", name, text)
    broken = _violating_rows(spark, log, snapshot, txn, constraint, "ADD CONSTRAINT")
    if broken:
        raise ConstraintViolationError(
            f"{where}: {broken} rows in {ref.display} (version {snapshot.version}) violate the "
            f"new CHECK constraint ({text}) [DELTA_NEW_CHECK_CONSTRAINT_VIOLATION]. Fix or "
            "delete those rows first; nothing was committed, the table is unchanged",
            error_class="DELTA_NEW_CHECK_CONSTRAINT_VIOLATION", table=ref.display,
            version=snapshot.version,
            message_parameters={"numRows": broken, "tableName": ref.display,
                                "checkConstraint": text})
    conf = {**snapshot.configuration, CONSTRAINT_PREFIX + name.lower(): text}
    stage_metadata(txn, dataclasses.replace(snapshot.metadata, configuration=conf))
    return _commit(spark, txn, ops.AddConstraint(name, text))


def _violating_rows(spark: SparkSession, log: DeltaLog, snapshot, txn, constraint: Constraint,
                    operation: str) -> int:
    """How many rows of ``snapshot`` a new ``constraint`` would refuse (one Spark job); the
    transaction records that it read the whole table."""
    txn.read_whole_table()
    with spark_job_errors(log, snapshot, operation):
        return scan(spark, log, snapshot).filter(violation(constraint)).count()


def drop_check_constraint(spark: SparkSession, ref: TableRef, name: str,
                          if_exists: bool = False) -> int:
    """``ALTER TABLE t DROP CONSTRAINT [IF EXISTS] name``: remove the CHECK constraint; return
    the version. A constraint the table lacks is an error unless ``if_exists`` (then the commit
    changes nothing, as delta-spark's)."""
    log = DeltaLog(ref.location, name=ref.display)
    txn, snapshot = begin(log, None, "DROP CONSTRAINT", removes_data=False)
    keys = [k for k in snapshot.configuration if k.lower() == CONSTRAINT_PREFIX + name.lower()]
    if not keys and not if_exists:
        names = ", ".join(sorted(check_constraints(snapshot.configuration))) or "none"
        raise AnalysisException(
            f"ALTER TABLE {ref.display} DROP CONSTRAINT {name}: cannot drop nonexistent "
            f"constraint {name} from table {ref.display} (version {snapshot.version}; its CHECK "
            f"constraints: {names}); use DROP CONSTRAINT IF EXISTS to ignore a missing one",
            table=ref.display, version=snapshot.version,
            error_class="DELTA_CONSTRAINT_DOES_NOT_EXIST",
            message_parameters={"constraintName": name, "tableName": ref.display})
    conf = {k: v for k, v in snapshot.configuration.items() if k not in keys}
    txn.update_metadata(dataclasses.replace(snapshot.metadata, configuration=conf))
    return _commit(spark, txn, ops.DropConstraint(
        name, snapshot.configuration[keys[0]] if keys else None))


def set_not_null(spark: SparkSession, ref: TableRef, column: str, not_null: bool) -> int:
    """``ALTER TABLE t ALTER|CHANGE COLUMN c SET NOT NULL`` (``not_null``) / ``DROP NOT NULL``:
    commit top-level ``column``'s nullability in the schema; return the version.

    SET NOT NULL first counts the rows where the column is NULL and refuses with
    :class:`ConstraintViolationError` when there are any (nothing committed); it upgrades the
    protocol to the ``invariants`` writer feature where the table lacks it."""
    log = DeltaLog(ref.location, name=ref.display)
    txn, snapshot = begin(log, None, "CHANGE COLUMN", removes_data=False)
    verb = "SET NOT NULL" if not_null else "DROP NOT NULL"
    schema = json.loads(snapshot.metadata.schema_string)
    field = _top_field(spark, ref, schema, column, verb)
    if not_null:
        constraint = Constraint("NOT NULL", field["name"], path=(field["name"],))
        broken = _violating_rows(spark, log, snapshot, txn, constraint, "CHANGE COLUMN")
        if broken:
            raise ConstraintViolationError(
                f"ALTER TABLE {ref.display} ALTER COLUMN {field['name']} SET NOT NULL: {broken} "
                f"rows in {ref.display} (version {snapshot.version}) violate the new NOT NULL "
                f"constraint on {field['name']} (they hold NULL). Fix or delete those rows "
                "first; nothing was committed, the table is unchanged",
                error_class="DELTA_NEW_NOT_NULL_VIOLATION", table=ref.display,
                version=snapshot.version,
                message_parameters={"numRows": broken, "tableName": ref.display,
                                    "colName": field["name"]})
    field["nullable"] = not not_null
    txn.update_metadata(dataclasses.replace(
        snapshot.metadata, schema_string=json.dumps(schema, separators=(",", ":"))))
    upgraded = upgrade_for_features(snapshot.protocol, {"invariants"}) if not_null else None
    if upgraded is not None:
        txn.update_protocol(upgraded)
    return _commit(spark, txn, ops.ChangeColumn(field))


def _top_field(spark: SparkSession, ref: TableRef, schema: dict, column: str, verb: str) -> dict:
    """The top-level field of ``schema`` (parsed schema JSON) named ``column`` (as Spark
    compares names); an error naming the table's columns when there is none."""
    case_sensitive = spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true"
    fields = schema.get("fields") or []
    field = next((f for f in fields if (f["name"] == column if case_sensitive
                                        else f["name"].lower() == column.lower())), None)
    if field is None:
        names = ", ".join(f["name"] for f in fields)
        raise AnalysisException(f"ALTER TABLE {ref.display} ALTER COLUMN {column} {verb}: the "
                                f"table has no column {column} (columns: {names}); the table "
                                "is unchanged", table=ref.display)
    return field


def sync_identity(spark: SparkSession, ref: TableRef, column: str) -> int:
    """``ALTER TABLE t ALTER|CHANGE COLUMN c SYNC IDENTITY``: move identity column ``c``'s
    high-water mark up to the largest value the table holds (the smallest for a negative step),
    rounded to the column's ``start + k * step``, so that generated values never repeat values
    written explicitly; the mark never moves back (:meth:`Identity.synced_mark`). Commits a
    ``CHANGE COLUMN`` even when the mark stays, as delta-spark does; returns the version."""
    log = DeltaLog(ref.location, name=ref.display)
    txn, snapshot = begin(log, None, "CHANGE COLUMN", removes_data=False)
    schema = json.loads(snapshot.metadata.schema_string)
    field = _top_field(spark, ref, schema, column, "SYNC IDENTITY")
    identity = identity_columns(snapshot.metadata.schema_string).get(field["name"])
    if identity is None:
        raise AnalysisException(
            f"ALTER TABLE {ref.display} ALTER COLUMN {field['name']} SYNC IDENTITY: "
            f"{field['name']} is not an identity column of {ref.display} (version "
            f"{snapshot.version}); SYNC IDENTITY applies to columns GENERATED ... AS IDENTITY. "
            "The table is unchanged", table=ref.display, version=snapshot.version)
    txn.read_whole_table()
    extreme = F.max if identity.step > 0 else F.min
    with spark_job_errors(log, snapshot, "CHANGE COLUMN"):
        value = scan(spark, log, snapshot).agg(
            extreme(quoted_column(field["name"]))).collect()[0][0]
    operation = ops.ChangeColumn(field)
    mark = identity.synced_mark(value)
    metadata = snapshot.metadata
    if mark is not None:
        metadata = dataclasses.replace(metadata, schema_string=with_high_water_marks(
            metadata.schema_string, {field["name"]: mark}))
    txn.update_metadata(metadata)
    return _commit(spark, txn, operation)


def _commit(spark: SparkSession, txn, operation: ops.Operation) -> int:
    """Commit the metadata change staged on ``txn`` as ``operation`` (no file actions)."""
    return commit(spark, txn, [], operation, metrics={})
