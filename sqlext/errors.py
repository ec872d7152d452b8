"""The errors sqlext raises.

Every error derives from :class:`SqlextError`. Subclasses carry delta-spark's names where
delta-spark has one, so code written against delta-spark's exceptions reads the same. A message
says what happened, to which table and version, and what the user can do about it.

Each error also answers pyspark's questions (``getCondition()``, ``getSqlState()``,
``getMessageParameters()``) with delta-spark's error condition and SQLSTATE for the same failure
where it has one, and is an instance of the ``pyspark.errors`` class delta-spark raises there
(``AnalysisException``, ``ParseException``, ``IllegalArgumentException``, ...) once the engine
is imported (:mod:`sqlext.engine.pyspark_errors`; this module imports nothing, as the kernel
may not import pyspark).
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: SQLSTATE of each error condition sqlext gives (delta-spark 4.4's ``delta-error-classes.json``,
#: Spark 4's ``error-conditions.json``), for errors that name a condition and no SQLSTATE
SQLSTATES = {
    "DELTA_CANNOT_RESTORE_TABLE_VERSION": "22003",
    "DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER": "22003",
    "DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER": "22003",
    "DELTA_CANNOT_MODIFY_APPEND_ONLY": "42809",
    "DELTA_CDC_START_VERSION_AFTER_LATEST": "22003",
    "DELTA_CONCURRENT_APPEND": "2D521",
    "DELTA_CONCURRENT_DELETE_DELETE": "2D521",
    "DELTA_CONCURRENT_DELETE_READ": "2D521",
    "DELTA_CONCURRENT_TRANSACTION": "2D521",
    "DELTA_CONCURRENT_WRITE": "2D521",
    "DELTA_CONSTRAINT_ALREADY_EXISTS": "42710",
    "DELTA_CONSTRAINT_DOES_NOT_EXIST": "42704",
    "DELTA_FAILED_TO_MERGE_FIELDS": "22005",
    "DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH": "42K09",
    "DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED": "42808",
    "DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED": "42808",
    "DELTA_INVALID_CDC_RANGE": "22003",
    "DELTA_ILLEGAL_OPTION": "42616",
    "DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS": "42616",
    "DELTA_METADATA_CHANGED": "2D521",
    "DELTA_METADATA_MISMATCH": "42KDG",
    "DELTA_MISSING_CHANGE_DATA": "KD002",
    "DELTA_MISSING_DELTA_TABLE": "42P01",
    "DELTA_MULTIPLE_CDC_BOUNDARY": "42614",
    "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE": "21506",
    "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION": "23512",
    "DELTA_NEW_NOT_NULL_VIOLATION": "23512",
    "DELTA_NO_START_FOR_CDC_READ": "42601",
    "DELTA_NOT_NULL_CONSTRAINT_VIOLATED": "23502",
    "DELTA_ONEOF_IN_TIMETRAVEL": "42601",
    "DELTA_PATH_EXISTS": "42K04",
    "DELTA_PROTOCOL_CHANGED": "2D521",
    "DELTA_REGEX_OPT_SYNTAX_ERROR": "2201B",
    "DELTA_REPLACE_WHERE_MISMATCH": "44000",
    "DELTA_SCHEMA_CHANGED": "KD007",
    "DELTA_SOURCE_IGNORE_DELETE": "0A000",
    "DELTA_SOURCE_TABLE_IGNORE_CHANGES": "0A000",
    "DELTA_STARTING_VERSION_AND_TIMESTAMP_BOTH_SET": "42613",
    "DELTA_TABLE_NOT_FOUND": "42P01",
    "DELTA_TIME_TRAVEL_INVALID_BEGIN_VALUE": "42604",
    "DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION": "42816",
    "DELTA_TIMESTAMP_GREATER_THAN_COMMIT": "42816",
    "DELTA_TIMESTAMP_INVALID": "42816",
    "DELTA_UNSUPPORTED_DROP_COLUMN": "0AKDC",
    "DELTA_UNSUPPORTED_OUTPUT_MODE": "0AKDC",
    "DELTA_UNSUPPORTED_RENAME_COLUMN": "0AKDC",
    "DELTA_UNSUPPORTED_SUBQUERY": "0AKDC",
    "DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE": "22003",
    "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT": "22003",
    "DELTA_VERSION_NOT_FOUND": "22003",
    "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES": "23001",
    "PARSE_SYNTAX_ERROR": "42601",
    "TABLE_OR_VIEW_ALREADY_EXISTS": "42P07",
    "TABLE_OR_VIEW_NOT_FOUND": "42P01",
}

class Position(NamedTuple):
    """Where in the user's SQL text an error points: ``line`` and ``column``, both from 1 (Spark's
    messages say ``line 4, pos 23``, ``pos`` counting from 0: column 24)."""

    line: int
    column: int


# a message's leading "[CONDITION]" (delta-spark's and Spark's form)
_CONDITION_PREFIX = re.compile(r"\s*\[([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)?)\]")


class SqlextError(Exception):
    """Base class of every error sqlext raises.

    Besides its message (``str(error)``), an error carries, as attributes:

    - ``error_class``: the error condition delta-spark (or Spark) gives the same failure, e.g.
      ``DELTA_PATH_EXISTS``; None when sqlext's error has no counterpart;
    - ``sqlstate``: that condition's SQLSTATE (or the class's, e.g. ``0A000`` for an unsupported
      operation); None when unknown;
    - ``message_parameters``: the condition's parameters, as far as the raising site knows them;
    - ``table`` and ``version``: the table (name or path) and version concerned, when the site
      gives them (None otherwise; the message names them regardless);
    - ``position``: a :class:`Position` in the user's SQL script the error points at, when it
      comes from a SQL statement and the statement's text places it (None otherwise).

    A class gives defaults (class attributes ``error_class`` and ``sqlstate``); a raise site that
    knows better passes them as keyword arguments: ``raise VersionNotFoundException(message,
    table=name, version=v)``, ``raise TableAlreadyExistsError(message,
    error_class="TABLE_OR_VIEW_ALREADY_EXISTS")`` (the SQLSTATE of a known condition is looked
    up in :data:`SQLSTATES`). A message that starts with delta-spark's ``[CONDITION]`` names
    its condition when no ``error_class`` is given.

    pyspark's accessors (``getCondition``, ``getErrorClass``, ``getSqlState``,
    ``getMessageParameters``, ``getMessage``, ``getQueryContext``) answer from those attributes:
    pyspark's own lookup knows no ``DELTA_*`` condition. ``pyspark_class`` names the
    ``pyspark.errors`` class the error is an instance of too once :mod:`sqlext.engine` is
    imported (see :mod:`sqlext.engine.pyspark_errors`).
    """

    error_class: str | None = None
    sqlstate: str | None = None
    #: the ``pyspark.errors`` class (by name) this class also derives from when pyspark is loaded
    pyspark_class: str | None = None

    def __init__(self, *args, error_class: str | None = None, sqlstate: str | None = None,
                 message_parameters: dict | None = None, table: str | None = None,
                 version: int | None = None, position: Position | None = None):
        # not super().__init__: pyspark's PySparkException.__init__ (a base once the engine is
        # imported) would read its positional arguments as a condition and parameters
        Exception.__init__(self, *args)
        if error_class is None and args and isinstance(args[0], str):
            named = _CONDITION_PREFIX.match(args[0])
            error_class = named.group(1) if named else None
        if error_class is not None:
            self.error_class = error_class
            if sqlstate is None:
                sqlstate = SQLSTATES.get(error_class.split(".")[0])
        if sqlstate is not None:
            self.sqlstate = sqlstate
        self.message_parameters = {str(k): str(v) for k, v in (message_parameters or {}).items()}
        self.table = table
        self.version = version
        self.position = position

    def __str__(self) -> str:
        # the message as given (and as relabelled); not PySparkException's "[CONDITION] ..."
        return Exception.__str__(self)

    # --- pyspark's PySparkException API ----------------------------------------------------

    def getCondition(self) -> str | None:  # noqa: N802 - pyspark's name
        """The error condition (``error_class``), as pyspark's ``getCondition``."""
        return self.error_class

    def getErrorClass(self) -> str | None:  # noqa: N802 - pyspark's name
        """The error condition, as pyspark's ``getErrorClass`` (deprecated there)."""
        return self.error_class

    def getSqlState(self) -> str | None:  # noqa: N802 - pyspark's name
        return self.sqlstate

    def getMessageParameters(self) -> dict[str, str]:  # noqa: N802 - pyspark's name
        return dict(self.message_parameters)

    def getMessage(self) -> str:  # noqa: N802 - pyspark's name
        """``[CONDITION] message``, as pyspark's (the message alone without a condition)."""
        message = str(self)
        if self.error_class is None or message.lstrip().startswith(f"[{self.error_class}]"):
            return message
        return f"[{self.error_class}] {message}"

    def getQueryContext(self) -> list:  # noqa: N802 - pyspark's name
        return []

    def getBreakingChangeInfo(self):  # noqa: N802 - pyspark's name
        return None

    # pyspark's code reads these fields of a PySparkException directly
    @property
    def _errorClass(self) -> str | None:  # noqa: N802
        return self.error_class

    @property
    def _messageParameters(self) -> dict[str, str]:  # noqa: N802
        return self.message_parameters

    @property
    def _message(self) -> str:
        return str(self)

    @property
    def _contexts(self) -> list:
        return []


# --- tables, versions, the log ---------------------------------------------------------------


class TableNotFoundError(SqlextError):
    """The path or name does not hold a Delta table (no ``_delta_log``)."""
    pyspark_class = "AnalysisException"
    error_class = "DELTA_MISSING_DELTA_TABLE"
    sqlstate = "42P01"


class TableAlreadyExistsError(SqlextError):
    """A write in mode ``error`` / ``errorifexists`` found an existing table."""
    pyspark_class = "AnalysisException"
    error_class = "DELTA_PATH_EXISTS"       # a path; a name: TABLE_OR_VIEW_ALREADY_EXISTS
    sqlstate = "42K04"


class CorruptLogError(SqlextError):
    """The transaction log cannot be replayed (missing versions, unreadable commit, no metadata)."""


class DeletionVectorError(CorruptLogError):
    """A deletion vector cannot be read: a bad descriptor, a missing or corrupt file."""


class VersionNotFoundException(SqlextError):
    """The requested version does not exist or can no longer be reconstructed."""
    pyspark_class = "AnalysisException"
    error_class = "DELTA_VERSION_NOT_FOUND"
    sqlstate = "22003"


class TimestampOutOfRangeError(SqlextError):
    """The requested timestamp lies before the first commit or after the latest."""
    pyspark_class = "AnalysisException"
    sqlstate = "42816"     # DELTA_TIMESTAMP_GREATER_THAN_COMMIT / _EARLIER_THAN_COMMIT_RETENTION


class UnsupportedTableFeatureError(SqlextError):
    """The table needs a reader or writer feature sqlext does not implement."""
    sqlstate = "56038"     # DELTA_UNSUPPORTED_FEATURES_FOR_READ / _FOR_WRITE (no pyspark class)


class InvalidProtocolChangeError(SqlextError):
    """A requested protocol (versions or a table feature) that Delta does not define or
    allow; the table is unchanged."""


class CommitFailedError(SqlextError):
    """The file system refused to write a commit (a full disk, a quota, permissions); nothing
    was committed."""


class UnsafeObjectStoreError(SqlextError):
    """An object store does not honour conditional writes (``If-None-Match: *``), so a commit
    could silently replace another writer's; nothing was committed."""


class DeltaFileNotFoundError(SqlextError):
    """A data or change file the log refers to is missing (removed by VACUUM, or lost)."""


# --- writes and statements ---------------------------------------------------------------------


class AnalysisException(SqlextError):
    """A statement or call refers to something that does not exist or does not type-check."""
    pyspark_class = "AnalysisException"


class IllegalArgumentError(SqlextError):
    """An argument or option has a value that cannot be used (delta-spark's
    ``IllegalArgumentException``: an idempotent write with ``txnVersion`` and no ``txnAppId``, a
    writer option sqlext does not know, ...)."""
    pyspark_class = "IllegalArgumentException"


class InvalidTimeTravelError(AnalysisException, IllegalArgumentError):
    """A version to read at that is no version (``VERSION AS OF 'abc'``, ``versionAsOf="x"``),
    or both a version and a timestamp (delta-spark's ``IllegalArgumentException``
    ``DELTA_TIME_TRAVEL_INVALID_BEGIN_VALUE`` / ``DELTA_ONEOF_IN_TIMETRAVEL``)."""
    error_class = "DELTA_TIME_TRAVEL_INVALID_BEGIN_VALUE"
    sqlstate = "42604"


class NonEmptyLocationError(AnalysisException):
    """A table would be created in a directory that holds files but no Delta table; the message
    names the files and how to adopt them (``CONVERT TO DELTA``)."""


class SchemaMismatchError(AnalysisException):
    """The data written does not match the table's schema and no schema change was allowed."""
    error_class = "DELTA_METADATA_MISMATCH"     # a column's type: DELTA_FAILED_TO_MERGE_FIELDS
    sqlstate = "42KDG"


class InvariantViolationError(SqlextError):
    """Written rows break a constraint of the write, such as a ``replaceWhere`` predicate."""
    pyspark_class = "AnalysisException"


class ConstraintViolationError(InvariantViolationError):
    """Written rows break a constraint of the table (NOT NULL, CHECK, a column invariant), or a
    new constraint is broken by rows already in the table; nothing was committed (delta-spark's
    ``DeltaInvariantViolationException`` / ``DELTA_NEW_CHECK_CONSTRAINT_VIOLATION``)."""
    error_class = "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"
    sqlstate = "23001"


class GeneratedColumnMismatchError(ConstraintViolationError):
    """A written row gives a generated column a value other than its generation expression's
    (delta-spark's ``DELTA_GENERATED_COLUMNS_EXPR_MISMATCH`` / the generated column's CHECK);
    nothing was committed."""


class IdentityColumnError(AnalysisException):
    """An identity column was given a value it does not accept (an explicit value for a
    GENERATED ALWAYS column, an UPDATE of one), or its values would overflow; nothing was
    committed."""
    sqlstate = "42808"


class UnsupportedOperationError(SqlextError):
    """The statement or option is valid Delta but not supported here, or not allowed in this form."""
    pyspark_class = "AnalysisException"
    sqlstate = "0A000"


class VacuumRetentionError(UnsupportedOperationError, IllegalArgumentError):
    """VACUUM was asked to keep less history than the table's
    ``delta.deletedFileRetentionDuration`` while ``retentionDurationCheck`` is on, or a negative
    retention (delta-spark's ``IllegalArgumentException``); nothing was deleted."""
    error_class = "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT"
    sqlstate = "22003"


class MultipleSourceRowMatchError(UnsupportedOperationError):
    """MERGE found several source rows that match and would modify the same target row."""
    pyspark_class = "UnsupportedOperationException"
    error_class = "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"
    sqlstate = "21506"


class ParseError(SqlextError):
    """A SQL statement cannot be parsed; the message names line and column (``position``).

    ``token`` is the text it fails near, ``statement`` the statement's SQL (None when unknown)."""
    pyspark_class = "ParseException"
    error_class = "PARSE_SYNTAX_ERROR"
    sqlstate = "42601"
    token: str | None = None
    statement: str | None = None

    @property
    def line(self) -> int | None:
        """The line (from 1) the error points at, or None."""
        return self.position.line if self.position is not None else None

    @property
    def column(self) -> int | None:
        """The column (from 1) the error points at, or None."""
        return self.position.column if self.position is not None else None


class ChangeDataFeedError(SqlextError):
    """A change feed read cannot be answered as asked (range, feed disabled, files vacuumed)."""
    pyspark_class = "AnalysisException"


class ChangeDataRangeError(ChangeDataFeedError, IllegalArgumentError):
    """A change feed range that cannot be read: it starts after the latest version, or ends
    before it starts (delta-spark's ``IllegalArgumentException``)."""
    sqlstate = "22003"      # DELTA_CDC_START_VERSION_AFTER_LATEST / DELTA_INVALID_CDC_RANGE


class ChangeDataFilesMissingError(ChangeDataFeedError, DeltaFileNotFoundError):
    """A change feed read needs a data or change file that is gone (removed by VACUUM, or lost)."""


# --- concurrency (delta-spark's names) ---------------------------------------------------------


class ConcurrentModificationException(SqlextError):
    """Another writer committed first, and its commit conflicts with this transaction."""
    pyspark_class = "PySparkException"      # as delta-spark's delta.exceptions classes
    sqlstate = "2D521"


class ConcurrentAppendException(ConcurrentModificationException):
    """Files were added by a concurrent commit in a region this transaction read."""
    error_class = "DELTA_CONCURRENT_APPEND.WITHOUT_HINT"


class ConcurrentDeleteReadException(ConcurrentModificationException):
    """A concurrent commit removed a file this transaction read."""
    error_class = "DELTA_CONCURRENT_DELETE_READ.WITHOUT_HINT"


class ConcurrentDeleteDeleteException(ConcurrentModificationException):
    """A concurrent commit removed a file this transaction also removes."""
    error_class = "DELTA_CONCURRENT_DELETE_DELETE.WITHOUT_HINT"


class MetadataChangedException(ConcurrentModificationException):
    """A concurrent commit changed the table's metadata (schema, partitioning, properties)."""
    error_class = "DELTA_METADATA_CHANGED"


class ProtocolChangedException(ConcurrentModificationException):
    """A concurrent commit changed the table's protocol, or created the table first."""
    error_class = "DELTA_PROTOCOL_CHANGED"


class ConcurrentTransactionException(ConcurrentModificationException):
    """A concurrent commit recorded the same application transaction id (``txnAppId``)."""
    error_class = "DELTA_CONCURRENT_TRANSACTION"


class ConcurrentLogCleanupException(ConcurrentModificationException):
    """Log cleanup removed commits this transaction needed to check (they were older than
    ``delta.logRetentionDuration`` and a newer checkpoint replaced them): the winners cannot be
    checked, so the transaction commits nothing. Retry it; keep the log retention longer than the
    longest transaction."""


class UnsupportedPysparkError(SqlextError, ImportError):
    """The installed pyspark is outside the range sqlext supports (raised on import)."""


#: what ``from sqlext.errors import *`` (and ``sqlext``'s namespace) takes: the error classes
__all__ = sorted(name for name, value in list(globals().items())
                 if isinstance(value, type) and issubclass(value, Exception)
                 and value.__module__ == __name__)
