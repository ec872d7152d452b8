"""One concurrent writer for ``test_concurrency``: its own light local SparkSession appending
``count`` commits of one row each (``worker``, ``i``) to the table at ``path``.

    python append_worker.py <path> <worker> <count> <warehouse>
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import sqlext  # noqa: E402


def main(path: str, worker: int, count: int, warehouse: str) -> None:
    spark = sqlext.session(**{"master": "local[1]", "spark.driver.memory": "512m",
                              "spark.sql.shuffle.partitions": "1", "spark.ui.enabled": "false",
                              "spark.sql.warehouse.dir": warehouse,
                              "spark.sql.session.timeZone": "UTC"})
    try:
        for i in range(count):
            df = spark.createDataFrame([(worker, i)], "worker int, i int")
            version = sqlext.write(df, path)
            print(f"{worker} {i} {version}", flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
