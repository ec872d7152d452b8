"""The log layer's side of the table features current Delta writers use (no Spark): V2
checkpoints (UUID-named JSON and parquet top-level files, classic-named ones with
``checkpointMetadata``, sidecar files), log compaction and ``.crc`` files (never needed, never
trusted), domain metadata kept by sqlext's checkpoints, and which features are supported.
The same features on tables delta-spark writes:
tests/deltaspark/test_deltaspark_protocol_features.py."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sqlext.errors import CorruptLogError, UnsupportedTableFeatureError
from sqlext.log.actions import Protocol
from sqlext.log.protocol import check_readable, check_writable, unsupported_writer_features
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import append, clear_caches, create_table

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _table(tmp_path, commits: int = 12) -> tuple[DeltaLog, Path]:
    """A kernel table: commits up to ``commits`` (a classic checkpoint at 10 when there)."""
    log = create_table(tmp_path / "t")
    for i in range(commits):
        append(log, [{"id": i, "name": f"n{i}"}], part=f"p{i % 3}")
    log_dir = tmp_path / "t" / "_delta_log"
    assert (log_dir / f"{10:020d}.checkpoint.parquet").exists() == (commits >= 10)
    return log, log_dir


def _files(log: DeltaLog, version=None) -> dict:
    clear_caches()
    snap = DeltaLog(log.location).snapshot(version)
    return {p: (f.size, f.partition_values, f.stats) for p, f in snap.files_by_path.items()}


def _to_v2(log_dir: Path, version: int, fmt: str, sidecars: int = 2, classic_name=False,
           stated_version: int | None = None) -> list[str]:
    """Rewrite the classic checkpoint at ``version`` as a V2 one: a top-level file with
    checkpointMetadata, the non-file actions and ``sidecar`` actions, and the add/remove rows in
    ``sidecars`` parquet files under ``_sidecars``. Returns the sidecar names."""
    classic = log_dir / f"{version:020d}.checkpoint.parquet"
    table = pq.read_table(classic)
    files = table.filter(pa.compute.or_(table["add"].is_valid(), table["remove"].is_valid()))
    others = table.filter(pa.compute.and_(table["add"].is_null(), table["remove"].is_null()))
    (log_dir / "_sidecars").mkdir(exist_ok=True)
    names, bounds = [], [round(i * files.num_rows / sidecars) for i in range(sidecars + 1)]
    for i in range(sidecars):
        name = f"{version:020d}.checkpoint.{i + 1:010d}.{sidecars:010d}.{uuid.uuid4()}.parquet"
        pq.write_table(files.slice(bounds[i], bounds[i + 1] - bounds[i]).select(["add", "remove"]),
                       log_dir / "_sidecars" / name)
        names.append(name)
    meta = {"version": version if stated_version is None else stated_version, "tags": {}}
    sidecar_rows = [{"path": n, "sizeInBytes": (log_dir / "_sidecars" / n).stat().st_size,
                     "modificationTime": 0} for n in names]
    classic.unlink()
    top = (log_dir / f"{version:020d}.checkpoint.parquet" if classic_name
           else log_dir / f"{version:020d}.checkpoint.{uuid.uuid4()}.{fmt}")
    if fmt == "json":
        lines = [{"checkpointMetadata": meta}] + [{"sidecar": s} for s in sidecar_rows]
        for row in others.select(["protocol", "metaData"]).to_pylist():
            for key, value in row.items():
                if value is not None:
                    if key == "metaData":
                        value["configuration"] = dict(value["configuration"])
                        value["format"]["options"] = dict(value["format"]["options"] or [])
                    lines.append({key: {k: v for k, v in value.items() if v is not None}})
        top.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    else:
        n = others.num_rows
        rows = others.drop_columns(["add", "remove"])
        rows = pa.concat_tables([rows, pa.Table.from_pylist(
            [{}] * len(sidecar_rows), schema=rows.schema)])
        rows = rows.append_column("checkpointMetadata", pa.array(
            [meta] + [None] * (rows.num_rows - 1),
            pa.struct([("version", pa.int64()), ("tags", pa.map_(pa.string(), pa.string()))])))
        rows = rows.append_column("sidecar", pa.array(
            [None] * n + sidecar_rows,
            pa.struct([("path", pa.string()), ("sizeInBytes", pa.int64()),
                       ("modificationTime", pa.int64())])))
        pq.write_table(rows, top)
    return names


@pytest.mark.parametrize("fmt,classic_name", [("json", False), ("parquet", False),
                                              ("parquet", True)])
def test_v2_checkpoint_with_sidecars_rebuilds_the_table(tmp_path, fmt, classic_name):
    log, log_dir = _table(tmp_path)
    expected, expected_11 = _files(log, 10), _files(log)
    _to_v2(log_dir, 10, fmt, classic_name=classic_name)
    for v in range(10):                       # only the checkpoint can rebuild version 10 now
        (log_dir / f"{v:020d}.json").unlink()
    clear_caches()
    snap = DeltaLog(log.location).snapshot(10)
    assert snap.checkpoint_version == 10
    assert _files(log, 10) == expected and _files(log) == expected_11
    assert snap.metadata.partition_columns == ["part"]


def test_missing_sidecar_or_wrong_version_falls_back_to_the_commits(tmp_path):
    log, log_dir = _table(tmp_path)
    expected = _files(log)
    sidecars = _to_v2(log_dir, 10, "json")
    (log_dir / "_sidecars" / sidecars[1]).unlink()
    clear_caches()
    snap = DeltaLog(log.location).snapshot()
    assert snap.checkpoint_version is None and _files(log) == expected   # from the commits
    (log_dir / f"{0:020d}.json").unlink()
    clear_caches()
    with pytest.raises(CorruptLogError, match="sidecar"):
        DeltaLog(log.location).snapshot()


def test_checkpoint_metadata_naming_another_version_is_not_trusted(tmp_path):
    log, log_dir = _table(tmp_path)
    expected = _files(log)
    _to_v2(log_dir, 10, "parquet", stated_version=9)
    clear_caches()
    snap = DeltaLog(log.location).snapshot()
    assert snap.checkpoint_version is None and _files(log) == expected


def test_compaction_and_crc_files_are_never_trusted(tmp_path):
    """A log compaction file may stand in for commits but is never needed: sqlext replays the
    commits, so even a compaction file that disagrees with them (here: empty) changes nothing;
    so does a ``.crc`` that lies. Log cleanup still knows both names."""
    log, log_dir = _table(tmp_path, commits=5)
    expected = _files(log)
    (log_dir / f"{1:020d}.{4:020d}.compacted.json").write_text(
        '{"remove":{"path":"x","deletionTimestamp":0,"dataChange":true}}\n')
    (log_dir / f"{5:020d}.crc").write_text(json.dumps({"numFiles": 0, "tableSizeBytes": 0}))
    clear_caches()
    listing = DeltaLog(log.location).listing()
    assert listing.latest_version == 5 and len(listing.commits) == 6
    assert _files(log) == expected and len(expected) == 5


def test_domain_metadata_survives_a_sqlext_checkpoint(tmp_path):
    """sqlext's writes never restate domains; its checkpoints must carry them (and drop removed
    ones), or the next reader would lose them."""
    log, log_dir = _table(tmp_path, commits=3)
    commit = log_dir / f"{4:020d}.json"
    commit.write_text(
        json.dumps({"commitInfo": {"timestamp": 1, "operation": "DOMAIN"}}) + "\n"
        + json.dumps({"domainMetadata": {"domain": "app.one", "configuration": '{"k":1}',
                                         "removed": False}}) + "\n"
        + json.dumps({"domainMetadata": {"domain": "delta.rowTracking",
                                         "configuration": '{"rowIdHighWaterMark":7}',
                                         "removed": False}}) + "\n")
    (log_dir / f"{5:020d}.json").write_text(
        json.dumps({"domainMetadata": {"domain": "app.one", "configuration": "",
                                       "removed": True}}) + "\n")
    clear_caches()
    snap = DeltaLog(log.location).snapshot()
    assert set(snap.domains) == {"delta.rowTracking"}
    DeltaLog(log.location).write_checkpoint(snap)
    for v in range(6):
        (log_dir / f"{v:020d}.json").unlink()
    clear_caches()
    again = DeltaLog(log.location).snapshot()
    assert again.checkpoint_version == 5
    assert again.domains == {"delta.rowTracking": snap.domains["delta.rowTracking"]}


def test_feature_sets_are_honest():
    """Read: V2 checkpoints, type widening, variant. Write: features sqlext cannot honour are
    refused by name, generated and identity columns, row tracking and type widening are written;
    domain metadata is kept, V2 checkpoints written."""
    def proto(features):
        return Protocol(3, 7, [f for f in features if f in ("v2Checkpoint", "typeWidening",
                                                           "variantType", "deletionVectors")],
                        list(features))
    for feature in ("v2Checkpoint", "typeWidening", "variantType", "typeWidening-preview",
                    "variantType-preview", "variantShredding", "variantShredding-preview"):
        check_readable("t", 0, Protocol(3, 7, [feature], [feature]), None)
    for feature in ("variantType", "variantShredding-preview", "clustering",
                    "icebergCompatV1", "icebergCompatV2"):
        with pytest.raises(UnsupportedTableFeatureError, match=feature):
            check_writable("t", 0, proto([feature]), None)
    assert unsupported_writer_features(
        proto(["domainMetadata", "inCommitTimestamp", "v2Checkpoint", "generatedColumns",
               "identityColumns", "rowTracking", "typeWidening"]), None) == []
    # legacy writer 6 (identity and generated columns implied) is writable too
    assert unsupported_writer_features(Protocol(1, 6), None) == []
    with pytest.raises(UnsupportedTableFeatureError, match="futureFeature"):
        check_readable("t", 0, Protocol(3, 7, ["futureFeature"], ["futureFeature"]), None)


def test_checkpoints_of_a_v2_checkpoint_table_follow_the_v2_spec(tmp_path):
    """On a table with the v2Checkpoint feature sqlext's checkpoints carry checkpointMetadata
    (classic name, file actions inline) and rebuild the table alone."""
    conf = {"delta.checkpointInterval": "3"}
    log = create_table(tmp_path / "t", configuration=conf)
    txn = log.start_transaction()
    txn.update_protocol(Protocol(3, 7, ["v2Checkpoint"], ["v2Checkpoint", "appendOnly"]))
    txn.commit([], "UPGRADE PROTOCOL", {})
    for i in range(5):
        append(log, [{"id": i, "name": f"n{i}"}])
    log_dir = tmp_path / "t" / "_delta_log"
    table = pq.read_table(log_dir / f"{6:020d}.checkpoint.parquet")
    assert [m for m in table.column("checkpointMetadata").to_pylist() if m] == [
        {"version": 6, "tags": None}]
    expected = _files(log)
    for v in range(6):
        (log_dir / f"{v:020d}.json").unlink()
    clear_caches()
    assert DeltaLog(log.location).snapshot().checkpoint_version == 6
    assert _files(log) == expected and len(expected) == 5
