"""Protocol changes a user asks for: ``DeltaTable.upgradeTableProtocol(r, w)``,
``DeltaTable.addFeatureSupport(name)`` and the table properties ``delta.minReaderVersion``,
``delta.minWriterVersion`` and ``delta.feature.<name> = 'supported'``.

As delta-spark 4.x does it: a protocol stands for the set of features it supports (a legacy
protocol's implied by its versions, a table-features protocol's listed); a request adds
features, never removes any (asking for lower versions changes nothing), and the result is
written in its normal form: the lowest legacy protocol whose implied features are exactly the
set, else reader 1 / 2 / 3 with writer 7 listing them. So ``upgradeTableProtocol(1, 7)`` on a
1/2 table changes nothing, and ``addFeatureSupport('changeDataFeed')`` on it gives 1/7 listing
``appendOnly``, ``invariants`` and ``changeDataFeed`` (1/4 would add ``generatedColumns`` too).
The protocol properties are never kept in the table's configuration.
"""

from __future__ import annotations

from sqlext.errors import InvalidProtocolChangeError, UnsupportedTableFeatureError
from sqlext.log.actions import Protocol
from sqlext.log.protocol import MAX_READER_VERSION, MAX_WRITER_VERSION, SUPPORTED_WRITER_FEATURES

# Every table feature delta-spark 4.4 knows, by the protocol versions it needs.
# Reader-writer features of table-features protocols (reader 3 lists them):
NATIVE_READER_WRITER_FEATURES = {"deletionVectors", "timestampNtz", "v2Checkpoint",
                                 "typeWidening", "typeWidening-preview", "variantType",
                                 "variantType-preview", "vacuumProtocolCheck",
                                 "variantShredding-preview", "catalogManaged"}
# Features older than table features: (reader, writer) versions that first imply them.
LEGACY_FEATURE_VERSIONS = {"appendOnly": (1, 2), "invariants": (1, 2),
                           "checkConstraints": (1, 3), "changeDataFeed": (1, 4),
                           "generatedColumns": (1, 4), "columnMapping": (2, 5),
                           "identityColumns": (1, 6)}
WRITER_ONLY_FEATURES = {"domainMetadata", "inCommitTimestamp", "rowTracking", "clustering",
                        "icebergCompatV1", "icebergCompatV2", "allowColumnDefaults",
                        "checkpointProtection", "icebergWriterCompatV1",
                        "collations-preview"}
KNOWN_FEATURES = (NATIVE_READER_WRITER_FEATURES | set(LEGACY_FEATURE_VERSIONS)
                  | WRITER_ONLY_FEATURES)

READER_VERSION_KEY = "delta.minReaderVersion"
WRITER_VERSION_KEY = "delta.minWriterVersion"
FEATURE_KEY_PREFIX = "delta.feature."
# Features sqlext can have on a table it writes: those it honours (generated and identity
# columns included, sqlext.engine.generated).
WRITABLE_FEATURES = SUPPORTED_WRITER_FEATURES


def implied_features(protocol: Protocol) -> set[str]:
    """The features ``protocol`` supports: a legacy protocol's implied ones (``columnMapping``
    only with reader 2 and writer 5 or more), a table-features protocol's listed ones."""
    if protocol.min_writer_version >= 7:
        features = set(protocol.reader_features or []) | set(protocol.writer_features or [])
        if protocol.min_reader_version == 2:
            features.add("columnMapping")
        return features
    return {f for f, (r, w) in LEGACY_FEATURE_VERSIONS.items()
            if r <= protocol.min_reader_version and w <= protocol.min_writer_version}


def normalized(features: set[str]) -> Protocol:
    """The normal form of the protocol supporting exactly ``features`` (see the module
    docstring)."""
    for writer in range(1, 7):
        for reader in (1, 2):
            legacy = Protocol(reader, writer)
            if implied_features(legacy) == features:
                return legacy
    readers = features & NATIVE_READER_WRITER_FEATURES
    if readers:
        if "columnMapping" in features:
            readers.add("columnMapping")
        return Protocol(3, 7, sorted(readers), sorted(features))
    return Protocol(2 if "columnMapping" in features else 1, 7, None, sorted(features))


def requested_by_versions(table: str, version: int, reader: int, writer: int) -> set[str]:
    """The features a request for protocol ``reader``/``writer`` adds (a table-features
    protocol adds none by itself); raise :class:`InvalidProtocolChangeError` for versions Delta
    does not define."""
    if not (1 <= reader <= MAX_READER_VERSION and 1 <= writer <= MAX_WRITER_VERSION):
        raise InvalidProtocolChangeError(
            f"table {table} (version {version}): protocol {reader}/{writer} does not exist "
            f"(reader versions 1-{MAX_READER_VERSION}, writer versions 1-{MAX_WRITER_VERSION}); "
            "the table is unchanged")
    if reader == 3 and writer < 7:
        raise InvalidProtocolChangeError(
            f"table {table} (version {version}): reader version 3 needs writer version 7 "
            f"(table features), not {writer}; ask for upgradeTableProtocol(3, 7); the table is "
            "unchanged")
    if writer >= 7:
        return set()
    return implied_features(Protocol(min(reader, 2), writer))


def check_feature_names(table: str, version: int, names: set[str]) -> None:
    """Refuse unknown feature names, and features sqlext cannot honour when writing (adding
    one would make the table unwritable here)."""
    unknown = sorted(names - KNOWN_FEATURES)
    if unknown:
        raise InvalidProtocolChangeError(
            f"table {table} (version {version}): unknown table feature(s) {unknown}; known "
            f"features: {', '.join(sorted(KNOWN_FEATURES))}; the table is unchanged")
    unwritable = sorted(names - WRITABLE_FEATURES)
    if unwritable:
        raise UnsupportedTableFeatureError(
            f"cannot add the table feature(s) {', '.join(unwritable)} to table {table} "
            f"(version {version}): sqlext cannot honour them when writing, so the table would "
            "become one sqlext cannot write; add them with delta-spark if other writers need "
            "them. The table is unchanged")


# features that need others (delta-spark adds them together)
REQUIRED_FEATURES = {"rowTracking": {"domainMetadata"}, "clustering": {"domainMetadata"}}


def merged(current: Protocol, features: set[str]) -> Protocol | None:
    """``current`` supporting ``features`` too (and the features they need), in normal form;
    None when it supports them already (the table keeps its protocol as written)."""
    features = features.union(*(REQUIRED_FEATURES.get(f, set()) for f in features))
    base = implied_features(current)
    if features <= base:
        return None
    return normalized(base | features)


def split_protocol_properties(table: str, version: int, configuration: dict[str, str],
                              current: Protocol) -> tuple[dict[str, str], set[str]]:
    """``configuration`` without the protocol properties, and the features those properties
    ask for (a version property left out counts as the ``current`` protocol's)."""
    keys = [k for k in configuration
            if k in (READER_VERSION_KEY, WRITER_VERSION_KEY) or k.startswith(FEATURE_KEY_PREFIX)]
    if not keys:
        return configuration, set()
    rest = {k: v for k, v in configuration.items() if k not in keys}
    features: set[str] = set()
    if READER_VERSION_KEY in keys or WRITER_VERSION_KEY in keys:
        reader = _version(table, version, configuration, READER_VERSION_KEY,
                          current.min_reader_version)
        writer = _version(table, version, configuration, WRITER_VERSION_KEY,
                          current.min_writer_version)
        features |= requested_by_versions(table, version, reader, writer)
    for key in keys:
        if not key.startswith(FEATURE_KEY_PREFIX):
            continue
        value = str(configuration[key]).strip().lower()
        if value not in ("supported", "enabled"):
            raise InvalidProtocolChangeError(
                f"table {table} (version {version}): {key} = '{configuration[key]}' is not "
                "allowed; the only values are 'supported' (or 'enabled'); a feature cannot be "
                "removed this way. The table is unchanged")
        features.add(key[len(FEATURE_KEY_PREFIX):])
    return rest, features


def _version(table: str, version: int, configuration: dict[str, str], key: str,
             default: int) -> int:
    raw = configuration.get(key, default)
    try:
        return int(str(raw).strip())
    except ValueError:
        raise InvalidProtocolChangeError(
            f"table {table} (version {version}): {key} = '{raw}' is not a protocol version "
            "(an integer); the table is unchanged") from None

