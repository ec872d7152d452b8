"""Issue 12, case 5, through dbt: a table model whose location holds someone else's plain
parquet files is refused with the CONVERT TO DELTA hint, and the files are left as they were."""

import os

import pytest
from dbt.tests.util import run_dbt_and_capture


@pytest.fixture(scope="class")
def location_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("dbt_adopt")
    return str(root)


class TestTableOverPlainParquetIsRefused:
    @pytest.fixture(scope="class")
    def models(self, location_root):
        return {"adopted.sql": "{{ config(materialized='table', location_root='"
                               + location_root + "') }} select 1 as id"}

    def test_refused_and_the_files_kept(self, project, spark, location_root):
        target = os.path.join(location_root, "adopted")
        spark.range(5).write.parquet(target)
        before = sorted(os.listdir(target))
        results, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert results[0].status == "error"
        assert "CONVERT TO DELTA" in output and "adopted" in output
        assert sorted(os.listdir(target)) == before
        assert not os.path.exists(os.path.join(target, "_delta_log"))
        assert spark.read.parquet(target).count() == 5
