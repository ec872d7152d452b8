"""Protocol checks: which reader and writer features sqlext implements, and the protocol of new
tables.

A table needing a feature sqlext does not implement is refused with an error naming the feature:
reading it anyway could return wrong rows, writing it could break rules other engines enforce.
Generated and identity columns (:mod:`sqlext.log.generated`) are written as delta-spark writes
them (``sqlext.engine.generated``). Deletion vectors (:mod:`sqlext.log.deletion_vectors`) are
read and written (DELETE, UPDATE and MERGE mark rows when ``delta.enableDeletionVectors`` is
true: ``sqlext.engine.dml.marking``). Column mapping (:mod:`sqlext.log.column_mapping`) is read in ``name``
and ``id`` modes and written in ``name`` mode (``id`` mode tables are refused for writes); setting
``delta.columnMapping.mode`` upgrades the protocol as delta-spark does. CHECK constraints
and column invariants (NOT NULL, ``delta.invariants``) are implemented: every write checks them
(``sqlext.engine.constraints``).

Also read: V2 checkpoints (:mod:`sqlext.log.checkpoint`; sqlext's own checkpoints on such tables
follow the V2 spec, so it writes them too), type widening (Spark's parquet reader reads the
narrower types of older files as the wider table type), variant columns, shredded ones too
(``variantShredding``: Spark 4's parquet reader rebuilds each variant from its ``typed_value``
columns). In-commit timestamps are read and written; domain metadata is kept. Row tracking is
written (:mod:`sqlext.log.row_tracking`: fresh row ids and commit versions, the
``delta.rowTracking`` domain). Clustering, Iceberg compatibility, variant and
variant shredding are read-only: a write is refused. Type widening is written too
(:mod:`sqlext.log.type_widening`: ``delta.enableTypeWidening`` adds the feature, ALTER COLUMN
TYPE and schema evolution widen types).
"""

from __future__ import annotations

import json

from sqlext.errors import UnsupportedTableFeatureError
from sqlext.log import table_properties as props
from sqlext.log.actions import Metadata, Protocol
from sqlext.log.column_mapping import MODES, mapping_mode
from sqlext.log.generated import schema_features
from sqlext.log import type_widening

MAX_READER_VERSION = 3
MAX_WRITER_VERSION = 7

# features whose presence changes nothing for a reader that ignores them, or that sqlext handles
SUPPORTED_READER_FEATURES = {"timestampNtz", "vacuumProtocolCheck", "deletionVectors",
                             "columnMapping", "v2Checkpoint", "typeWidening",
                             "typeWidening-preview", "variantType", "variantType-preview",
                             # shredded variant files: Spark's parquet reader rebuilds the
                             # variants (spark.sql.variant.allowReadingShredded, default true)
                             "variantShredding", "variantShredding-preview"}
SUPPORTED_WRITER_FEATURES = {"appendOnly", "changeDataFeed", "timestampNtz", "vacuumProtocolCheck",
                             "inCommitTimestamp", "invariants", "checkConstraints",
                             "domainMetadata", "v2Checkpoint", "columnMapping",
                             "deletionVectors", "generatedColumns", "identityColumns",
                             "rowTracking", "typeWidening"}

_LEGACY_WRITER_FEATURES = {
    2: {"appendOnly", "invariants"},
    3: {"appendOnly", "invariants", "checkConstraints"},
    4: {"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns"},
    5: {"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns",
        "columnMapping"},
    6: {"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns",
        "columnMapping", "identityColumns"},
}

_FEATURE_ADVICE = {
    "columnMapping (mode id)": "sqlext reads tables with column mapping in 'id' mode but "
                               "writes column mapping in 'name' mode only: write with "
                               "delta-spark, or copy the rows to a table with "
                               "delta.columnMapping.mode = 'name'",
}


def _column_mapping_active(metadata: Metadata | None) -> bool:
    return mapping_mode(metadata) != "none"


def unsupported_reader_features(protocol: Protocol, metadata: Metadata | None) -> list[str]:
    """Reader features the table needs and sqlext does not implement (empty when readable)."""
    if protocol.min_reader_version > MAX_READER_VERSION:
        return [f"readerVersion{protocol.min_reader_version}"]
    needed: list[str] = []
    if protocol.min_reader_version == 3:
        needed = [f for f in (protocol.reader_features or [])
                  if f not in SUPPORTED_READER_FEATURES]
    if _column_mapping_active(metadata) and mapping_mode(metadata) not in MODES:
        needed.append(f"columnMapping (mode {mapping_mode(metadata)})")
    return needed


def unsupported_writer_features(protocol: Protocol, metadata: Metadata | None) -> list[str]:
    """Writer features the table uses that sqlext cannot honour when writing."""
    needed = set(unsupported_reader_features(protocol, metadata))
    if protocol.min_writer_version > MAX_WRITER_VERSION:
        return [f"writerVersion{protocol.min_writer_version}"]
    if protocol.min_writer_version == 7:
        features = set(protocol.writer_features or [])
    else:
        features = _LEGACY_WRITER_FEATURES.get(protocol.min_writer_version, set())
    for feature in features - SUPPORTED_WRITER_FEATURES:
        if _feature_in_use(feature, metadata, listed=protocol.min_writer_version == 7):
            needed.add(feature)
    if mapping_mode(metadata) == "id":
        needed.add("columnMapping (mode id)")
    return sorted(needed)


def _feature_in_use(feature: str, metadata: Metadata | None, listed: bool) -> bool:
    """Legacy protocol versions enable features implicitly; they matter only when used."""
    if listed:
        return not (feature == "columnMapping" and not _column_mapping_active(metadata))
    if metadata is None:
        return listed     # a listed feature counts unless the schema shows it unused
    conf = metadata.configuration
    schema = metadata.schema_string or ""
    if feature == "checkConstraints":
        return any(k.startswith("delta.constraints.") for k in conf)
    if feature == "generatedColumns":
        return "delta.generationExpression" in schema
    if feature == "invariants":
        return "delta.invariants" in schema
    if feature == "identityColumns":
        return "delta.identity." in schema
    if feature == "columnMapping":
        return _column_mapping_active(metadata)
    return False


def check_readable(table: str, version: int, protocol: Protocol, metadata: Metadata | None) -> None:
    """Raise :class:`UnsupportedTableFeatureError` when sqlext cannot read the table correctly."""
    missing = unsupported_reader_features(protocol, metadata)
    if missing:
        raise UnsupportedTableFeatureError(_message(table, version, protocol, missing, "read"))
    if metadata is not None and type_widening.TYPE_CHANGES_KEY in (metadata.schema_string or ""):
        type_widening.check_readable(table, version, protocol, json.loads(metadata.schema_string))


def check_writable(table: str, version: int, protocol: Protocol, metadata: Metadata | None) -> None:
    """Raise :class:`UnsupportedTableFeatureError` when sqlext cannot write the table correctly."""
    missing = unsupported_writer_features(protocol, metadata)
    if missing:
        raise UnsupportedTableFeatureError(_message(table, version, protocol, missing, "write to"))


def _message(table: str, version: int, protocol: Protocol, missing: list[str], verb: str) -> str:
    advice = "; ".join(_FEATURE_ADVICE[f] for f in missing if f in _FEATURE_ADVICE)
    return (f"cannot {verb} table {table} at version {version}: it requires the Delta table "
            f"feature(s) {', '.join(missing)} (protocol reader {protocol.min_reader_version} / "
            f"writer {protocol.min_writer_version}), which sqlext does not implement"
            + (f"; {advice}" if advice else "; use an engine that supports it"))


# the legacy writer version that first offers a feature a configuration can ask for
_LEGACY_VERSION_OF = {"invariants": 2, "checkConstraints": 3, "changeDataFeed": 4,
                      "generatedColumns": 4, "columnMapping": 5, "identityColumns": 6}
# the reader version a feature needs (legacy protocols; a reader-3 protocol lists it instead)
_LEGACY_READER_VERSION_OF = {"columnMapping": 2}


def _configured_features(configuration: dict[str, str],
                         schema_string: str | None = None) -> set[str]:
    features = schema_features(schema_string) if schema_string else set()
    if props.CHANGE_DATA_FEED.of(configuration):
        features.add("changeDataFeed")
    if any(k.lower().startswith("delta.constraints.") for k in configuration):
        features.add("checkConstraints")
    if _column_mapping_active_conf(configuration):
        features.add("columnMapping")
    if props.DELETION_VECTORS.of(configuration):
        features.add("deletionVectors")
    if type_widening.enabled(configuration):
        features.add("typeWidening")
    return features


# features that need a table-features protocol (reader 3 / writer 7) and are reader features too
_READER_WRITER_FEATURES = {"deletionVectors", "typeWidening"}


def _column_mapping_active_conf(configuration: dict[str, str]) -> bool:
    return props.COLUMN_MAPPING_MODE.of(configuration) != "none"


def _reader_version(features: set[str]) -> int:
    return max([1] + [_LEGACY_READER_VERSION_OF.get(f, 1) for f in features])


def protocol_for_new_table(configuration: dict[str, str],
                           schema_string: str | None = None) -> Protocol:
    """The protocol sqlext writes for a new table: 2/5 with column mapping, 1/6 with an identity
    column, 1/4 with the change feed or a generated column, 1/3 with CHECK constraints, 1/2
    otherwise; 3/7 listing the features (and appendOnly, invariants) with deletion vectors."""
    needed = _configured_features(configuration, schema_string)
    if needed & _READER_WRITER_FEATURES:
        return _table_features_protocol(Protocol(1, 2), needed)
    return Protocol(_reader_version(needed), max([2] + [_LEGACY_VERSION_OF[f] for f in needed]))


def upgrade_for_configuration(protocol: Protocol, configuration: dict[str, str],
                              schema_string: str | None = None) -> Protocol | None:
    """The protocol needed once ``configuration`` (and ``schema_string``: generated and identity
    columns) is set, or None when the current one suffices."""
    return upgrade_for_features(protocol, _configured_features(configuration, schema_string))


def upgrade_for_features(protocol: Protocol, features: set[str]) -> Protocol | None:
    """The protocol that also supports the writer ``features`` (``invariants``,
    ``checkConstraints``, ``changeDataFeed``, ``columnMapping``), or None when ``protocol``
    supports them already.

    As delta-spark: a table-features protocol (writer 7) lists the feature (``columnMapping``
    also raises the reader version to 2, or is listed as a reader feature of a reader-3
    protocol); a legacy protocol moves up to the lowest legacy versions that have it (e.g.
    writer 2 to 3 for ``checkConstraints``, reader 2 / writer 5 for ``columnMapping``).
    ``deletionVectors`` needs reader 3 / writer 7: a protocol below that becomes a
    table-features one listing the features its versions implied."""
    if features & _READER_WRITER_FEATURES and protocol.min_reader_version < 3:
        return _table_features_protocol(protocol, features)
    reader = max(protocol.min_reader_version, _reader_version(features))
    if protocol.min_writer_version == 7:
        missing = features - set(protocol.writer_features or [])
        reader_features = protocol.reader_features
        if reader == 3:
            needs = {f for f in features
                     if f in _LEGACY_READER_VERSION_OF or f in _READER_WRITER_FEATURES}
            if needs - set(reader_features or []):
                reader_features = sorted(set(reader_features or []) | needs)
        if not missing and reader == protocol.min_reader_version \
                and reader_features == protocol.reader_features:
            return None
        return Protocol(reader, 7, reader_features,
                        sorted(set(protocol.writer_features or []) | missing))
    wanted = max([protocol.min_writer_version] + [_LEGACY_VERSION_OF[f] for f in features])
    if wanted == protocol.min_writer_version and reader == protocol.min_reader_version:
        return None
    return Protocol(reader, wanted, protocol.reader_features, protocol.writer_features)


def table_features(protocol: Protocol) -> list[str]:
    """The features a protocol supports, as delta-spark's ``detail()`` lists them: the explicit
    ones of a table-features protocol, or those a legacy (reader 1-2, writer 2-6) one implies."""
    features = set(protocol.reader_features or []) | set(protocol.writer_features or [])
    if protocol.min_writer_version < 7:
        features |= _LEGACY_WRITER_FEATURES.get(protocol.min_writer_version, set())
    if protocol.min_reader_version == 2:
        features.add("columnMapping")
    return sorted(features)


def _table_features_protocol(protocol: Protocol, features: set[str]) -> Protocol:
    """Reader 3 / writer 7 with ``features`` and every feature ``protocol`` supports."""
    supported = set(table_features(protocol)) | features
    readers = (supported & _READER_WRITER_FEATURES) | ({"columnMapping"} & supported)
    return Protocol(3, 7, sorted(readers), sorted(supported))
