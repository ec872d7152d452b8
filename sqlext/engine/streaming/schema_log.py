"""The schema tracking log of a Delta stream (``schemaTrackingLocation``), as delta-spark 4.4's
``DeltaSourceMetadataTrackingLog``: with it a stream goes on over non-additive schema changes
(a column renamed or dropped on a column-mapped table) that otherwise stop it for good.

The log lives in ``<schemaTrackingLocation>/_schema_log_<table id>``; entry ``N`` is the text
``v1`` and a line of JSON (delta-spark's ``PersistedMetadata``: ``tableId``,
``deltaCommitVersion``, ``dataSchemaJson``, ``partitionSchemaJson``, ``sourceMetadataPath``,
``tableConfigurations``, ``protocolJson``). The latest entry is the schema the stream reads.

What the stream does with it (:class:`SchemaTracking`, used by :mod:`.source`):

- the first batch writes entry 0, the metadata at the version the stream starts from;
- a commit changing the schema, the partition columns, a ``delta.*`` table setting or the
  protocol ends the batch before it (offset index :data:`METADATA_CHANGE_INDEX`, then
  :data:`POST_METADATA_CHANGE_INDEX`); once that batch is done the new metadata is written to
  the log and the stream stops with ``DELTA_STREAMING_METADATA_EVOLUTION``;
- restarted, the stream first merges the commits right after the latest entry that change only
  metadata or protocol (no data) into one entry replacing it (``previousMetadataSeqNum``: the
  entry before), so consecutive schema changes stop the stream once, as delta-spark's
  ``mergeConsecutiveSchemaChanges``; it reads the new schema, but a rename, drop or widened
  type between the last two entries stops it with
  ``DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION`` until the user allows
  it: reader option ``allowSourceColumnRename`` / ``allowSourceColumnDrop`` /
  ``allowSourceColumnTypeChange`` (``always`` or the change's version), or Spark setting
  ``spark.databricks.delta.streaming.allowSourceColumnRename`` / ``...Drop`` /
  ``...RenameAndDrop`` / ``...TypeChange`` (``always``), or the same with ``.ckpt_<hash>``
  (``always`` or the version) for this stream only.

``<hash>`` is delta-spark's: the Java ``hashCode`` of ``<checkpoint>/sources/0``
(:func:`source_metadata_path`; delta-spark's ``sources/<N>`` differs for a query's second
Delta source), also written as the entries' ``sourceMetadataPath``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sqlext.engine.streaming.schema_changes import column_paths, widened_types
from sqlext.errors import SqlextError, UnsupportedOperationError
from sqlext.log.actions import AddCDCFile, AddFile, Metadata, Protocol, RemoveFile
from sqlext.log.storage import normalize_location, qualified_path, store_for
from sqlext.engine.io.python_source import logical_schema

#: delta-spark's ``DeltaSourceOffset.METADATA_CHANGE_INDEX`` / ``POST_METADATA_CHANGE_INDEX``
METADATA_CHANGE_INDEX = -20
POST_METADATA_CHANGE_INDEX = -19
LOCATION_OPTIONS = ("schematrackinglocation", "schemalocation")
#: the hidden reader option carrying the session's ``allowSourceColumn*`` settings (JSON)
SETTINGS_OPTION = "sqlext.allowSourceColumnSettings"
CONF_PREFIX = "spark.databricks.delta.streaming."
RENAME, DROP, RENAME_AND_DROP = ("allowSourceColumnRename", "allowSourceColumnDrop",
                                 "allowSourceColumnRenameAndDrop")
TYPE_CHANGE = "allowSourceColumnTypeChange"
ALLOW_OUTSIDE = CONF_PREFIX + "allowSchemaLocationOutsideCheckpointLocation"
#: Spark's file at the root of a query's checkpoint (the query's id)
CHECKPOINT_FILE = "metadata"


def tracking_location(options: dict) -> str | None:
    """The ``schemaTrackingLocation`` (or ``schemaLocation``) of lower-cased reader options."""
    for key in LOCATION_OPTIONS:
        if options.get(key):
            return normalize_location(str(options[key]))
    return None


def checkpoint_hash(path: str) -> int:
    """Java's ``String.hashCode`` of the source's metadata path (:func:`source_metadata_path`):
    the ``ckpt_<hash>`` of settings, as delta-spark's ``getCheckpointHash``."""
    h = 0
    for unit in path.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def source_metadata_path(root: str) -> str:
    """delta-spark's metadata path of the stream's source, ``<checkpoint>/sources/0`` qualified
    (``file:/...``): Spark gives a Python source no checkpoint, so the checkpoint is the nearest
    folder at or above the tracking location ``root`` holding Spark's checkpoint file
    ``metadata`` (the location is under the checkpoint: :mod:`sqlext.drop_in.streaming` checks
    it at ``start()``), and the source is taken as the query's first. Without such a folder (a
    location allowed outside the checkpoint), the tracking location."""
    store = store_for(root)
    path = root
    while True:
        if store.exists(store.join(path, CHECKPOINT_FILE)):
            return qualified_path(path).rstrip("/") + "/sources/0"
        parent = path.rstrip("/").rpartition("/")[0]
        if not parent or parent == path or parent.endswith(":/") or parent.endswith(":"):
            return qualified_path(root)
        path = parent


def check_under_checkpoint(location: str, checkpoint: str, table: str) -> None:
    """delta-spark's refusal, when a query starts, of a tracking location whose schema log
    (``<location>/_schema_log_...``) is not under the query's checkpoint, unless
    ``spark.databricks.delta.streaming.allowSchemaLocationOutsideCheckpointLocation`` is on
    (the caller reads it)."""
    root = normalize_location(location)
    base = qualified_path(normalize_location(checkpoint)).rstrip("/")
    if (qualified_path(root) + "/").startswith(base + "/"):
        return
    log = f"{root}/_schema_log_{table.replace(':', '').replace('/', '_')}"
    raise SqlextError(
        f"[DELTA_STREAMING_SCHEMA_LOCATION_NOT_UNDER_CHECKPOINT] Schema location '{log}' must be "
        f"placed under checkpoint location '{base}'. (table {table}: give a "
        f"schemaTrackingLocation under the checkpoint, or SET {ALLOW_OUTSIDE} = true)",
        error_class="DELTA_STREAMING_SCHEMA_LOCATION_NOT_UNDER_CHECKPOINT", sqlstate="22000",
        table=table)


def session_settings(all_conf, options: dict) -> dict:
    """The hidden reader option carrying the session's ``allowSourceColumn*`` settings (those
    with a ``.ckpt_<hash>`` too: the checkpoint is known only when the query runs) that apply to
    a stream with ``options`` (``all_conf()`` gives the session's settings); empty without a
    tracking location. The source reads them in Spark's Python workers, where the session is
    out of reach."""
    if tracking_location({str(k).lower(): v for k, v in options.items()}) is None:
        return {}
    names = tuple(CONF_PREFIX + n for n in (RENAME, DROP, RENAME_AND_DROP, TYPE_CHANGE))
    found = {k: str(v) for k, v in all_conf().items()
             if k in names or k.startswith(tuple(n + ".ckpt_" for n in names))}
    return {SETTINGS_OPTION: json.dumps(found)}


@dataclass
class Entry:
    """One entry of the log (delta-spark's ``PersistedMetadata``)."""
    table_id: str
    version: int
    schema_json: str
    partition_schema_json: str
    source_path: str
    configuration: dict
    protocol_json: str
    previous_seq: int | None = None

    @classmethod
    def of(cls, table_id: str, version: int, metadata: Metadata, protocol: Protocol,
           source_path: str) -> "Entry":
        """The entry of ``metadata`` and ``protocol`` at table version ``version``."""
        fields = {f["name"]: f for f in json.loads(metadata.schema_string)["fields"]}
        partitions = {"type": "struct",
                      "fields": [fields[c] for c in metadata.partition_columns if c in fields]}
        return cls(table_id, version, _compact(metadata.schema_string), json.dumps(
            partitions, separators=(",", ":")), source_path, dict(metadata.configuration),
            json.dumps({"protocol": protocol.to_dict()}, separators=(",", ":")))

    def to_json(self) -> str:
        out = {"tableId": self.table_id, "deltaCommitVersion": self.version,
               "dataSchemaJson": self.schema_json,
               "partitionSchemaJson": self.partition_schema_json,
               "sourceMetadataPath": self.source_path,
               "tableConfigurations": self.configuration, "protocolJson": self.protocol_json}
        if self.previous_seq is not None:
            out["previousMetadataSeqNum"] = self.previous_seq
        return json.dumps(out, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "Entry":
        d = json.loads(text)
        return cls(d["tableId"], int(d["deltaCommitVersion"]), d["dataSchemaJson"],
                   d.get("partitionSchemaJson", '{"type":"struct","fields":[]}'),
                   d.get("sourceMetadataPath", ""), d.get("tableConfigurations") or {},
                   d.get("protocolJson") or "{}", d.get("previousMetadataSeqNum"))

    def differs(self, metadata: Metadata) -> bool:
        """Whether ``metadata`` changes this entry's schema, partition columns or ``delta.*``
        settings (delta-spark's ``hasMetadataOrProtocolChangeComparedToStreamMetadata``)."""
        other = Entry.of(self.table_id, self.version, metadata, Protocol(1, 1), "")
        return (json.loads(other.schema_json) != json.loads(self.schema_json)
                or json.loads(other.partition_schema_json)
                != json.loads(self.partition_schema_json)
                or _delta_settings(other.configuration) != _delta_settings(self.configuration))

    def protocol_differs(self, protocol: Protocol) -> bool:
        """Whether ``protocol`` is not this entry's (versions and features)."""
        return _protocol_key(json.dumps({"protocol": protocol.to_dict()})) \
            != _protocol_key(self.protocol_json)

    def metadata(self, base: Metadata) -> Metadata:
        """``base`` (the table's metadata) with this entry's schema and settings."""
        from dataclasses import replace
        names = [f["name"] for f in json.loads(self.partition_schema_json)["fields"]]
        return replace(base, schema_string=self.schema_json, partition_columns=names,
                       configuration=dict(self.configuration))


class SchemaLog:
    """The entries under ``<root>/_schema_log_<table_id>`` (read and appended with sqlext's
    stores: local paths, s3, ...)."""

    def __init__(self, root: str, table_id: str, table: str):
        self.table_id, self.table = table_id, table
        self.store = store_for(root)
        self.root = root
        self.path = self.store.join(root, f"_schema_log_{table_id}")

    def entries(self) -> dict[int, Entry]:
        """{sequence number: entry}, validated against the table's id."""
        try:
            names = self.store.list_names(self.path)
        except FileNotFoundError:
            return {}
        out = {}
        for name in names:
            if name.isdigit():
                text = self.store.read(self.store.join(self.path, name)).decode()
                head, _, body = text.partition("\n")
                if head.strip() != "v1":
                    raise SqlextError(
                        f"[DELTA_STREAMING_SCHEMA_LOG_DESERIALIZE_FAILED] Cannot read entry "
                        f"{name} of the schema log at {self.path} (format {head.strip()!r}; "
                        "sqlext reads v1): use a new schemaTrackingLocation",
                        error_class="DELTA_STREAMING_SCHEMA_LOG_DESERIALIZE_FAILED",
                        table=self.table)
                out[int(name)] = Entry.from_json(body.strip())
        for entry in out.values():
            if entry.table_id != self.table_id:
                raise SqlextError(
                    f"[DELTA_STREAMING_SCHEMA_LOG_INCOMPATIBLE_DELTA_TABLE_ID] The schema log at "
                    f"{self.path} tracks table {entry.table_id}, but the stream reads table "
                    f"{self.table_id} ({self.table}): use a new schemaTrackingLocation",
                    error_class="DELTA_STREAMING_SCHEMA_LOG_INCOMPATIBLE_DELTA_TABLE_ID",
                    table=self.table)
        return out

    def append(self, entry: Entry, sequence: int) -> None:
        """Write ``entry`` as number ``sequence``; another stream writing it first is delta-
        spark's ``DELTA_STREAMING_SCHEMA_LOCATION_CONFLICT``."""
        self.store.mkdirs(self.path)
        try:
            self.store.write_if_absent(self.store.join(self.path, str(sequence)),
                                       ("v1\n" + entry.to_json()).encode())
        except FileExistsError:
            raise SqlextError(
                f"[DELTA_STREAMING_SCHEMA_LOCATION_CONFLICT] Detected conflicting schema location "
                f"'{self.root}' while streaming from table or table located at '{self.table}'. "
                "Another stream may be reusing the same schema location, which is not allowed. "
                "Please provide a new unique `schemaTrackingLocation` path or "
                "`streamingSourceTrackingId` as a reader option for one of the streams from "
                "this table.", error_class="DELTA_STREAMING_SCHEMA_LOCATION_CONFLICT",
                table=self.table) from None


class SchemaTracking:
    """A stream's use of its schema log: the schema it reads, the metadata changes that end a
    batch, the log's update once such a batch is done."""

    def __init__(self, log: SchemaLog, options: dict):
        self.log = log
        self.options = options
        self.source_path = source_metadata_path(log.root)
        entries = log.entries()
        self.sequence = max(entries) if entries else -1
        self.current = entries.get(self.sequence)
        previous_seq = self.current.previous_seq if self.current else None
        self.previous = entries.get(self.sequence - 1 if previous_seq is None else previous_seq)

    def check_unblocked(self) -> None:
        """delta-spark's refusal to go on with a rename or drop between the last two entries
        unless the user allowed it (:func:`_blocked`)."""
        if self.current is None or self.previous is None:
            return
        before = column_paths(json.loads(self.previous.schema_json))
        after = column_paths(json.loads(self.current.schema_json))
        renamed = [(p, after[i]) for i, p in before.items() if i in after and after[i] != p]
        dropped = [p for i, p in before.items() if i not in after]
        widened = widened_types(self.previous.schema_json, self.current.schema_json)
        if not renamed and not dropped and not widened:
            return
        version, ckpt = self.current.version, checkpoint_hash(self.source_path)
        settings = json.loads(str(self.options.get(SETTINGS_OPTION.lower()) or "{}"))

        def allowed(option: str, confs: tuple) -> bool:
            value = str(self.options.get(option.lower(), "")).lower()
            if value in ("always", str(version)):
                return True
            for conf in confs:
                if str(settings.get(CONF_PREFIX + conf, "")).lower() == "always" \
                        or str(settings.get(f"{CONF_PREFIX}{conf}.ckpt_{ckpt}", "")).lower() \
                        in ("always", str(version)):
                    return True
            return False

        if (renamed and not allowed(RENAME, (RENAME, RENAME_AND_DROP))) \
                or (dropped and not allowed(DROP, (DROP, RENAME_AND_DROP))) \
                or (widened and not allowed(TYPE_CHANGE, (TYPE_CHANGE,))):
            raise _cannot_continue(self, renamed, dropped, widened, ckpt)

    def initialize(self, version: int, metadata: Metadata, protocol: Protocol,
                   read: Metadata) -> None:
        """Write entry 0 (the metadata at ``version``, where the stream starts) when the log is
        empty; stop the stream when it is not the metadata the query reads (``read``)."""
        entry = Entry.of(self.log.table_id, version, metadata, protocol, self.source_path)
        self.log.append(entry, 0)
        self.sequence, self.current = 0, entry
        if Entry.of(self.log.table_id, version, read, protocol, "").differs(metadata):
            raise evolution_error(entry, self.log.table)

    def is_change(self, version: int, metadata: Metadata | None,
                  protocol: Protocol | None = None) -> bool:
        """Whether commit ``version``'s ``metadata`` or ``protocol`` (None: it has none) is a
        change the stream has not tracked yet."""
        if self.current is None or version <= self.current.version:
            return False
        return ((metadata is not None and self.current.differs(metadata))
                or (protocol is not None and self.current.protocol_differs(protocol)))

    def merge_consecutive(self, log) -> None:
        """delta-spark's merge of consecutive schema changes at a restart: when the commits
        right after the latest entry's version change only metadata or protocol, the last one's
        metadata and protocol replace that entry (a new entry whose previous is the one before
        it), so the stream stops once for all of them. ``log``: the table's
        :class:`sqlext.log.table.DeltaLog`. The first entry (where the stream started) is
        never replaced."""
        if self.current is None or self.sequence < 1:
            return
        last, version = None, self.current.version + 1
        latest = log.latest_version()
        while latest is not None and version <= latest:
            actions = log.read_commit(version)
            if any(isinstance(a, (AddFile, RemoveFile, AddCDCFile)) for a in actions) \
                    or not any(isinstance(a, (Metadata, Protocol)) for a in actions):
                break
            last, version = version, version + 1
        if last is None:
            return
        snapshot = log.snapshot(last)
        if not self.is_change(last, snapshot.metadata, snapshot.protocol):
            return
        entry = Entry.of(self.log.table_id, last, snapshot.metadata, snapshot.protocol,
                         self.source_path)
        entry.previous_seq = (self.current.previous_seq if self.current.previous_seq is not None
                              else self.sequence - 1)
        self.log.append(entry, self.sequence + 1)
        self.previous = self.log.entries()[entry.previous_seq]
        self.sequence, self.current = self.sequence + 1, entry

    def evolve(self, version: int, metadata: Metadata, protocol: Protocol) -> None:
        """Record commit ``version``'s metadata as the next entry and stop the stream."""
        entry = Entry.of(self.log.table_id, version, metadata, protocol, self.source_path)
        self.log.append(entry, self.sequence + 1)
        self.sequence, self.current = self.sequence + 1, entry
        raise evolution_error(entry, self.log.table)


def require_tracking_support(options: dict, location: str) -> None:
    """Refuse ``schemaTrackingLocation`` on pyspark 4.0/4.1: their Python sources are not told
    where a batch starts, so a batch cannot end at a schema change."""
    if tracking_location(options) is not None:
        import pyspark
        raise UnsupportedOperationError(
            f"streaming read of {location}: option schemaTrackingLocation needs pyspark 4.2 or "
            f"later (Spark {pyspark.__version__}'s Python data sources cannot end a batch at a "
            "schema change); drop the option or upgrade (pip install 'pyspark>=4.2')",
            table=location)


def evolution_error(entry: Entry, table: str) -> SqlextError:
    """delta-spark's ``DELTA_STREAMING_METADATA_EVOLUTION`` for the entry just written."""
    settings = ", ".join(f"{k}:{v}" for k, v in entry.configuration.items())
    protocol = json.loads(entry.protocol_json).get("protocol", {})
    readers, writers = protocol.get("readerFeatures"), protocol.get("writerFeatures")
    return SqlextError(
        "[DELTA_STREAMING_METADATA_EVOLUTION] The schema, table configuration or protocol of "
        "your Delta table has changed during streaming.\nThe schema or metadata tracking log "
        "has been updated.\nPlease restart the stream to continue processing using the updated "
        "metadata.\nUpdated schema: "
        f"{logical_schema(entry.schema_json).treeString()}.\n"
        f"Updated table configurations: {settings}.\n"
        f"Updated table protocol: {protocol.get('minReaderVersion')},"
        f"{protocol.get('minWriterVersion')},{_features(readers)},{_features(writers)} "
        f"(table {table}, version {entry.version})",
        error_class="DELTA_STREAMING_METADATA_EVOLUTION", sqlstate="XXKST", table=table,
        version=entry.version)


#: delta-spark 4.4's ``SchemaChangeType`` of each (renamed, dropped, widened): its name, the
#: reader options and the settings its error names (delta-spark's lists, quirks included: a
#: rename with a widening names ``allowSourceColumnDrop``, not ``...TypeChange``)
_CHANGE_TYPES = {
    (True, False, False): ("RENAME COLUMN", (RENAME,), (RENAME,)),
    (False, True, False): ("DROP COLUMN", (DROP,), (DROP,)),
    (False, False, True): ("TYPE WIDENING", (TYPE_CHANGE,), (TYPE_CHANGE,)),
    (True, True, False): ("RENAME AND DROP COLUMN", (RENAME, DROP), (RENAME_AND_DROP,)),
    (True, False, True): ("RENAME AND TYPE WIDENING", (RENAME, DROP), (RENAME, TYPE_CHANGE)),
    (False, True, True): ("DROP AND TYPE WIDENING", (DROP, TYPE_CHANGE), (DROP, TYPE_CHANGE)),
    (True, True, True): ("RENAME, DROP AND TYPE WIDENING", (DROP, TYPE_CHANGE),
                         (RENAME_AND_DROP, TYPE_CHANGE)),
}


def _cannot_continue(tracking: SchemaTracking, renamed, dropped, widened,
                     ckpt: int) -> SqlextError:
    """delta-spark's ``DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION``."""
    name, options, confs = _CHANGE_TYPES[(bool(renamed), bool(dropped), bool(widened))]
    details = ""
    if renamed:
        details += "Columns renamed:\n" + "\n".join(
            f"'{'.'.join(a)}' -> '{'.'.join(b)}'" for a, b in renamed) + "\n"
    if dropped:
        details += "Columns dropped:\n" + ", ".join(f"'{'.'.join(p)}'" for p in dropped) + "\n"
    if widened:
        details += "Columns with widened types:\n" + "\n".join(
            f"'{'.'.join(p)}': {a} -> {b}" for p, a, b in widened) + "\n"
    start, end = tracking.previous.version, tracking.current.version
    text = (f"[DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION] We've detected "
            f"one or more non-additive schema change(s) ({name}) between Delta version {start} "
            f"and {end} in the Delta streaming source.\nChanges: \n{details}\nPlease check if "
            "you want to manually propagate the schema change(s) to the sink table before we "
            f"proceed with stream processing using the finalized schema at version {end}.\nOnce "
            "you have fixed the schema of the sink table or have decided there is no need to "
            "fix, you can set the following configuration(s) to unblock the non-additive schema "
            "change(s) and continue stream processing.\n\nUsing dataframe reader option(s):\n"
            "To unblock for this particular stream just for this series of schema change(s):\n"
            + "".join(f'  .option("{o}", "{end}")\n' for o in options)
            + "To unblock for this particular stream:\n"
            + "".join(f'  .option("{o}", "always")\n' for o in options)
            + "\nUsing SQL configuration(s):\nTo unblock for this particular stream just for "
            "this series of schema change(s):\n"
            + "".join(f"  SET {CONF_PREFIX}{c}.ckpt_{ckpt} = {end};\n" for c in confs)
            + "To unblock for this particular stream:\n"
            + "".join(f'  SET {CONF_PREFIX}{c}.ckpt_{ckpt} = "always";\n' for c in confs)
            + "To unblock for all streams:\n"
            + "".join(f'  SET {CONF_PREFIX}{c} = "always";\n' for c in confs)
            + f"(table {tracking.log.table})")
    return SqlextError(text, sqlstate="XXKST", table=tracking.log.table, version=end,
                       error_class="DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_"
                                   "EVOLUTION")


def _features(features) -> str:
    return "None" if features is None else "[" + ",".join(sorted(features)) + "]"


def _protocol_key(protocol_json: str) -> tuple:
    """A protocol's JSON (``{"protocol": {...}}``) as a comparable value: features unordered."""
    p = json.loads(protocol_json).get("protocol", {})
    return (p.get("minReaderVersion"), p.get("minWriterVersion"),
            sorted(p.get("readerFeatures") or []), sorted(p.get("writerFeatures") or []))


def _delta_settings(configuration: dict) -> dict:
    return {k: v for k, v in configuration.items() if k.startswith("delta.")}


def _compact(schema_string: str) -> str:
    return json.dumps(json.loads(schema_string), separators=(",", ":"))
