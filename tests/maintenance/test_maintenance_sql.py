"""VACUUM, RESTORE and OPTIMIZE through ``sqlext.sql`` reach the same engine as ``DeltaTable``."""

from __future__ import annotations

import uuid
from pathlib import Path

import sqlext
from sqlext.catalog import Catalog
from tests.support.table_checks import commit_info
from tests.support.spark import NO_RETENTION_CHECK, spark_conf
from tests.support import read_deltalake


def test_maintenance_statements(spark):
    name = f"maint_{uuid.uuid4().hex[:8]}"
    sqlext.sql(spark, f"CREATE TABLE {name} (id BIGINT, x BIGINT, p STRING) USING delta "
                      "PARTITIONED BY (p)")
    for i in range(3):                                                    # versions 1..3
        sqlext.sql(spark, f"INSERT INTO {name} SELECT id, id * 7 % 10, cast(id % 2 AS STRING) "
                          f"FROM range({i * 10}, {(i + 1) * 10})")
    path = Path(Catalog(spark).resolve(name).location)
    sqlext.sql(spark, f"DELETE FROM {name} WHERE id < 5")                 # version 4

    # OPTIMIZE one partition, z-ordered
    row = sqlext.sql(spark, f"OPTIMIZE {name} WHERE p = '1' ZORDER BY (x)").collect()[0]
    assert row.metrics.zOrderBy == ["x"] and row.metrics.numFilesRemoved >= 3
    info = commit_info(path, 5)
    assert info["operation"] == "OPTIMIZE" and info["operationParameters"]["zOrderBy"] == '["x"]'
    assert "p" in info["operationParameters"]["predicate"]

    # RESTORE to before the DELETE
    restored = sqlext.sql(spark, f"RESTORE TABLE {name} TO VERSION AS OF 3").collect()[0]
    assert restored.num_restored_files >= 1
    assert sorted(r["id"] for r in read_deltalake(path).to_pylist()) == list(range(30))

    # VACUUM: the default retention refuses less, a dry run lists (as delta-spark: qualified
    # paths), then LITE and FULL delete and answer the table's path
    assert sqlext.sql(spark, f"VACUUM {name} DRY RUN").count() == 0

    def dry_run() -> set[Path]:
        rows = sqlext.sql(spark, f"VACUUM {name} RETAIN 0 HOURS DRY RUN").collect()
        assert all(r.path.startswith(f"file:{path}/") for r in rows)
        return {Path(r.path.removeprefix("file:")) for r in rows}

    with spark_conf(spark, NO_RETENTION_CHECK):
        listed = dry_run()
        assert listed and all(p.exists() for p in listed)
        lite = sqlext.sql(spark, f"VACUUM {name} LITE RETAIN 0 HOURS").collect()
        assert [r.path for r in lite] == [f"file:{path}"]
        assert dry_run() < listed                               # LITE deleted some
        full = sqlext.sql(spark, f"VACUUM {name} RETAIN 0 HOURS").collect()
        assert [r.path for r in full] == [f"file:{path}"]
    assert not any(p.exists() for p in listed)
    ops = [r.operation for r in sqlext.sql(spark, f"DESCRIBE HISTORY {name} LIMIT 4").collect()]
    assert ops == ["VACUUM END", "VACUUM START", "VACUUM END", "VACUUM START"]
    assert sorted(r.id for r in sqlext.sql(spark, f"SELECT id FROM {name}").collect()) == \
        list(range(30))
