"""delta-rs's test tables: sqlext reads every one at every version as delta-rs and DuckDB do.

delta-rs keeps ~50 tables written by Spark, Databricks and delta-rs in ``crates/test/tests/data``
(deletion vectors, column mapping, v2 checkpoints, variant, change data feed with deletion
vectors, in-commit timestamps, liquid clustering, domain metadata, logs starting at a
checkpoint, ...). ``scripts/delta_rs_tables.py`` (run by ``./test.sh``, and here when the cache
is missing) extracts them from PyPI's pinned ``deltalake`` sdist into ``.cache/delta-rs-tables``.

Every table found there is tested (discovered, not listed): at each version its log names, the
rows sqlext reads must equal what ``deltalake`` (delta-rs) and DuckDB's delta extension
(delta-kernel-rs) read. Where an independent reader refuses a table the refusal is documented
below (``READER_REFUSES``) and asserted, and sqlext is compared with the other reader. Where
sqlext cannot read a version, the cause must be one the other readers share: the log no longer
reaches that version (``VersionNotFoundException``), delta-rs ships the table's log without its
data files (``LOG_ONLY``: ``DeltaFileNotFoundError``, and sqlext's file list is compared with
delta-rs's instead), or a documented refusal (``SQLEXT_REFUSES``). Tables with the change data
feed are compared with ``deltalake``'s ``load_cdf``, each version and the whole range. The last
tests assert outcomes delta-rs's own Rust tests state (cited by file, under
``.cache/delta-rs-tables/rust-tests``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable as RsTable
from pyspark.sql import types as T

import sqlext
from sqlext.errors import (CorruptLogError, DeltaFileNotFoundError, UnsupportedTableFeatureError,
                           VersionNotFoundException)
from sqlext.engine.io.scan import check_shredded_variants_readable
from sqlext.log.table import DeltaLog
from tests.support import (assert_same_rows, deltalake_add_paths, deltalake_cdf, read_deltalake,
                           read_duckdb, rows)
from tests.support.change_feeds import deltalake_change_rows, feeds
from tests.support.fixtures import REPO_ROOT, restore_commit_times
from tests.support.spark import spark_conf

CACHE = REPO_ROOT / ".cache" / "delta-rs-tables"
DATA = CACHE / "data"
FETCH = REPO_ROOT / "scripts" / "delta_rs_tables.py"


def _fetch() -> str:
    """Run the fetch script (a no-op when the cache is there); its error output if it failed."""
    done = subprocess.run([sys.executable, str(FETCH)], capture_output=True, text=True)
    return "" if done.returncode == 0 else done.stderr or done.stdout


FETCH_ERROR = _fetch()


def _discover() -> list[str]:
    """Every directory under the cache holding a ``_delta_log`` (``golden/...`` is nested)."""
    if not DATA.is_dir():
        return []
    return sorted(str(p.parent.relative_to(DATA)) for p in DATA.rglob("_delta_log") if p.is_dir())


TABLES = _discover()
for _name in TABLES:   # source archives do not keep the commit files' times
    restore_commit_times(DATA / _name)

# --- documented expectations ----------------------------------------------------------------

#: Tables whose data files delta-rs does not ship (its tests read only their logs): sqlext's
#: file list at each version is compared with delta-rs's, and reading rows fails with
#: DeltaFileNotFoundError naming a file that is indeed absent, as delta-rs and DuckDB fail.
LOG_ONLY = {"checkpoints", "checkpoints_vacuumed", "checkpoint_with_partitions",
            "latest_not_checkpointed", "with_checkpoint_no_last_checkpoint",
            "table-with-domain-metadata", "spark-variant-stable-feature-checkpoint"}

#: Independent readers refusing a table (every version), with the text of their error.
READER_REFUSES = {
    # deltalake 1.6.6's Python reader lists v2Checkpoint as unsupported; DuckDB reads them
    "checkpoint-v2-table": {"deltalake": "v2Checkpoint"},
    "v2-classic-checkpoint-json": {"deltalake": "v2Checkpoint"},
    # DuckDB 1.5.5 cannot turn a variant column into Arrow; deltalake reads it (value, metadata)
    "spark-variant-checkpoint": {"duckdb": "Unsupported Arrow type VARIANT"},
    # protocol reader 5 with readerFeatures (and a made-up feature "blahabl"): invalid, every
    # reader refuses it; delta-rs's own test of it is #[ignore]d (read_delta_log_test.rs)
    "simple_table_features": {"deltalake": "Reader features must not be present",
                              "duckdb": "Reader features must not be present"},
    # delta-rs refuses variantShredding-preview (variant.rs test_datafusion_shredded_variant_fixture)
    "spark-shredded-variant-preview-delta": {"deltalake": "variantShredding-preview",
                                             "duckdb": "Unsupported Arrow type VARIANT"},
}

#: Tables no independent reader reads, compared with deltalake's read of a twin table at the same
#: version: delta-spark's test wrote spark-shredded-variant-preview-delta (variantShredding-preview)
#: with the same rows as spark-variant-checkpoint, version by version (same variant bytes; its
#: files happen to be unshredded; test_shredded_variant_files covers shredded ones).
TWINS = {"spark-shredded-variant-preview-delta": "spark-variant-checkpoint"}

#: Tables sqlext refuses to read (every version), with the error it must raise.
SQLEXT_REFUSES = {
    "simple_table_features": (UnsupportedTableFeatureError, "readerVersion5"),
}

#: Single versions every reader refuses: Delta Live Tables wrote version 0's metaData without a
#: schemaString (set at version 1, which all read: delta-rs's read_delta_table_from_dlt).
VERSION_REFUSALS = {("delta-live-table", 0): (CorruptLogError, "schemaString")}

#: Versions with at least this many rows are compared as sorted Arrow tables (the other reader's
#: cast to sqlext's types) rather than row by row in Python: COVID-19_NYT's one version (1,111,930
#: rows) took a minute row by row, a few seconds sorted; still every row and value.
LARGE_ROWS = 100_000


# --- helpers ----------------------------------------------------------------------------------

def _versions(path: Path) -> range:
    """0 .. the newest version the log's file names show (commits and checkpoints)."""
    names = [p.name for p in (path / "_delta_log").iterdir() if re.match(r"^\d{20}\.", p.name)]
    return range(max(int(n[:20]) for n in names) + 1)


def _outcome(read):
    try:
        return read()
    except Exception as exc:  # noqa: BLE001 - every reader's failure is examined by the caller
        return exc


def _deltalake_opens(path: Path, version: int) -> bool:
    try:
        RsTable(str(path), version=version)
    except Exception:  # noqa: BLE001
        return False
    return True


def _has_variant(schema: T.StructType) -> bool:
    """Whether a variant is anywhere in ``schema`` (nested in arrays, maps and structs too)."""
    return re.search(r'"(type|elementType|keyType|valueType)":"variant"', schema.json()) is not None


def _plain(value, dtype):
    """A Spark value (Row, VariantVal, dict) or a deltalake one (dict, list of map pairs, a
    variant as {value, metadata}) as hashable tuples, guided by the Spark type: variants compare
    by their bytes, maps as sorted pairs."""
    if value is None:
        return None
    if isinstance(dtype, T.VariantType):
        if isinstance(value, dict):
            return ("variant", bytes(value["value"]), bytes(value["metadata"]))
        return ("variant", bytes(value.value), bytes(value.metadata))
    if isinstance(dtype, T.StructType):
        return tuple((f.name, _plain(value[f.name], f.dataType)) for f in dtype.fields)
    if isinstance(dtype, T.ArrayType):
        return tuple(_plain(v, dtype.elementType) for v in value)
    if isinstance(dtype, T.MapType):
        pairs = value.items() if isinstance(value, dict) else value
        return tuple(sorted(((k, _plain(v, dtype.valueType)) for k, v in pairs), key=repr))
    return value


def _assert_same_variant_rows(schema: T.StructType, collected: list, theirs: pa.Table) -> None:
    """sqlext's collected rows equal deltalake's, variants compared byte for byte."""
    ours = Counter(_plain(r, schema) for r in collected)
    expected = Counter(_plain(r, schema) for r in theirs.select(schema.names).to_pylist())
    assert ours == expected, f"only sqlext: {list((ours - expected))[:3]}; only deltalake: {list((expected - ours))[:3]}"


def _assert_same(ours: pa.Table, theirs: pa.Table) -> None:
    if ours.num_rows < LARGE_ROWS:
        assert_same_rows(ours, theirs)
        return
    keys = [(c, "ascending") for c in ours.column_names]
    theirs = theirs.select(ours.column_names).cast(ours.schema)
    if not ours.sort_by(keys).combine_chunks().equals(theirs.sort_by(keys).combine_chunks()):
        assert_same_rows(ours, theirs)   # slow, for the message
        raise AssertionError("sorted tables differ")


def _check_version(spark, name: str, path: Path, version: int) -> str:
    """Read one version with the three readers and check they agree; a short outcome label."""
    reads = {"deltalake": _outcome(lambda: read_deltalake(path, version)),
             "duckdb": _outcome(lambda: read_duckdb(path, version))}
    df = _outcome(lambda: sqlext.read(spark, str(path), versionAsOf=version))
    variant = not isinstance(df, Exception) and _has_variant(df.schema)
    # pyspark's toArrow cannot convert arrays of variants holding nulls: collect those tables
    ours = df if isinstance(df, Exception) else _outcome(df.collect if variant else df.toArrow)
    where = f"{name} v{version}"
    refused = {**READER_REFUSES.get(name, {})}
    for reader, text in refused.items():
        assert isinstance(reads[reader], Exception), f"{where}: {reader} now reads it; update READER_REFUSES"
        assert text in str(reads[reader]), f"{where}: {reader} failed otherwise: {reads[reader]}"
    expected_refusal = SQLEXT_REFUSES.get(name) or VERSION_REFUSALS.get((name, version))
    if expected_refusal:
        cls, text = expected_refusal
        assert isinstance(ours, cls) and text in str(ours), f"{where}: expected {cls.__name__}, got {ours!r}"
        assert str(path) in str(ours) and str(version) in str(ours)
        assert all(isinstance(r, Exception) for r in reads.values()), f"{where}: {reads}"
        return "refused"
    if isinstance(ours, VersionNotFoundException):
        # the log no longer reaches this version (it starts at a later checkpoint)
        assert not _deltalake_opens(path, version), f"{where}: delta-rs rebuilds it, sqlext not: {ours}"
        assert isinstance(reads["duckdb"], Exception), f"{where}: DuckDB reads it, sqlext not: {ours}"
        return "gone"
    if isinstance(ours, DeltaFileNotFoundError):
        assert name in LOG_ONLY, f"{where}: a data file is missing: {ours}"
        snapshot = DeltaLog(str(path)).snapshot(version)
        assert {f.path for f in snapshot.files} == deltalake_add_paths(path, version)
        missing = [f for f in snapshot.files if not Path(DeltaLog(str(path)).data_path(f.path)).exists()]
        assert missing, f"{where}: every data file is there, yet: {ours}"
        assert all(isinstance(r, Exception) for r in reads.values()), f"{where}: {reads}"
        return "log only"
    if isinstance(ours, Exception):
        raise ours
    compared = []
    for reader, theirs in reads.items():
        if reader in refused:
            continue
        assert not isinstance(theirs, Exception), f"{where}: {reader} fails, sqlext reads it: {theirs}"
        if variant:
            _assert_same_variant_rows(df.schema, ours, theirs)
        else:
            _assert_same(ours, theirs)
        compared.append(reader)
    if name in TWINS:
        theirs = read_deltalake(DATA / TWINS[name], version)
        if variant:
            _assert_same_variant_rows(df.schema, ours, theirs)
        else:
            _assert_same(ours, theirs)
        compared.append(f"deltalake({TWINS[name]})")
    assert compared, f"{where}: no independent reader to compare with"
    return "=" + "+".join(compared)


# --- every table, every version -------------------------------------------------------------

def test_the_tables_are_there():
    assert not FETCH_ERROR, f"scripts/delta_rs_tables.py failed: {FETCH_ERROR}"
    assert len(TABLES) >= 50, f"{len(TABLES)} tables in {DATA}"
    assert "Apache License" in (CACHE / "LICENSE-delta-rs.txt").read_text()
    documented = (set(LOG_ONLY) | set(READER_REFUSES) | set(SQLEXT_REFUSES) | set(TWINS)
                  | set(TWINS.values()) | {n for n, _ in VERSION_REFUSALS})
    assert documented <= set(TABLES), documented - set(TABLES)


@pytest.mark.parametrize("name", TABLES)
def test_reads_like_delta_rs_and_duckdb_at_every_version(spark, name):
    path = DATA / name
    outcomes = {v: _check_version(spark, name, path, v) for v in _versions(path)}
    print(f"{name}: {outcomes}")   # shown with -s / -rP: which reader each version matched
    latest = max(outcomes)
    if name in SQLEXT_REFUSES:
        assert set(outcomes.values()) == {"refused"}
    elif name in LOG_ONLY:
        assert outcomes[latest] == "log only", outcomes
    else:   # the latest version is always readable and compared
        assert outcomes[latest].startswith("="), outcomes


# --- change data feed -------------------------------------------------------------------------

def _cdf_tables() -> list[str]:
    out = []
    for name in TABLES:
        try:
            conf = RsTable(str(DATA / name)).metadata().configuration
        except Exception:  # noqa: BLE001 - tables delta-rs cannot open are covered above
            continue
        if conf.get("delta.enableChangeDataFeed") == "true":
            out.append(name)
    return out


CDF_TABLES = _cdf_tables()


def test_the_change_feed_tables_are_found():
    assert {"cdf-table", "cdf-table-non-partitioned", "cdf-table-with-cdc-and-dvs",
            "checkpoint-cdf-table", "simple_table_with_cdc", "cdc_ict_table"} <= set(CDF_TABLES)


@pytest.mark.parametrize("name", CDF_TABLES)
def test_change_feed_like_delta_rs(spark, name):
    """Each version's changes (one Spark job for all) and the whole range with
    ``_commit_timestamp`` (in-commit timestamps on cdc_ict_table) equal deltalake's load_cdf."""
    path = DATA / name
    log = DeltaLog(str(path))
    first = min(log.listing().commits)
    latest = log.snapshot().version
    versions = range(first, latest + 1)
    ours = feeds(spark, path, {str(v): {"startingVersion": v, "endingVersion": v} for v in versions})
    for v in versions:
        assert ours[str(v)] == deltalake_change_rows(path, v, v), f"{name} version {v}"
    whole = sqlext.changes(spark, str(path), startingVersion=first).toArrow()
    assert_same_rows(whole, deltalake_cdf(path, first), sort_by=["_commit_version"])
    assert whole.num_rows > 0


# --- outcomes delta-rs's Rust tests state (.cache/delta-rs-tables/rust-tests/crates/core) ------

def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def test_cdf_with_deletion_vectors_as_delta_rs_states(spark):
    """src/operations/load_cdf.rs test_reading_cdf_with_dv: 43 change rows from version 0."""
    path = DATA / "cdf-table-with-cdc-and-dvs"
    feed = sqlext.changes(spark, str(path), startingVersion=0)
    got = Counter(rows(feed.toArrow(), ["id", "comment", "_change_type", "_commit_version", "_commit_timestamp"]))
    assert sum(got.values()) == 43
    for row in [(1, "initial", "insert", 0, "2024-12-13T06:07:53.501"),
                (1, "update1", "delete", 10, "2024-12-13T06:08:26.693"),
                (4, "insert1-delete2", "delete", 24, "2024-12-13T06:09:00.735"),
                (9, "merge1-update", "update_postimage", 18, "2024-12-13T06:08:46.555"),
                (12, "merge2-insert", "insert", 22, "2024-12-13T06:08:57.892")]:
        assert got[row[:4] + (_utc(row[4]),)] == 1, row


def test_cdf_of_a_table_whose_log_starts_at_a_checkpoint(spark):
    """src/operations/load_cdf.rs test_load_vacuumed_table: the log starts at checkpoint 3."""
    path = DATA / "checkpoint-cdf-table"
    got = Counter(rows(sqlext.changes(spark, str(path), startingVersion=3).toArrow(),
                       ["id", "name", "birthday", "_change_type", "_commit_version"]))
    day = lambda s: datetime.strptime(s, "%Y-%m-%d").date()  # noqa: E731
    expected = Counter([(7, "Dennis", day("2023-12-29"), "delete", 3)]
                       + [(i, n, day(d), "insert", 4) for i, n, d in
                          [(11, "Ossama", "2024-12-30"), (12, "Nick", "2023-12-29"),
                           (13, "Ryan", "2023-12-22"), (14, "Zach", "2023-12-25")]]
                       + [(i, n, day(d), "update_preimage", 5) for i, n, d in
                          [(11, "Ossama", "2024-12-30"), (12, "Nick", "2023-12-29"),
                           (13, "Ryan", "2023-12-22"), (14, "Zach", "2023-12-25")]]
                       + [(i, n, day(d), "update_postimage", 5) for i, n, d in
                          [(12, "Ossama", "2024-12-30"), (13, "Nick", "2023-12-29"),
                           (14, "Ryan", "2023-12-22"), (15, "Zach", "2023-12-25")]])
    assert got == expected
    with pytest.raises(VersionNotFoundException):
        sqlext.read(spark, str(path), versionAsOf=2).collect()


def test_cdf_by_in_commit_timestamp(spark):
    """src/operations/load_cdf.rs test_respect_ict: from 2026-07-11T16:36:53.881 delta-rs's feed
    holds versions 2 and 3, timed by their in-commit timestamps.

    The log is crafted: version 1's inCommitTimestamp (2023-05-12) is older than version 0's
    (2026-07-12), which the protocol forbids (they must increase). delta-rs keeps the commits
    whose own timestamp is at or after the start; sqlext resolves the start to a version, the
    first whose timestamp is at or after it (delta-spark's rule), here 0, so its feed also holds
    version 1's inserts, timed by that version's in-commit timestamp, not its commitInfo one.
    """
    path = DATA / "cdc_ict_table"
    feed = sqlext.changes(spark, str(path), startingTimestamp="2026-07-11 16:36:53.881")
    got = Counter(rows(feed.toArrow(), ["name", "age", "birthyear", "_change_type", "_commit_version",
                                        "_commit_timestamp"]))
    v1 = _utc("2023-05-12T06:50:06.883")
    v2, v3 = _utc("2026-07-12T16:36:52.175"), _utc("2026-07-12T16:36:53.881")
    delta_rs_states = Counter([("Dan", 14, 1995, "delete", 2, v2), ("Dave", 22, 1995, "delete", 2, v2),
                               ("Kate", 36, 1995, "update_preimage", 3, v3),
                               ("Kate", 37, 1995, "update_postimage", 3, v3),
                               ("Steve", 40, 1986, "update_preimage", 3, v3),
                               ("Steve", 41, 1986, "update_postimage", 3, v3)])
    version_1 = Counter([(n, a, y, "insert", 1, v1) for n, a, y in
                         [("Dan", 14, 1995), ("Dave", 22, 1995), ("Kate", 36, 1995), ("Steve", 40, 1986)]])
    assert got == delta_rs_states + version_1
    assert DeltaLog(str(path)).version_at_timestamp(1783874212175) == 2


def test_reads_as_delta_rs_tests_state(spark):
    """Counts, versions and files delta-rs's tests assert (file names in the comments)."""
    def count(name, **options):
        return sqlext.read(spark, str(DATA / name), **options).count()

    # tests/it_datafusion/integration_datafusion.rs test_datafusion_optimize_stats_partitioned_pushdown
    assert count("http_requests", filter="date > '2023-04-13'") == 1437
    # tests/it_datafusion/read_delta_log_test.rs read_delta_table_from_dlt: version 1
    assert DeltaLog(str(DATA / "delta-live-table")).snapshot().version == 1
    assert [f.name for f in sqlext.read(spark, str(DATA / "delta-live-table")).schema][:2] == [
        "sherpa_user_id", "enabled"]
    # read_delta_table_with_null_stats_in_notnull_struct: version 1
    assert DeltaLog(str(DATA / "table_with_null_stats_in_notnull_struct")).snapshot().version == 1
    # src/lib.rs read_delta_table_with_cdc: version 2, one file
    snap = DeltaLog(str(DATA / "simple_table_with_cdc")).snapshot()
    assert snap.version == 2 and [f.path for f in snap.files] == [
        "part-00000-7444aec4-710a-4a4c-8abe-3323499043e9.c000.snappy.parquet"]
    # src/protocol/mod.rs test_without_partitions: simple_table's five live files
    assert sorted(f.path for f in DeltaLog(str(DATA / "simple_table")).snapshot().files) == [
        "part-00000-2befed33-c358-4768-a43c-3eda0d2a499d-c000.snappy.parquet",
        "part-00000-c1777d7d-89d9-4790-b38a-6ee7e24456b1-c000.snappy.parquet",
        "part-00001-7891c33d-cedc-47c3-88a6-abcfb049d3b4-c000.snappy.parquet",
        "part-00004-315835fe-fb44-4562-98f6-5e6cfa3ae45d-c000.snappy.parquet",
        "part-00007-3a0e4727-de0d-41b6-81ef-5223cf40f025-c000.snappy.parquet"]
    # tests/it/time_travel.rs time_travel_by_ds_checkpoint_vacuumed: versions 5..12 remain
    log = DeltaLog(str(DATA / "checkpoints_vacuumed"))
    assert log.snapshot().version == 12 and log.snapshot(5).version == 5
    with pytest.raises(VersionNotFoundException):
        log.snapshot(4)
    # src/delta_datafusion/table_provider/next/mod.rs test_deletion_vectors_scan: one file has a
    # deletion vector, dropping its rows 2 and 79 of 100
    snap = DeltaLog(str(DATA / "table_with_deletion_logs")).snapshot()
    (with_dv,) = [f for f in snap.files if f.deletion_vector]
    assert with_dv.path.endswith("part-00000-cb251d5e-b665-437a-a9a7-fbfc5137c77d.c000.snappy.parquet")
    assert count("table_with_deletion_logs") == 98
    # src/lib.rs test_version_zero_table_load: COVID-19_NYT has one version
    assert DeltaLog(str(DATA / "COVID-19_NYT")).snapshot().version == 0
    # tests/variant.rs: version 2 (preview feature) and 1 (stable), variant columns
    snap = DeltaLog(str(DATA / "spark-variant-checkpoint")).snapshot()
    assert snap.version == 2 and "variantType-preview" in snap.protocol.reader_features
    schema = sqlext.read(spark, str(DATA / "spark-variant-checkpoint")).schema
    assert isinstance(schema["v"].dataType, T.VariantType)
    assert isinstance(schema["array_of_variants"].dataType.elementType, T.VariantType)
    assert DeltaLog(str(DATA / "spark-variant-stable-feature-checkpoint")).snapshot().version == 1


def test_issue_1374_rows_as_delta_rs_states(spark):
    """tests/it_datafusion/integration_datafusion.rs test_issue_1374 (five of the rows in a day)."""
    got = set(rows(sqlext.read(spark, str(DATA / "issue_1374"),
                               filter="timestamp BETWEEN '2023-05-24T00:00:00.000Z' AND "
                                      "'2023-05-25T00:00:00.000Z'").toArrow(),
                   ["timestamp", "temperature", "date"]))
    day = "2023-05-24"   # a string column
    for micros, temperature in [(10301, 8), (13902, 21), (13972, 58), (14025, 24), (14072, 90)]:
        at = datetime(2023, 5, 24, 0, 1, 25, micros, tzinfo=timezone.utc)
        assert (at, temperature, day) in got


def test_shredded_variant_files(spark, tmp_path):
    """A table with the variantShredding-preview feature whose files Spark wrote shredded (a
    ``typed_value`` struct beside ``value``): sqlext reads the variants Spark parsed, objects
    that fit the shredding schema, ones that do not, and scalars; writes are refused."""
    path = tmp_path / "shredded"
    query = ("SELECT id, parse_json(CASE id % 3 WHEN 0 THEN '{\"a\": 1, \"b\": \"x\"}' "
             "WHEN 1 THEN '{\"a\": \"s\", \"c\": [1, 2]}' ELSE '42' END) AS v FROM range(6)")
    with spark_conf(spark, {"spark.sql.variant.writeShredding.enabled": "true",
                            "spark.sql.variant.forceShreddingSchemaForTest": "struct<a: int, b: string>"}):
        spark.sql(query).coalesce(1).write.parquet(str(path))
    (data_file,) = path.glob("*.parquet")
    assert "typed_value" in pq.read_schema(data_file).field("v").type.names
    schema = '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},' \
             '{"name":"v","type":"variant","nullable":true,"metadata":{}}]}'
    features = ["variantType", "variantShredding-preview"]
    actions = [{"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": features,
                             "writerFeatures": features}},
               {"metaData": {"id": "shredded", "format": {"provider": "parquet", "options": {}},
                             "schemaString": schema, "partitionColumns": [],
                             "configuration": {"delta.enableVariantShredding": "true"}}},
               {"add": {"path": data_file.name, "partitionValues": {}, "size": data_file.stat().st_size,
                        "modificationTime": 0, "dataChange": True}}]
    (path / "_delta_log").mkdir()
    (path / "_delta_log" / f"{0:020d}.json").write_text("\n".join(json.dumps(a) for a in actions))
    got = {r.id: r.v.toJson() for r in sqlext.read(spark, str(path)).collect()}
    assert got == {r.id: r.v.toJson() for r in spark.sql(query).collect()}
    assert got[0] == '{"a":1,"b":"x"}' and got[1] == '{"a":"s","c":[1,2]}' and got[2] == "42"
    with pytest.raises(UnsupportedTableFeatureError, match="variantShredding-preview"):
        sqlext.write(spark.sql(query), str(path))
    # Spark 4.0 cannot read shredded files (a NullPointerException): refused there by name
    log = DeltaLog(str(path))
    with pytest.raises(UnsupportedTableFeatureError, match="pyspark 4.1"):
        check_shredded_variants_readable(log, log.snapshot(), spark_version="4.0.5")
    check_shredded_variants_readable(log, log.snapshot(), spark_version="4.1.4")
