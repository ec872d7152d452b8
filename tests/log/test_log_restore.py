"""RESTORE's action planning in the kernel (sqlext.log.restore, no Spark): the commit adds back
the files the old version had, removes the newer ones, and refuses what it cannot restore."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sqlext.errors import UnsupportedOperationError, VersionNotFoundException
from sqlext.log.restore import restore_table
from tests.support import read_deltalake
from tests.support.kernel_tables import append, create_table

pytestmark = pytest.mark.usefixtures("fresh_caches")     # kernel caches cleared around each test


def test_restore_adds_the_old_files_and_removes_the_new_ones(tmp_path):
    log = create_table(tmp_path / "t")
    append(log, [{"id": 1, "name": "x"}])
    v1_files = {f.path for f in log.snapshot().files}
    append(log, [{"id": 2, "name": "y"}])
    result = restore_table(log, version=1)
    assert (result.version, result.restored_version) == (3, 1)
    assert {f.path for f in log.snapshot().files} == v1_files
    assert result.metrics["numRemovedFiles"] == 1 and result.metrics["numRestoredFiles"] == 0
    assert [r["id"] for r in read_deltalake(tmp_path / "t").to_pylist()] == [1]


def test_restore_to_the_latest_or_a_future_version_is_refused(tmp_path):
    log = create_table(tmp_path / "t")
    append(log, [{"id": 1, "name": "x"}])
    with pytest.raises(UnsupportedOperationError, match="latest version already"):
        restore_table(log, version=1)
    with pytest.raises(VersionNotFoundException, match="latest version is 1"):
        restore_table(log, version=7)
    assert log.snapshot().version == 1


def test_the_kernel_plans_restore_and_change_feeds_without_pyspark():
    code = ("import sys, sqlext.log.restore, sqlext.log.changes_plan; "
            "print('pyspark' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
