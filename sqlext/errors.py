"""The errors sqlext raises.

Every error derives from :class:`SqlextError`. Subclasses carry delta-spark's names where
delta-spark has one, so code written against delta-spark's exceptions reads the same. A message
says what happened, to which table and version, and what the user can do about it.
"""

from __future__ import annotations


class SqlextError(Exception):
    """Base class of every error sqlext raises."""


# --- tables, versions, the log ---------------------------------------------------------------


class TableNotFoundError(SqlextError):
    """The path or name does not hold a Delta table (no ``_delta_log``)."""


class TableAlreadyExistsError(SqlextError):
    """A write in mode ``error`` / ``errorifexists`` found an existing table."""


class CorruptLogError(SqlextError):
    """The transaction log cannot be replayed (missing versions, unreadable commit, no metadata)."""


class DeletionVectorError(CorruptLogError):
    """A deletion vector cannot be read: a bad descriptor, a missing or corrupt file."""


class VersionNotFoundException(SqlextError):
    """The requested version does not exist or can no longer be reconstructed."""


class TimestampOutOfRangeError(SqlextError):
    """The requested timestamp lies before the first commit or after the latest."""


class UnsupportedTableFeatureError(SqlextError):
    """The table needs a reader or writer feature sqlext does not implement."""


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


class NonEmptyLocationError(AnalysisException):
    """A table would be created in a directory that holds files but no Delta table; the message
    names the files and how to adopt them (``CONVERT TO DELTA``)."""


class SchemaMismatchError(AnalysisException):
    """The data written does not match the table's schema and no schema change was allowed."""


class InvariantViolationError(SqlextError):
    """Written rows break a constraint of the write, such as a ``replaceWhere`` predicate."""


class ConstraintViolationError(InvariantViolationError):
    """Written rows break a constraint of the table (NOT NULL, CHECK, a column invariant), or a
    new constraint is broken by rows already in the table; nothing was committed (delta-spark's
    ``DeltaInvariantViolationException`` / ``DELTA_NEW_CHECK_CONSTRAINT_VIOLATION``)."""


class GeneratedColumnMismatchError(ConstraintViolationError):
    """A written row gives a generated column a value other than its generation expression's
    (delta-spark's ``DELTA_GENERATED_COLUMNS_EXPR_MISMATCH`` / the generated column's CHECK);
    nothing was committed."""


class IdentityColumnError(AnalysisException):
    """An identity column was given a value it does not accept (an explicit value for a
    GENERATED ALWAYS column, an UPDATE of one), or its values would overflow; nothing was
    committed."""


class UnsupportedOperationError(SqlextError):
    """The statement or option is valid Delta but not supported here, or not allowed in this form."""


class MultipleSourceRowMatchError(UnsupportedOperationError):
    """MERGE found several source rows that match and would modify the same target row."""


class ParseError(SqlextError):
    """A SQL statement cannot be parsed; the message names line and column."""


class ChangeDataFeedError(SqlextError):
    """A change feed read cannot be answered as asked (range, feed disabled, files vacuumed)."""


class ChangeDataFilesMissingError(ChangeDataFeedError, DeltaFileNotFoundError):
    """A change feed read needs a data or change file that is gone (removed by VACUUM, or lost)."""


# --- concurrency (delta-spark's names) ---------------------------------------------------------


class ConcurrentModificationException(SqlextError):
    """Another writer committed first, and its commit conflicts with this transaction."""


class ConcurrentAppendException(ConcurrentModificationException):
    """Files were added by a concurrent commit in a region this transaction read."""


class ConcurrentDeleteReadException(ConcurrentModificationException):
    """A concurrent commit removed a file this transaction read."""


class ConcurrentDeleteDeleteException(ConcurrentModificationException):
    """A concurrent commit removed a file this transaction also removes."""


class MetadataChangedException(ConcurrentModificationException):
    """A concurrent commit changed the table's metadata (schema, partitioning, properties)."""


class ProtocolChangedException(ConcurrentModificationException):
    """A concurrent commit changed the table's protocol, or created the table first."""


class ConcurrentTransactionException(ConcurrentModificationException):
    """A concurrent commit recorded the same application transaction id (``txnAppId``)."""


class ConcurrentLogCleanupException(ConcurrentModificationException):
    """Log cleanup removed commits this transaction needed to check (they were older than
    ``delta.logRetentionDuration`` and a newer checkpoint replaced them): the winners cannot be
    checked, so the transaction commits nothing. Retry it; keep the log retention longer than the
    longest transaction."""


class UnsupportedPysparkError(SqlextError, ImportError):
    """The installed pyspark is outside the range sqlext supports (raised on import)."""
