"""A table with enough commits to checkpoint twice: every version read identically by sqlext,
deltalake and DuckDB; checkpoints readable on their own; time travel by version and timestamp."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil

import pytest

import sqlext
from sqlext.errors import TimestampOutOfRangeError, VersionNotFoundException
from tests.support.table_checks import arrow, assert_readers_agree, read_sqlext
from tests.support import assert_same_rows

UTC = dt.timezone.utc
COLS = ["id", "p", "extra"]
N_COMMITS = 23          # versions 0..22: checkpoints at 10 and 20, commits after the last one


@pytest.fixture(scope="module")
def history(spark, tmp_path_factory):
    """(path, {version: expected rows}) for a table built by N_COMMITS writes of several kinds."""
    path = tmp_path_factory.mktemp("versions") / "table"
    rows: list[tuple] = []
    expected = {}

    def write(new, **kw):
        df = spark.createDataFrame([r[:2] for r in new], "id int, p string") if not kw.get(
            "mergeSchema") else spark.createDataFrame(new, "id int, p string, extra string")
        return sqlext.write(df, str(path), **kw)

    for v in range(N_COMMITS):
        if v == 0:
            new = [(0, "a", None), (1, "b", None)]
            write(new, partitionBy=["p"])
            rows = list(new)
        elif v == 6:                                   # replace partition a
            new = [(60, "a", None)]
            write(new, mode="overwrite", replaceWhere="p = 'a'")
            rows = [r for r in rows if r[1] != "a"] + new
        elif v == 9:                                   # schema evolution
            new = [(90, "c", "x")]
            write(new, mergeSchema=True)
            rows += new
        elif v == 14:                                  # dynamic overwrite of partition b
            new = [(140, "b", None)]
            write(new, mode="overwrite", partitionOverwriteMode="dynamic")
            rows = [r for r in rows if r[1] != "b"] + new
        elif v == 17:                                  # data-column replaceWhere
            new = [(17, "c", "y")]
            write(new, mode="overwrite", replaceWhere="id >= 10 AND id < 20", mergeSchema=True)
            rows = [r for r in rows if not 10 <= r[0] < 20] + new
        else:
            new = [(v, "abc"[v % 3], None)]
            write(new)
            rows += new
        expected[v] = list(rows)
    return path, expected


def _mtime_ms(path, version: int) -> int:
    return os.stat(path / "_delta_log" / f"{version:020d}.json").st_mtime_ns // 1_000_000


def _cols(version: int) -> list[str]:
    return COLS if version >= 9 else COLS[:2]


def _expected(history_, version: int):
    _, expected = history_
    return arrow(_cols(version), [r[:len(_cols(version))] for r in expected[version]])


def test_checkpoints_at_10_and_20(history):
    path, _ = history
    log = path / "_delta_log"
    assert (log / f"{10:020d}.checkpoint.parquet").is_file()
    assert (log / f"{20:020d}.checkpoint.parquet").is_file()
    assert not list(log.glob(f"{21:020d}.checkpoint*"))
    assert json.loads((log / "_last_checkpoint").read_text())["version"] == 20


def test_every_version_reads_identically(spark, history):
    path, expected = history
    for version in sorted(expected):
        assert_readers_agree(spark, path, _expected(history, version), version=version)


def test_a_log_starting_at_the_checkpoint_reads_the_same(spark, history, tmp_path):
    """Readers that cannot fall back to JSON commits 0..20 must get the same rows from the
    checkpoint sqlext wrote."""
    path, _ = history
    copy = tmp_path / "from-checkpoint"
    shutil.copytree(path, copy)
    for v in range(21):
        (copy / "_delta_log" / f"{v:020d}.json").unlink()
    for version in (20, N_COMMITS - 1):
        assert_readers_agree(spark, copy, _expected(history, version), version=version)


def test_time_travel_by_timestamp(spark, history):
    path, _ = history
    for version in (0, 9, 10, 15, N_COMMITS - 1):
        ms = _mtime_ms(path, version)
        when = dt.datetime.fromtimestamp(ms / 1000, UTC)
        text = when.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        for value in (when, text, when.replace(tzinfo=None)):
            got = sqlext.read(spark, str(path), timestampAsOf=value)
            assert_same_rows(got, _expected(history, version))
        # a time between two commits reads the earlier one
        if version + 1 < N_COMMITS:
            between = dt.datetime.fromtimestamp((ms + _mtime_ms(path, version + 1)) / 2000, UTC)
            assert_same_rows(read_timestamp(spark, path, between), _expected(history, version))


def read_timestamp(spark, path, when):
    return sqlext.read(spark, str(path), timestampAsOf=when).toArrow()


def test_time_travel_errors(spark, history):
    path, _ = history
    first = dt.datetime.fromtimestamp(_mtime_ms(path, 0) / 1000, UTC)
    last = dt.datetime.fromtimestamp(_mtime_ms(path, N_COMMITS - 1) / 1000, UTC)
    with pytest.raises(TimestampOutOfRangeError, match="before the earliest"):
        sqlext.read(spark, str(path), timestampAsOf=first - dt.timedelta(seconds=1))
    with pytest.raises(TimestampOutOfRangeError, match="after the latest"):
        sqlext.read(spark, str(path), timestampAsOf=(last + dt.timedelta(days=1)).isoformat())
    with pytest.raises(VersionNotFoundException):
        sqlext.read(spark, str(path), versionAsOf=N_COMMITS + 5)
    with pytest.raises(VersionNotFoundException):
        sqlext.read(spark, str(path), versionAsOf=-1)
    assert read_sqlext(spark, path).num_rows == len(history[1][N_COMMITS - 1])
