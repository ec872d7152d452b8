"""The Delta source of a streaming query, as delta-spark's ``DeltaSource``: a Spark Python data
source (``pyspark.sql.datasource``, :class:`DeltaStreamSource`, format :data:`SOURCE_NAME`)
whose offsets walk the table's log.

An offset is delta-spark's ``DeltaSourceOffset``: ``{"sourceVersion": 1, "reservoirId": <table
id>, "reservoirVersion": v, "index": i, "isStartingVersion": b}``, the position of the last file
a batch read. The files come in this order: with ``isStartingVersion`` (no ``startingVersion``
option), the live files of the snapshot at the version current when the query first started
(ordered by modification time, then path), then the files each later commit adds, commit by
commit, in the commit's order; with ``startingVersion``, the files added from that version on.
``index`` -1 is "before the version's first file", :data:`END_INDEX` "after its last".

A commit that removes data (DELETE, UPDATE, MERGE, an overwrite) stops the stream with
delta-spark's error (``DELTA_SOURCE_IGNORE_DELETE`` / ``DELTA_SOURCE_TABLE_IGNORE_CHANGES``)
unless ``ignoreDeletes`` (a commit that only removes: skipped), ``ignoreChanges`` (its added
files are read again: rewritten rows come twice) or ``skipChangeCommits`` (the whole commit is
skipped) says otherwise; ``dataChange=false`` commits (OPTIMIZE) add nothing to the stream.

With ``readChangeFeed`` the stream is the table's change feed: the rows get ``_change_type``,
``_commit_version`` and ``_commit_timestamp``; without a start the snapshot's files come as
``insert`` rows of its version, then each commit's changes
(:func:`sqlext.log.changes_plan.plan_changes`: its cdc files, else its added files as inserts
and removed ones as deletes); deletes and updates do not stop it. A commit giving a file a new
deletion vector (a DELETE, UPDATE or MERGE on a table with deletion vectors) streams, as
delta-spark's, the rows the new vector deletes and the old did not as ``delete`` changes, and the
reverse as ``insert`` changes (:func:`_selected_rows`).

``startingTimestamp`` starts at the first commit made at or after it (a timestamp or date
string, in the session's time zone unless it names its offset; after the latest commit:
delta-spark's ``DELTA_TIMESTAMP_GREATER_THAN_COMMIT``), read like ``startingVersion``.
``excludeRegex`` leaves out the files whose path it finds. A schema change in a commit read stops
the stream as in delta-spark (:mod:`.schema_changes`).

Admission control (``maxFilesPerTrigger``, default 1000 unless ``maxBytesPerTrigger`` is given;
``maxBytesPerTrigger``, a soft limit: files are taken while the batch is under it, so the file
crossing it is read, and one file at least; ``Trigger.AvailableNow`` reading up to the version
current when the query starts) needs pyspark 4.2 or later (``latestOffset(start,
limit)``, ``SupportsTriggerAvailableNow``): on 4.0 and 4.1 each batch reads all that is there,
``maxFilesPerTrigger``/``maxBytesPerTrigger`` are refused (:func:`require_admission_control`),
and ``Trigger.AvailableNow`` reads, in one batch, up to the version current when it starts.

The reader runs in Spark's Python workers: the log is read with sqlext's kernel (no JVM), each
file with pyarrow (:func:`sqlext.engine.io.python_source.read_delta_file`: column mapping, partition
values, deletion vectors). Locations must be reachable without a JVM (local paths, s3 through
sqlext's store), as for ``sqlext-thriftserver``.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Iterator

from pyspark.sql import types as T
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from sqlext.engine.streaming.schema_changes import check_schema_change
from sqlext.engine.streaming.schema_log import (METADATA_CHANGE_INDEX, POST_METADATA_CHANGE_INDEX,
                                                SchemaLog, SchemaTracking,
                                                require_tracking_support, tracking_location)
from sqlext.errors import (IllegalArgumentError, SqlextError, UnsupportedOperationError,
                           VersionNotFoundException)
from sqlext.log.actions import AddFile, Metadata, Protocol, RemoveFile
from sqlext.log.column_mapping import ColumnMapping, mapping_mode
from sqlext.log.table import DeltaLog
from sqlext.engine.io.python_source import DeltaFile, logical_schema, read_delta_file

try:        # pyspark 4.2+: admission control and Trigger.AvailableNow for Python sources
    from pyspark.sql.streaming.datasource import (ReadAllAvailable, ReadMaxBytes,
                                                  ReadMaxFiles, SupportsTriggerAvailableNow)
except ImportError:     # pragma: no cover - pyspark 4.0/4.1
    ReadAllAvailable = ReadMaxBytes = ReadMaxFiles = None

    class SupportsTriggerAvailableNow:      # type: ignore[no-redef]
        """Absent before pyspark 4.2 (Spark reads all available data once instead)."""

SOURCE_NAME = "sqlext_delta_stream"
#: the option :mod:`sqlext.drop_in.streaming` passes the session's time zone in (Spark's
#: ``spark.sql.session.timeZone``: ``startingTimestamp`` without an offset is read in it)
TIME_ZONE_OPTION = "sqlext.sessionTimeZone"
CHANGE_FIELDS = [T.StructField("_change_type", T.StringType()),
                 T.StructField("_commit_version", T.LongType()),
                 T.StructField("_commit_timestamp", T.TimestampType())]


class _Change:
    """A file of the change feed stream: its rows are changes of ``version`` of
    ``change_type`` (None: a cdc file, typed per row)."""

    def __init__(self, path, size, partition_values, deletion_vector, change_type, version,
                 timestamp, selection=None):
        self.path, self.size, self.partition_values = path, size, partition_values
        self.deletion_vector, self.change_type = deletion_vector, change_type
        self.version, self.timestamp = version, timestamp
        # (A, B): only the rows deletion vector A deletes and B does not are changes
        self.selection = selection
BASE_INDEX = -1
END_INDEX = 2 ** 63 - 1         # Long.MaxValue, as delta-spark's DeltaSourceOffset.END_INDEX
DEFAULT_MAX_FILES = 1000
#: a partition (one Spark task) reads files up to this many bytes in all
PARTITION_BYTES = 128 * 1024 * 1024
TRUE = ("true", "1", "yes")


#: the options only Spark's admission control can honour, by their lower-cased keys
ADMISSION_OPTIONS = {"maxfilespertrigger": "maxFilesPerTrigger",
                     "maxbytespertrigger": "maxBytesPerTrigger"}


def require_admission_control(spark_version: str, options: dict, location: str = "") -> None:
    """Refuse ``maxFilesPerTrigger``/``maxBytesPerTrigger`` on a Spark before 4.2 (its Python
    data sources have no admission control: every batch would read all new files)."""
    if tuple(int(n) for n in re.findall(r"\d+", spark_version)[:2]) >= (4, 2):
        return
    given = [ADMISSION_OPTIONS[k.lower()] for k in map(str, options)
             if k.lower() in ADMISSION_OPTIONS]
    if given:
        raise UnsupportedOperationError(
            f"streaming read of {location or 'a Delta table'}: option {given[0]} needs pyspark "
            f"4.2 or later (Spark {spark_version}'s Python data sources have no admission "
            "control, so every batch reads all new files); drop the option or upgrade "
            "(pip install 'pyspark>=4.2')", table=location or None)


def register(spark) -> None:
    """Register :class:`DeltaStreamSource` on ``spark`` (once per session)."""
    if not getattr(spark, "_sqlext_stream_source", False):
        spark.dataSource.register(DeltaStreamSource)
        try:
            spark._sqlext_stream_source = True
        except AttributeError:      # pragma: no cover - a session refusing attributes
            pass


class DeltaFiles(InputPartition):
    """Files one Spark task reads, in stream order."""

    def __init__(self, files: list[DeltaFile]):
        super().__init__(len(files))
        self.files = files


class DeltaStreamSource(DataSource):
    """``spark.readStream.format("sqlext_delta_stream").load(location)`` (what
    ``readStream.format("delta")`` becomes after ``sqlext.install``)."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> T.StructType:
        """The table's current columns by logical name (with ``readChangeFeed``, then
        ``_change_type``, ``_commit_version``, ``_commit_timestamp``)."""
        opts = {str(k).lower(): v for k, v in self.options.items()}
        location = self.options["path"]
        metadata = DeltaLog(location).snapshot().metadata
        tracking = _tracking(opts, location, metadata.id)
        if tracking is not None and tracking.current is not None:    # the schema log's
            metadata = tracking.current.metadata(metadata)
        schema = logical_schema(metadata.schema_string)
        if str(opts.get("readchangefeed", "")).lower() in TRUE:
            schema = T.StructType(list(schema.fields) + CHANGE_FIELDS)
        return schema

    def streamReader(self, schema: T.StructType) -> "DeltaStreamReader":  # noqa: N802
        return DeltaStreamReader(self.options["path"], schema, dict(self.options))


class DeltaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The offsets and files of one query's stream of the table at ``location``."""

    def __init__(self, location: str, schema: T.StructType, options: dict):
        self.location = location
        self.schema = schema
        opts = {str(k).lower(): v for k, v in options.items()}
        if ReadMaxFiles is None:
            import pyspark
            require_admission_control(pyspark.__version__, opts, location)
            require_tracking_support(opts, location)
        self.starting_version = _starting_version(opts.get("startingversion"))
        self.starting_timestamp = None
        self.time_zone = str(opts.get(TIME_ZONE_OPTION.lower()) or "UTC")
        if opts.get("startingtimestamp") is not None:
            if self.starting_version is not None:
                raise SqlextError(
                    "[DELTA_STARTING_VERSION_AND_TIMESTAMP_BOTH_SET] Please either provide "
                    "'startingVersion' or 'startingTimestamp'",
                    error_class="DELTA_STARTING_VERSION_AND_TIMESTAMP_BOTH_SET")
            self.starting_timestamp = _timestamp_ms(opts["startingtimestamp"], self.time_zone)
        self.max_bytes = _max_bytes(opts.get("maxbytespertrigger"))
        # delta-spark: 1000 files a batch unless a byte limit is given (then no file limit)
        default_files = DEFAULT_MAX_FILES if self.max_bytes is None else None
        raw_files = opts.get("maxfilespertrigger")
        try:
            self.max_files = int(raw_files) if raw_files is not None else default_files
        except ValueError:
            self.max_files = 0
        if self.max_files is not None and self.max_files <= 0:
            raise _illegal_option(raw_files, "maxFilesPerTrigger", "must be a positive integer")
        exclude = opts.get("excluderegex")
        try:
            self.exclude = re.compile(str(exclude)) if exclude is not None else None
        except re.error as exc:
            raise SqlextError(f"[DELTA_REGEX_OPT_SYNTAX_ERROR] Please recheck your syntax for "
                              f"'excludeRegex': {exclude!r} ({exc})",
                              error_class="DELTA_REGEX_OPT_SYNTAX_ERROR") from None
        self.cdf = str(opts.get("readchangefeed", "")).lower() in TRUE
        self.table_schema = T.StructType(schema.fields[:-3]) if self.cdf else schema
        self.ignore_deletes = str(opts.get("ignoredeletes", "")).lower() in TRUE
        # ignoreFileDeletion: delta-spark's deprecated name of ignoreChanges
        self.ignore_changes = any(str(opts.get(k, "")).lower() in TRUE
                                  for k in ("ignorechanges", "ignorefiledeletion"))
        self.skip_change_commits = str(opts.get("skipchangecommits", "")).lower() in TRUE
        snapshot = self._log().snapshot()
        self.table_id = snapshot.metadata.id
        # schemaTrackingLocation: the schema log's latest entry is the schema read
        self.tracking = _tracking(opts, location, self.table_id)
        self.read_metadata = snapshot.metadata
        if self.tracking is not None:
            if self.tracking.current is not None:
                self.read_metadata = self.tracking.current.metadata(snapshot.metadata)
        self.schema_string = self.read_metadata.schema_string
        self.mapping_mode = mapping_mode(self.read_metadata)
        self.mapping = ColumnMapping.of(self.read_metadata)
        self.bound: int | None = None           # Trigger.AvailableNow: the last version read
        self._adds: dict[int, list[AddFile]] = {}

    # -- state not shipped to the executors ------------------------------------------------

    def _log(self) -> DeltaLog:
        log = self.__dict__.get("_delta_log")
        if log is None:
            log = self.__dict__["_delta_log"] = DeltaLog(self.location)
        return log

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_delta_log", None)
        state["_adds"] = {}
        state["tracking"] = None        # the executors only read files
        return state

    # -- offsets ---------------------------------------------------------------------------

    def offset(self, version: int, index: int, starting: bool) -> dict:
        """delta-spark's ``DeltaSourceOffset`` as a dict."""
        return {"sourceVersion": 1, "reservoirId": self.table_id, "reservoirVersion": version,
                "index": index, "isStartingVersion": starting}

    def initialOffset(self) -> dict:  # noqa: N802
        self._check_unblocked()
        latest = self._latest()
        if self.starting_timestamp is not None:
            return self.offset(self._version_at(self.starting_timestamp, latest), BASE_INDEX,
                               False)
        if self.starting_version == "latest":
            return self.offset(latest, END_INDEX, False)
        if self.starting_version is not None:
            if self.starting_version > latest:
                earliest = self._log().listing().earliest_commit
                raise VersionNotFoundException(
                    f"[DELTA_VERSION_NOT_FOUND] Cannot time travel Delta table to version "
                    f"{self.starting_version}. Available versions: [{earliest}, {latest}]. "
                    f"(startingVersion of a stream of {self.location})",
                    table=self.location, version=self.starting_version)
            return self.offset(self.starting_version, BASE_INDEX, False)
        return self.offset(latest, BASE_INDEX, True)

    def getDefaultReadLimit(self):  # noqa: N802
        """``maxFilesPerTrigger`` (Spark takes one limit: with both options the byte limit is
        applied by :meth:`latestOffset` itself), else ``maxBytesPerTrigger``."""
        if ReadMaxFiles is None:
            return None
        if self.max_files is not None:
            return ReadMaxFiles(self.max_files)
        return ReadMaxBytes(self.max_bytes)

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        self.bound = self._log().latest_version()

    def latestOffset(self, start: dict | None = None, limit=None) -> dict:  # noqa: N802
        """The end of the next batch: after at most ``limit``'s files (``ReadMaxFiles``) past
        ``start``, else after all files up to the latest version (the version current at start
        under ``Trigger.AvailableNow``). pyspark 4.0/4.1 call it without arguments."""
        self._same_table(start)
        self._check_unblocked()
        latest = self._latest()
        end = self.offset(latest, END_INDEX, False)
        if start is not None and _key(end) < _key(start):
            return start
        if start is None:
            return end
        pending = self._pending_change(start)
        if pending is not None:
            return pending
        if start.get("isStartingVersion") and start["reservoirVersion"] == latest:
            end["isStartingVersion"] = True
        max_files = getattr(limit, "max_files", None)
        max_bytes = getattr(limit, "max_bytes", None)
        if ReadAllAvailable is not None and not isinstance(limit, ReadAllAvailable) \
                and max_bytes is None:
            max_bytes = self.max_bytes
        count = size = 0
        for version, index, starting, add in self._files(start, latest):
            if add is None:             # a metadata change ends the batch before it
                return self.offset(version, index, False)
            # delta-spark's admission: a file is taken while the files and bytes taken so far
            # are under the limits (the file crossing the byte limit is taken)
            count += 1
            size += add.size or 0
            if (max_files is not None and count >= max_files) \
                    or (max_bytes is not None and size >= max_bytes):
                return self.offset(version, index, starting)
        # no file past start: start itself (Spark runs no batch)
        return end if count else start

    def partitions(self, start: dict, end: dict) -> list[DeltaFiles]:
        """The files after ``start`` up to ``end`` (inclusive), in tasks of about
        :data:`PARTITION_BYTES`."""
        self._same_table(start)
        self._check_unblocked()
        self._start_tracking(start)
        parts, group, size = [], [], 0
        end_key = _key(end)
        for version, index, _, add in self._files(start, end["reservoirVersion"]):
            if (version, index) > end_key:
                break
            if add is None:
                continue
            values = (self.mapping.logical_partition_values(add.partition_values)
                      if self.mapping is not None else dict(add.partition_values or {}))
            log = self._log()
            part = DeltaFile(log.location, log.data_path(add.path),
                             {k.lower(): v for k, v in values.items()},
                             add.deletion_vector, self.schema_string, self.mapping_mode, version)
            if isinstance(add, _Change):
                part.change = (add.change_type, add.version, add.timestamp)
                part.selection = add.selection
            group.append(part)
            size += add.size or 0
            if size >= PARTITION_BYTES:
                parts.append(DeltaFiles(group))
                group, size = [], 0
        if group:
            parts.append(DeltaFiles(group))
        return parts

    def read(self, partition: InputPartition):
        """The rows of a partition's files, in order (:func:`read_delta_file`)."""
        for part in partition.files:
            change = getattr(part, "change", None)
            if change is None:
                yield from read_delta_file(part, self.schema)
            else:
                yield from _change_rows(part, self.schema, *change)

    def commit(self, end: dict) -> None:
        """Forget the files before ``end``; a batch ended by a metadata change records the
        change in the schema log and stops the stream (:meth:`SchemaTracking.evolve`)."""
        version = end["reservoirVersion"]
        if self.tracking is not None \
                and end["index"] in (METADATA_CHANGE_INDEX, POST_METADATA_CHANGE_INDEX):
            if self.tracking.is_change(version, *self._commit_change(version)):
                snapshot = self._log().snapshot(version)
                self.tracking.evolve(version, snapshot.metadata, snapshot.protocol)
        for v in [v for v in self._adds if v < version]:
            del self._adds[v]

    def _same_table(self, offset: dict | None) -> None:
        """delta-spark's refusal of a checkpoint written while reading another table (e.g. one
        deleted and created again at the same location)."""
        if offset is not None and offset.get("reservoirId") not in (None, self.table_id):
            raise SqlextError(
                "[DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE] The streaming query was "
                f"reading from an unexpected Delta table (id = '{self.table_id}'). It used to "
                f"read from another Delta table (id = '{offset['reservoirId']}') according to "
                "checkpoint. This may happen when you changed the code to read from a new table "
                "or you deleted and re-created a table. Please revert your change or delete your "
                f"streaming query checkpoint to restart from scratch. (table {self.location})",
                error_class="DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE", sqlstate="55019",
                table=self.location)

    # -- schemaTrackingLocation ------------------------------------------------------------

    def _check_unblocked(self) -> None:
        """Once per query run, before its first batch (a batch planned before the restart
        included): a rename or drop the schema log recorded must be allowed
        (:meth:`SchemaTracking.check_unblocked`; raised here, not while Spark builds the
        reader, whose errors pyspark's runner garbles)."""
        if self.tracking is not None and not self.__dict__.get("_unblocked"):
            self.tracking.check_unblocked()
            self._unblocked = True

    def _start_tracking(self, start: dict | None) -> None:
        """Write the schema log's first entry (the metadata at ``start``'s version) when it
        is empty."""
        if self.tracking is None or self.tracking.current is not None or start is None:
            return
        version = start["reservoirVersion"]
        snapshot = self._log().snapshot(version)
        self.tracking.initialize(version, snapshot.metadata, snapshot.protocol,
                                 self.read_metadata)

    def _pending_change(self, start: dict) -> dict | None:
        """The next offset while ``start`` is at a metadata change not yet tracked: its
        second barrier offset, then ``start`` itself (no progress until the restart)."""
        if self.tracking is None:
            return None
        self._start_tracking(start)
        version, index = start["reservoirVersion"], start["index"]
        if index == METADATA_CHANGE_INDEX:
            return self.offset(version, POST_METADATA_CHANGE_INDEX, False)
        if index == POST_METADATA_CHANGE_INDEX \
                and self.tracking.is_change(version, *self._commit_change(version)):
            return start
        return None

    def _commit_change(self, version: int) -> tuple[Metadata | None, Protocol | None]:
        """The ``metaData`` and ``protocol`` actions of commit ``version`` (None: it has
        none)."""
        actions = self._log().read_commit(version)
        found = [[a for a in actions if isinstance(a, kind)] for kind in (Metadata, Protocol)]
        return found[0][-1] if found[0] else None, found[1][-1] if found[1] else None

    # -- the log ---------------------------------------------------------------------------

    def _latest(self) -> int:
        latest = self._log().latest_version()
        if latest is None:
            raise SqlextError(f"streaming read: no Delta table at {self.location}",
                              error_class="DELTA_TABLE_NOT_FOUND")
        return latest if self.bound is None else min(latest, self.bound)

    def _files(self, start: dict, last_version: int) -> Iterator[tuple[int, int, bool, AddFile]]:
        """(version, index, isStartingVersion, file) of each file after ``start``, through
        version ``last_version``; files whose path ``excludeRegex`` finds are left out (their
        index counted)."""
        for version, index, starting, add in self._all_files(start, last_version):
            if add is None or self.exclude is None or not self.exclude.search(add.path):
                yield version, index, starting, add

    def _version_at(self, ms: int, latest: int) -> int:
        """delta-spark's starting version for ``startingTimestamp``: the first commit made at
        or after it (after the latest commit: delta-spark's error)."""
        times = self._log().commit_timestamps()
        for version in sorted(v for v in times if v <= latest):
            if times[version] >= ms:
                return version
        raise SqlextError(
            f"[DELTA_TIMESTAMP_GREATER_THAN_COMMIT] Timestamp {_fmt_ms(ms, self.time_zone)} is "
            f"after the table's latest version ({_fmt_ms(times[latest], self.time_zone)}). Use a "
            f"timestamp at or before {_fmt_ms(times[latest], self.time_zone)}.",
            error_class="DELTA_TIMESTAMP_GREATER_THAN_COMMIT",
            table=self.location, version=latest)

    def _all_files(self, start: dict, last_version: int
                   ) -> Iterator[tuple[int, int, bool, AddFile]]:
        version, index = start["reservoirVersion"], start["index"]
        first_commit = version
        if start.get("isStartingVersion"):
            if index != END_INDEX:
                snapshot = self._log().snapshot(version)
                files = sorted(snapshot.files, key=lambda f: (f.modification_time, f.path))
                if self.cdf:        # the snapshot as inserts at its version
                    ts = self._log().commit_timestamps()[version]
                    files = [_Change(f.path, f.size, f.partition_values, f.deletion_vector,
                                     "insert", version, ts) for f in files]
                for i, f in enumerate(files):
                    if i > index:
                        yield version, i, True, f
            first_commit = version + 1
        for v in range(first_commit, last_version + 1):
            if self.tracking is not None and (v, METADATA_CHANGE_INDEX) > (version, index) \
                    and self.tracking.is_change(v, *self._commit_change(v)):
                yield v, METADATA_CHANGE_INDEX, False, None     # the batch ends here
                return
            for i, f in enumerate(self._commit_adds(v)):
                if v > version or start.get("isStartingVersion") or i > index:
                    yield v, i, False, f

    def _commit_adds(self, version: int) -> list[AddFile]:
        """The files commit ``version`` adds to the stream; raises delta-spark's errors for a
        commit removing data (unless the options skip it) or changing the schema read."""
        if version in self._adds:
            return self._adds[version]
        if self.cdf:
            self._adds[version] = self._commit_changes(version)
            return self._adds[version]
        actions = self._log().read_commit(version)
        adds = [a for a in actions if isinstance(a, AddFile) and a.data_change]
        removes = [a for a in actions if isinstance(a, RemoveFile) and a.data_change]
        for m in (a for a in actions if isinstance(a, Metadata)):
            if m.schema_string and self.tracking is None:
                self._check_schema(version, self.schema, m.schema_string)
        if removes:
            adds = self._changed(version, adds, removes)
        self._adds[version] = adds
        return adds

    def _check_schema(self, version: int, read_schema: T.StructType, schema_string: str):
        """delta-spark's stop on a schema change in commit ``version`` (:mod:`.schema_changes`)."""
        previous = None
        if self.mapping_mode not in (None, "none") and version > 0:
            previous = self._log().snapshot(version - 1).metadata.schema_string
        check_schema_change(self.location, version, read_schema, schema_string, previous,
                            previous is not None)

    def _commit_changes(self, version: int) -> list[_Change]:
        """The change files of commit ``version`` (:func:`sqlext.log.changes_plan.plan_changes`:
        its cdc files, else its added files as inserts and removed ones as deletes)."""
        from sqlext.log.changes_plan import plan_changes
        log = self._log()
        listing = log.listing()
        plan = plan_changes(log, listing, log.commit_timestamps(listing), version, version)
        if self.tracking is None \
                and logical_schema(plan.metadata.schema_string) != self.table_schema:
            self._check_schema(version, self.table_schema, plan.metadata.schema_string)
        return [_Change(f.path, 0, f.partition_values, f.deletion_vector, f.change_type,
                        f.version, f.timestamp, f.selection) for f in plan.files]

    def _changed(self, version: int, adds: list[AddFile], removes: list[RemoveFile]):
        if self.skip_change_commits:
            return []
        if self.ignore_changes:
            return adds
        if not adds:
            if self.ignore_deletes:
                return []
            raise UnsupportedOperationError(
                f"[DELTA_SOURCE_IGNORE_DELETE] Detected deleted data (for example "
                f"{removes[0].path}) from streaming source at version {version}. This is "
                "currently not supported. If you'd like to ignore deletes, set the option "
                f"'ignoreDeletes' to 'true'. The source table can be found at path "
                f"{self.location}.", error_class="DELTA_SOURCE_IGNORE_DELETE", sqlstate="0A000",
                table=self.location, version=version)
        raise UnsupportedOperationError(
            f"[DELTA_SOURCE_TABLE_IGNORE_CHANGES] Detected a data update (for example "
            f"{removes[0].path}) in the source table at version {version}. This is currently "
            "not supported. If this is going to happen regularly and you are okay to skip "
            "changes, set the option 'skipChangeCommits' to 'true'. If you would like the data "
            "update to be reflected, please restart this query with a fresh checkpoint "
            f"directory. The source table can be found at path {self.location}.",
            error_class="DELTA_SOURCE_TABLE_IGNORE_CHANGES", sqlstate="0A000",
            table=self.location, version=version)


_BYTE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
               "g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "p": 1 << 50,
               "pb": 1 << 50}


def _max_bytes(value) -> int | None:
    """``maxBytesPerTrigger`` as Spark's byte strings (``1048576``, ``10m``, ``1g``)."""
    if value is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", str(value))
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _BYTE_UNITS or int(match.group(1)) <= 0:
        raise _illegal_option(value, "maxBytesPerTrigger",
                              "must be a size configuration such as '10g'")
    return int(match.group(1)) * _BYTE_UNITS[unit]


def _timestamp_ms(value, time_zone: str = "UTC") -> int:
    """``startingTimestamp`` (a timestamp or date string, as Spark casts it; in ``time_zone``,
    the session's, unless it names its offset) in ms since the epoch."""
    text = str(value).strip()
    try:
        moment = _dt.datetime.fromisoformat(text.replace(" ", "T", 1) if " " in text else text)
    except ValueError:
        raise SqlextError(
            f"[DELTA_TIMESTAMP_INVALID] The provided timestamp ('{text}') cannot be converted to "
            "a valid timestamp.", error_class="DELTA_TIMESTAMP_INVALID") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_zone(time_zone))
    return int(moment.timestamp() * 1000)


def _tracking(options: dict, location: str, table_id: str) -> SchemaTracking | None:
    """The stream's schema log (``schemaTrackingLocation`` in lower-cased ``options``), with
    the metadata-only commits after its latest entry merged into it
    (:meth:`SchemaTracking.merge_consecutive`)."""
    root = tracking_location(options)
    if root is None:
        return None
    tracking = SchemaTracking(SchemaLog(root, table_id, location), options)
    tracking.merge_consecutive(DeltaLog(location))
    return tracking


def _zone(name: str) -> _dt.tzinfo:
    from zoneinfo import ZoneInfo
    return _dt.timezone.utc if name.upper() in ("UTC", "Z") else ZoneInfo(name)


def _change_rows(part: DeltaFile, schema: T.StructType, change_type: str | None, version: int,
                 timestamp: int):
    """The rows of one change file with ``_change_type`` (the file's own column for a cdc
    file), ``_commit_version`` and ``_commit_timestamp``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    types = None
    if change_type is None:
        from sqlext.log.storage import is_local
        source = part.path if is_local(part.path) else pa.BufferReader(
            DeltaLog(part.location).store.read(part.path))
        types = pq.read_table(source, columns=["_change_type"]).column(0).combine_chunks()
    selected = _selected_rows(part)
    offset = 0
    for batch in read_delta_file(part, schema):
        rows = batch.num_rows
        kind = types.slice(offset, rows).cast(pa.string()) if types is not None else None
        if selected is not None:    # read without a deletion vector: every row, in order
            batch = batch.filter(pa.array(np.isin(np.arange(offset, offset + rows), selected)))
        offset += rows
        n = batch.num_rows
        if not n:
            continue
        if kind is None:
            kind = pa.array([change_type] * n, pa.string())
        columns = batch.columns[:-3]
        fields = batch.schema
        columns = list(columns) + [
            kind, pa.array([version] * n, fields.field(len(fields) - 2).type),
            pa.array([timestamp * 1000] * n, pa.int64()).cast(fields.field(len(fields) - 1).type)]
        yield pa.RecordBatch.from_arrays(columns, schema=fields)


def _selected_rows(part: DeltaFile):
    """The row indexes of a change file with a selection ``(A, B)`` (its rows deletion vector A
    deletes and B does not), ascending; None for a file without one."""
    selection = getattr(part, "selection", None)
    if not selection:
        return None
    from sqlext.log.deletion_vectors import DeletionVectorReader
    load = DeletionVectorReader.of(DeltaLog(part.location)).load
    return load(selection[0]).difference(load(selection[1])).row_index_array()


def _fmt_ms(ms: int, time_zone: str = "UTC") -> str:
    moment = _dt.datetime.fromtimestamp(ms / 1000, _zone(time_zone))
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


def _key(offset: dict) -> tuple[int, int]:
    return offset["reservoirVersion"], offset["index"]


def _starting_version(value):
    if value is None:
        return None
    if str(value).strip().lower() == "latest":
        return "latest"
    try:
        version = int(str(value).strip())
    except ValueError:
        version = -1
    if version < 0:
        raise _illegal_option(value, "startingVersion", "must be greater than or equal to zero")
    return version


def _illegal_option(value, name: str, explain: str) -> IllegalArgumentError:
    """delta-spark's ``DELTA_ILLEGAL_OPTION`` for a read option's value."""
    return IllegalArgumentError(f"[DELTA_ILLEGAL_OPTION] Invalid value '{value}' for option "
                                f"'{name}', {explain}", error_class="DELTA_ILLEGAL_OPTION")
