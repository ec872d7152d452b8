"""``sqlext.DeltaTable`` and its builders: delta-spark's ``python/delta/tables.py`` API over
sqlext's engine.

:class:`DeltaTable` holds a table reference (and an alias); :class:`DeltaMergeBuilder` and
:class:`DeltaOptimizeBuilder` collect their options and call the engine with explicit arguments
(:func:`sqlext.engine.merge.command.merge`, :func:`sqlext.engine.maintenance.optimize.optimize`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from sqlext.catalog import Catalog, TableRef, split_name
from sqlext.engine.ddl import TableDefinition
from sqlext.engine.merge.clauses import (MATCHED, NOT_MATCHED, NOT_MATCHED_BY_SOURCE, Clause,
                                         checked_assignments, checked_condition)
from sqlext.engine.read import resolve_snapshot
from sqlext.engine.io.scan import local_frame, scan
from sqlext.engine.session import prepare
from sqlext.errors import AnalysisException, TableNotFoundError, UnsupportedOperationError
from sqlext.log.generated import GENERATION_EXPRESSION, identity_metadata
from sqlext.log.manifest import MODE as MANIFEST_MODE, generate_symlink_manifest
from sqlext.log.protocol import table_features
from sqlext.log.storage import normalize_location
from sqlext.log.table import DeltaLog
from sqlext.names import create_table

_STR_MAP = T.MapType(T.StringType(), T.StringType())

HISTORY_SCHEMA = T.StructType([
    T.StructField("version", T.LongType()),
    T.StructField("timestamp", T.TimestampType()),
    T.StructField("userId", T.StringType()),
    T.StructField("userName", T.StringType()),
    T.StructField("operation", T.StringType()),
    T.StructField("operationParameters", _STR_MAP),
    T.StructField("job", T.StructType([T.StructField(n, T.StringType()) for n in
                                       ("jobId", "jobName", "jobRunId", "runId", "jobOwnerId",
                                        "triggerType")])),
    T.StructField("notebook", T.StructType([T.StructField("notebookId", T.StringType())])),
    T.StructField("clusterId", T.StringType()),
    T.StructField("readVersion", T.LongType()),
    T.StructField("isolationLevel", T.StringType()),
    T.StructField("isBlindAppend", T.BooleanType()),
    T.StructField("operationMetrics", _STR_MAP),
    T.StructField("userMetadata", T.StringType()),
    T.StructField("engineInfo", T.StringType()),
])

DETAIL_SCHEMA = T.StructType([
    T.StructField("format", T.StringType()),
    T.StructField("id", T.StringType()),
    T.StructField("name", T.StringType()),
    T.StructField("description", T.StringType()),
    T.StructField("location", T.StringType()),
    T.StructField("createdAt", T.TimestampType()),
    T.StructField("lastModified", T.TimestampType()),
    T.StructField("partitionColumns", T.ArrayType(T.StringType())),
    T.StructField("clusteringColumns", T.ArrayType(T.StringType())),
    T.StructField("numFiles", T.LongType()),
    T.StructField("sizeInBytes", T.LongType()),
    T.StructField("properties", _STR_MAP),
    T.StructField("minReaderVersion", T.IntegerType()),
    T.StructField("minWriterVersion", T.IntegerType()),
    T.StructField("tableFeatures", T.ArrayType(T.StringType())),
])


def _ts(ms: int | None):
    return None if ms is None else _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc)


def _str_map(d) -> dict | None:
    if d is None:
        return None
    return {str(k): (v if isinstance(v, str) or v is None else str(v)) for k, v in d.items()}


class DeltaTable:
    """A Delta table, with delta-spark's method names and signatures."""

    def __init__(self, spark: SparkSession, ref: TableRef, alias: str | None = None):
        prepare(spark)
        self._spark = spark
        self._ref = ref
        self._alias = alias
        self._log = DeltaLog(ref.location, name=ref.display)

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def forPath(cls, sparkSession: SparkSession, path: str, hadoopConf=None) -> "DeltaTable":
        """The Delta table at ``path``; raises :class:`TableNotFoundError` when there is none."""
        ref = Catalog(sparkSession).resolve(path if "/" in path or "://" in path
                                            else f"./{path}")
        return cls(sparkSession, ref).require()

    @classmethod
    def forName(cls, sparkSession: SparkSession, tableOrViewName: str) -> "DeltaTable":
        """The Delta table registered under a name (``[schema.]table``)."""
        ref = Catalog(sparkSession).resolve(tableOrViewName, must_exist=False)
        return cls(sparkSession, ref).require()

    @classmethod
    def convertToDelta(cls, sparkSession: SparkSession, identifier: str,
                       partitionSchema=None) -> "DeltaTable":
        """Make the parquet files of ``parquet.`/dir``` version 0 of a Delta table in place,
        without rewriting them (statistics from their footers); ``partitionSchema`` (a
        StructType or ``"col type, ..."``) reads partition values from Hive-style ``col=value``
        directories. A directory that is already a Delta table is returned as it is."""
        from sqlext.engine.maintenance.convert import convert_to_delta, parquet_location
        location = parquet_location(identifier)
        convert_to_delta(sparkSession, location, partitionSchema)
        return cls.forPath(sparkSession, location)

    @classmethod
    def create(cls, sparkSession: SparkSession | None = None) -> "DeltaTableBuilder":
        """A builder of a new table; ``execute()`` fails when the table exists."""
        return DeltaTableBuilder(sparkSession, "create")

    @classmethod
    def createIfNotExists(cls, sparkSession: SparkSession | None = None) -> "DeltaTableBuilder":
        """A builder of a new table; ``execute()`` leaves an existing table as it is."""
        return DeltaTableBuilder(sparkSession, "createIfNotExists")

    @classmethod
    def replace(cls, sparkSession: SparkSession | None = None) -> "DeltaTableBuilder":
        """A builder replacing an existing table (same id, history kept); ``execute()`` fails
        when there is no table to replace."""
        return DeltaTableBuilder(sparkSession, "replace")

    @classmethod
    def createOrReplace(cls, sparkSession: SparkSession | None = None) -> "DeltaTableBuilder":
        """A builder creating the table, or replacing it when it exists."""
        return DeltaTableBuilder(sparkSession, "createOrReplace")

    @classmethod
    def isDeltaTable(cls, sparkSession: SparkSession, identifier: str) -> bool:
        """Whether a path (or name) holds a Delta table."""
        try:
            ref = Catalog(sparkSession).resolve(identifier)
        except Exception:  # noqa: BLE001 - an invalid name is not a Delta table
            return False
        return DeltaLog(ref.location, name=ref.display).exists()

    def require(self) -> "DeltaTable":
        """This table; raises :class:`TableNotFoundError` when its location holds no Delta
        table."""
        if not self._log.exists():
            raise TableNotFoundError(f"{self._ref.display} is not a Delta table (no _delta_log at "
                                     f"{self._ref.location})", table=self._ref.display,
                                     message_parameters={"tableName": self._ref.display})
        return self

    # --- reading ------------------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self._ref.location

    def toDF(self) -> DataFrame:
        """The table's current rows (aliased when :meth:`alias` was used)."""
        log, snapshot = resolve_snapshot(self._spark, self._ref)
        df = scan(self._spark, log, snapshot)
        return df.alias(self._alias) if self._alias else df

    def alias(self, aliasName: str) -> "DeltaTable":
        """The same table under an alias, for merge conditions and ``toDF``."""
        return DeltaTable(self._spark, self._ref, aliasName)

    def history(self, limit: int | None = None) -> DataFrame:
        """The commits, newest first, with delta-spark's history columns."""
        rows = []
        for rec in self._log.history(limit):
            info = rec.commit_info.values
            rows.append((rec.version, _ts(rec.timestamp), info.get("userId"), info.get("userName"),
                         info.get("operation"), _str_map(info.get("operationParameters")),
                         None, None, info.get("clusterId"), info.get("readVersion"),
                         info.get("isolationLevel"), info.get("isBlindAppend"),
                         _str_map(info.get("operationMetrics")), info.get("userMetadata"),
                         info.get("engineInfo")))
        return local_frame(self._spark, rows, HISTORY_SCHEMA)

    def detail(self) -> DataFrame:
        """One row describing the table (format, location, files, size, properties, protocol)."""
        snapshot = self._log.snapshot()
        last = self._log.history(1)[0].timestamp
        features = table_features(snapshot.protocol)
        row = ("delta", snapshot.metadata.id, self._ref.qualified_name,
               snapshot.metadata.description, self._ref.location,
               _ts(snapshot.metadata.created_time), _ts(last), snapshot.partition_columns, [],
               len(snapshot.files_by_path), snapshot.size_in_bytes, snapshot.configuration,
               snapshot.protocol.min_reader_version, snapshot.protocol.min_writer_version,
               features)
        return local_frame(self._spark, [row], DETAIL_SCHEMA)

    def generate(self, mode: str) -> None:
        """Generate ``mode`` for the table, as delta-spark: ``symlink_format_manifest`` writes the
        current version's manifests for Presto/Trino/Athena (:mod:`sqlext.log.manifest`)."""
        if str(mode).lower() != MANIFEST_MODE:
            raise UnsupportedOperationError(f"generate({mode!r}) on {self._ref.display}: the "
                                            f"only mode is '{MANIFEST_MODE}'",
                                            table=self._ref.display)
        self.require()
        generate_symlink_manifest(self._log, self._log.snapshot())

    # --- protocol -----------------------------------------------------------------------------

    def upgradeTableProtocol(self, readerVersion: int, writerVersion: int) -> None:
        """Make the table's protocol support every feature protocol ``readerVersion`` /
        ``writerVersion`` implies, as delta-spark does: features are only added (lower versions
        change nothing) and the result is written in its normal form
        (:mod:`sqlext.log.protocol_changes`)."""
        from sqlext.log.protocol_changes import READER_VERSION_KEY, WRITER_VERSION_KEY
        self._set_protocol_properties({READER_VERSION_KEY: str(readerVersion),
                                       WRITER_VERSION_KEY: str(writerVersion)})

    def addFeatureSupport(self, featureName: str) -> None:
        """Add table feature ``featureName`` (e.g. ``deletionVectors``) to the protocol, as
        ``ALTER TABLE t SET TBLPROPERTIES ('delta.feature.<name>' = 'supported')``. Features
        sqlext cannot honour when writing are refused (the table would become unwritable)."""
        from sqlext.log.protocol_changes import FEATURE_KEY_PREFIX
        self._set_protocol_properties({FEATURE_KEY_PREFIX + str(featureName): "supported"})

    def _set_protocol_properties(self, properties: dict[str, str]) -> None:
        from sqlext.engine.ddl import set_properties
        self.require()
        set_properties(self._spark, self._ref, properties)

    # --- change feed --------------------------------------------------------------------------

    def changes(self, startingVersion=None, endingVersion=None, startingTimestamp=None,
                endingTimestamp=None, deduplicationMode: str = "none",
                computeUpdates: bool = False, identifierColumns=None,
                filter: str | None = None) -> DataFrame:  # noqa: A002 - the option's public name
        """The table's change feed between two versions or timestamps (inclusive); see
        :func:`sqlext.changes`."""
        from sqlext.engine.changes.read import changes_of
        return changes_of(self._spark, self._ref, startingVersion, endingVersion,
                          startingTimestamp, endingTimestamp, deduplicationMode, computeUpdates,
                          identifierColumns, filter)

    # --- DELETE and UPDATE --------------------------------------------------------------------

    def delete(self, condition=None) -> None:
        """Delete the rows where ``condition`` (SQL string or Column) is true; all rows without
        one. Only files holding matching rows are rewritten; metrics go to :meth:`history`."""
        from sqlext.engine.dml.delete import delete
        delete(self._spark, self._log, condition, alias=self._alias)

    def update(self, condition=None, set=None) -> None:  # noqa: A002 - delta-spark's name
        """Set columns in the rows where ``condition`` (SQL string or Column; all rows without
        one) is true; ``set`` maps column names to SQL strings or Columns over the old row."""
        from sqlext.engine.dml.update import update
        update(self._spark, self._log, condition, set, alias=self._alias)

    # --- MERGE --------------------------------------------------------------------------------

    def merge(self, source: DataFrame, condition):
        """A :class:`DeltaMergeBuilder` merging ``source`` (alias it with ``source.alias("s")``)
        into this table (alias it with :meth:`alias`) on ``condition`` (SQL string or Column);
        add ``when...`` clauses, then ``execute()``."""
        return DeltaMergeBuilder(self._spark, self._log, self._alias, source, condition)

    # --- maintenance: VACUUM, RESTORE, OPTIMIZE -----------------------------------------------

    def vacuum(self, retentionHours: float | None = None, dryRun: bool = False,
               mode: str | None = None) -> DataFrame:
        """Delete files no version within the retention refers to (default: the table's
        ``delta.deletedFileRetentionDuration``, 7 days) and orphans of failed writes older than
        it. Returns a DataFrame ``path`` of the files and directories deleted (``dryRun``: that
        would be deleted). ``mode`` ``"LITE"`` deletes only files removed in the log, without
        listing the directory (SQL's ``VACUUM t LITE``)."""
        from sqlext.engine.maintenance.vacuum import result_frame, vacuum
        return result_frame(self._spark, vacuum(self._spark, self._log, retentionHours, dryRun,
                                                mode))

    def restoreToVersion(self, version: int) -> DataFrame:
        """Restore the table to an earlier version in one commit; returns delta-spark's metrics
        row (``table_size_after_restore``, ``num_restored_files``, ...)."""
        from sqlext.engine.maintenance.restore import restore, result_frame
        return result_frame(self._spark, restore(self._spark, self._log, version=version))

    def restoreToTimestamp(self, timestamp) -> DataFrame:
        """Restore the table to the version current at ``timestamp`` (text in the session time
        zone, a datetime or a date); returns delta-spark's metrics row."""
        from sqlext.engine.maintenance.restore import restore, result_frame
        return result_frame(self._spark, restore(self._spark, self._log, timestamp=timestamp))

    def clone(self, target: str, isShallow: bool, replace: bool = False,
              properties: dict | None = None) -> "DeltaTable":
        """Shallow-clone the latest version into ``target`` (a table name or a path): a new
        table whose log points at this table's files (SQL's ``CREATE TABLE target SHALLOW CLONE
        ...``). ``replace`` replaces an existing target; ``properties`` override the source's
        table properties. Deep clones (``isShallow=False``) are not supported."""
        return self._clone(target, isShallow, replace, properties)

    def cloneAtVersion(self, version: int, target: str, isShallow: bool, replace: bool = False,
                       properties: dict | None = None) -> "DeltaTable":
        """:meth:`clone` of the table as of ``version``."""
        return self._clone(target, isShallow, replace, properties, version=version)

    def cloneAtTimestamp(self, timestamp, target: str, isShallow: bool, replace: bool = False,
                         properties: dict | None = None) -> "DeltaTable":
        """:meth:`clone` of the table as of ``timestamp`` (text in the session time zone, a
        datetime or a date)."""
        return self._clone(target, isShallow, replace, properties, timestamp=timestamp)

    def _clone(self, target: str, is_shallow: bool, replace: bool, properties: dict | None,
               version: int | None = None, timestamp=None) -> "DeltaTable":
        from sqlext.engine.maintenance.clone import CloneSource, require_shallow
        from sqlext.names import clone_table
        label = self._ref.qualified_name or f"delta.`{self._ref.location}`"
        require_shallow(is_shallow, label)
        self.require()
        ref = Catalog(self._spark).resolve(target)
        clone_table(self._spark, CloneSource(self._ref, label, version, timestamp), ref, replace,
                    properties={k: str(v) for k, v in (properties or {}).items()})
        return DeltaTable(self._spark, Catalog(self._spark).resolve(target))

    def optimize(self):
        """A :class:`DeltaOptimizeBuilder`: ``.where(partitionFilter)``, then
        ``.executeCompaction()`` or ``.executeZOrderBy(*cols)``."""
        return DeltaOptimizeBuilder(self._spark, self._log)


class DeltaMergeBuilder:
    """Builds a MERGE of ``source`` into a Delta table; see delta-spark's ``DeltaMergeBuilder``.

    Each ``when...`` method returns a new builder with one more clause; :meth:`execute` runs the
    MERGE and returns delta-spark's one-row result DataFrame. Conditions and values are SQL
    strings or pyspark Columns that may refer to the target's alias (``DeltaTable.alias``) and the
    source's (``DataFrame.alias``)."""

    def __init__(self, spark: SparkSession, log: DeltaLog, alias: str | None, source: DataFrame,
                 condition, clauses: tuple[Clause, ...] = (), schema_evolution: bool | None = None):
        if not isinstance(source, DataFrame):
            raise AnalysisException(f"MERGE: the source must be a DataFrame, not "
                                    f"{type(source).__name__}")
        if condition is None:
            raise AnalysisException("MERGE needs a condition (SQL string or Column) matching "
                                    "source rows to target rows")
        self._spark, self._log, self._alias = spark, log, alias
        self._source = source
        self._condition = checked_condition(condition)
        self._clauses = clauses
        self._schema_evolution = schema_evolution

    def _with(self, clause: Clause | None = None, schema_evolution: bool | None = None
              ) -> "DeltaMergeBuilder":
        return DeltaMergeBuilder(
            self._spark, self._log, self._alias, self._source, self._condition,
            self._clauses + ((clause,) if clause is not None else ()),
            self._schema_evolution if schema_evolution is None else schema_evolution)

    # --- WHEN MATCHED -------------------------------------------------------------------------

    def whenMatchedUpdate(self, condition=None, set=None) -> "DeltaMergeBuilder":  # noqa: A002
        """Update matched target rows (where ``condition`` holds) with ``set``:
        ``{target column: value over target and source}``."""
        return self._with(Clause(MATCHED, "update", checked_condition(condition),
                                 checked_assignments(set, "whenMatchedUpdate(set=...)")))

    def whenMatchedUpdateAll(self, condition=None) -> "DeltaMergeBuilder":
        """``UPDATE SET *``: every target column takes the source column of the same name."""
        return self._with(Clause(MATCHED, "update", checked_condition(condition)))

    def whenMatchedDelete(self, condition=None) -> "DeltaMergeBuilder":
        """Delete matched target rows (where ``condition`` holds)."""
        return self._with(Clause(MATCHED, "delete", checked_condition(condition)))

    # --- WHEN NOT MATCHED [BY TARGET] -----------------------------------------------------------

    def whenNotMatchedInsert(self, condition=None, values=None) -> "DeltaMergeBuilder":
        """Insert source rows that match no target row: ``values`` maps target columns to values
        over the source; columns not given are NULL."""
        return self._with(Clause(NOT_MATCHED, "insert", checked_condition(condition),
                                 checked_assignments(values, "whenNotMatchedInsert(values=...)")))

    def whenNotMatchedInsertAll(self, condition=None) -> "DeltaMergeBuilder":
        """``INSERT *``: insert unmatched source rows, columns mapped by name."""
        return self._with(Clause(NOT_MATCHED, "insert", checked_condition(condition)))

    # --- WHEN NOT MATCHED BY SOURCE -----------------------------------------------------------

    def whenNotMatchedBySourceUpdate(self, condition=None, set=None) -> "DeltaMergeBuilder":  # noqa: A002
        """Update target rows that no source row matches, with ``set`` over the target row."""
        return self._with(Clause(
            NOT_MATCHED_BY_SOURCE, "update", checked_condition(condition),
            checked_assignments(set, "whenNotMatchedBySourceUpdate(set=...)")))

    def whenNotMatchedBySourceDelete(self, condition=None) -> "DeltaMergeBuilder":
        """Delete target rows that no source row matches (where ``condition`` holds)."""
        return self._with(Clause(NOT_MATCHED_BY_SOURCE, "delete", checked_condition(condition)))

    # --- options and execution ----------------------------------------------------------------

    def withSchemaEvolution(self) -> "DeltaMergeBuilder":
        """Let ``UPDATE SET *`` / ``INSERT *`` (and assignments naming source columns) add the
        source's columns that the target lacks to the target's schema."""
        return self._with(schema_evolution=True)

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return self._clauses

    def execute(self) -> DataFrame:
        """Run the MERGE in one commit. Returns one row: ``num_affected_rows``,
        ``num_updated_rows``, ``num_deleted_rows``, ``num_inserted_rows``."""
        from sqlext.engine.merge.command import merge
        result = merge(self._spark, self._log, self._source, self._condition, self._clauses,
                       alias=self._alias, schema_evolution=self._schema_evolution)
        return result.summary(self._spark)


class DeltaOptimizeBuilder:
    """delta-spark's ``DeltaOptimizeBuilder``: ``where(partitionFilter)`` then
    ``executeCompaction()`` or ``executeZOrderBy(*columns)``."""

    def __init__(self, spark: SparkSession, log: DeltaLog):
        self._spark = spark
        self._log = log
        self._where = None

    def where(self, partitionFilter) -> "DeltaOptimizeBuilder":
        """Optimize only the partitions matching ``partitionFilter`` (SQL string or Column on
        partition columns)."""
        self._where = partitionFilter
        return self

    def executeCompaction(self) -> DataFrame:
        """Bin-pack small files; returns ``path`` and ``metrics``."""
        from sqlext.engine.maintenance.optimize import optimize, result_frame
        return result_frame(self._spark, optimize(self._spark, self._log, self._where))

    def executeZOrderBy(self, *cols) -> DataFrame:
        """Rewrite the selected partitions clustered by a Z-order curve of ``cols``."""
        from sqlext.engine.maintenance.optimize import optimize, result_frame
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        if not cols:
            raise AnalysisException(f"table {self._log.name}: executeZOrderBy needs at least one "
                                    "column", table=self._log.name)
        return result_frame(self._spark, optimize(self._spark, self._log, self._where, list(cols)))


@dataclasses.dataclass(frozen=True)
class IdentityGenerator:
    """An identity column's values for :meth:`DeltaTableBuilder.addColumn`: ``start``, then
    steps of ``step`` (delta-spark's ``delta.tables.IdentityGenerator``)."""

    start: int = 1
    step: int = 1


class DeltaTableBuilder:
    """delta-spark's ``DeltaTableBuilder``: name and/or location, columns, partitioning, comment
    and properties; :meth:`execute` creates (or replaces) the table in one commit through
    :func:`sqlext.names.create_table`. Generated and identity columns and ``clusterBy``
    are not supported."""

    def __init__(self, spark: SparkSession | None, mode: str):
        self._spark = spark or SparkSession.getActiveSession()
        if self._spark is None:
            raise AnalysisException("DeltaTable.create/replace: no active SparkSession; pass one")
        self._mode = mode
        self._name: str | None = None
        self._location: str | None = None
        self._comment: str | None = None
        self._fields: list[T.StructField] = []
        self._partition_by: list[str] = []
        self._properties: dict[str, str] = {}

    def tableName(self, identifier: str) -> "DeltaTableBuilder":
        """The table's name (``[schema.]table``)."""
        self._name = identifier
        return self

    def location(self, location: str) -> "DeltaTableBuilder":
        """Where the table lives (with a name: an external table)."""
        self._location = location
        return self

    def comment(self, comment: str) -> "DeltaTableBuilder":
        """The table's comment (its ``description``)."""
        self._comment = comment
        return self

    def addColumn(self, colName: str, dataType, nullable: bool = True,
                  generatedAlwaysAs: "str | IdentityGenerator | None" = None,
                  generatedByDefaultAs: "IdentityGenerator | None" = None,
                  comment: str | None = None) -> "DeltaTableBuilder":
        """One column: ``dataType`` a DataType or SQL type text (``"decimal(10,2)"``).
        ``generatedAlwaysAs``: a SQL expression (a generated column) or an
        :class:`IdentityGenerator` (``GENERATED ALWAYS AS IDENTITY``); ``generatedByDefaultAs``:
        an :class:`IdentityGenerator` (``GENERATED BY DEFAULT AS IDENTITY``), as delta-spark."""
        if isinstance(dataType, str):
            dataType = T.DataType.fromDDL(dataType)
        metadata = {"comment": comment} if comment is not None else {}
        if generatedAlwaysAs is not None and generatedByDefaultAs is not None:
            raise AnalysisException(f"DeltaTable builder, column {colName}: give "
                                    "generatedAlwaysAs or generatedByDefaultAs, not both")
        identity = generatedByDefaultAs if generatedByDefaultAs is not None else (
            generatedAlwaysAs if isinstance(generatedAlwaysAs, IdentityGenerator) else None)
        if identity is not None:
            if not isinstance(identity, IdentityGenerator) or \
                    not isinstance(dataType, T.LongType) or identity.step == 0:
                raise AnalysisException(
                    f"DeltaTable builder, column {colName}: an identity column is a LongType "
                    "column with an IdentityGenerator(start, step), step not 0")
            metadata.update(identity_metadata(identity.start, identity.step,
                                              generatedByDefaultAs is not None))
        elif generatedAlwaysAs is not None:
            metadata[GENERATION_EXPRESSION] = str(generatedAlwaysAs)
        self._fields.append(T.StructField(colName, dataType, nullable, metadata))
        return self

    def addColumns(self, cols) -> "DeltaTableBuilder":
        """Columns from a StructType or a list of StructFields."""
        self._fields.extend(cols.fields if isinstance(cols, T.StructType) else cols)
        return self

    def partitionedBy(self, *cols) -> "DeltaTableBuilder":
        """Partition columns (names, or one list of names)."""
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        self._partition_by = list(cols)
        return self

    def property(self, key: str, value: str) -> "DeltaTableBuilder":
        """A table property (``delta.enableChangeDataFeed`` and the like)."""
        self._properties[key] = value
        return self

    def execute(self) -> DeltaTable:
        """Create or replace the table; returns it."""
        ref = self._ref()
        if self._mode == "replace" and not DeltaLog(ref.location, name=ref.display).exists():
            raise TableNotFoundError(f"table {ref.display} cannot be replaced: it does not exist;"
                                     " use DeltaTable.createOrReplace", table=ref.display)
        # a named table at a given location is external; a path table is only its location
        definition = TableDefinition(T.StructType(self._fields), None, self._partition_by,
                                     dict(self._properties), self._comment,
                                     external=self._location is not None and bool(self._name))
        create_table(self._spark, ref, definition,
                     replace=self._mode in ("replace", "createOrReplace"),
                     if_not_exists=self._mode == "createIfNotExists")
        registered = Catalog(self._spark).lookup(ref.schema, ref.name) if ref.name else None
        return DeltaTable(self._spark, registered or ref)

    def _ref(self) -> TableRef:
        catalog = Catalog(self._spark)
        if self._name is None:
            if self._location is None:
                raise AnalysisException("DeltaTable.create: give tableName(...) or location(...)")
            return catalog.resolve(f"delta.`{self._location}`")
        if self._location is None:
            return catalog.resolve(self._name)
        schema, name = split_name(self._name)
        return TableRef(normalize_location(self._location), schema or catalog.current_schema(),
                        name, managed=False)
