"""A generated dbt project of N small incremental models, for ``bench/dbt_project.py --models N``.

One seed ``events`` (``id``, ``grp``, ``value``, ``updated_at``; 100 rows per model) feeds N
models ``m_00`` ... ``m_<N-1>``, model k holding the rows of group k. Between the two builds
:func:`change_seed` updates a tenth of each group's rows and adds a tenth more, so every model's
second build has a few rows to upsert. sqlext: incremental ``merge`` on ``id``, reading only the
rows newer than the table's newest (the usual incremental filter). Peer (dbt-spark on parquet):
incremental ``insert_overwrite`` of the group, recomputed whole (parquet cannot upsert).
"""

from __future__ import annotations

import csv
from pathlib import Path

import yaml

ROWS_PER_MODEL = 100

SQLEXT_MODEL = """
{{{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}}}
select id, grp, value, updated_at from {{{{ ref('events') }}}} where grp = {k}
{{% if is_incremental() %}}
  and updated_at > (select max(updated_at) from {{{{ this }}}})
{{% endif %}}
"""

PEER_MODEL = """
{{{{ config(materialized='incremental', incremental_strategy='insert_overwrite') }}}}
select id, grp, value, updated_at from {{{{ ref('events') }}}} where grp = {k}
"""


def _rows(models: int, changed: bool) -> list[dict]:
    rows = []
    for k in range(models):
        count = ROWS_PER_MODEL + (ROWS_PER_MODEL // 10 if changed else 0)
        for i in range(count):
            updated = changed and (i % 10 == 0 or i >= ROWS_PER_MODEL)
            rows.append({"id": k * 10_000 + i, "grp": k, "value": i * (3 if updated else 1),
                         "updated_at": "2024-02-01 00:00:00" if updated
                         else "2024-01-01 00:00:00"})
    return rows


def _write_seed(project: Path, models: int, changed: bool) -> None:
    with open(project / "seeds" / "events.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["id", "grp", "value", "updated_at"])
        writer.writeheader()
        writer.writerows(_rows(models, changed))


def prepare(workdir: Path, system: str, models: int, threads: int) -> Path:
    """Write the project for ``system`` (``sqlext`` or ``spark``) under ``workdir``; its path."""
    project = workdir / "many"
    (project / "models").mkdir(parents=True)
    (project / "seeds").mkdir()
    fmt = {} if system == "sqlext" else {"+file_format": "parquet"}
    config = {"name": "many", "version": "1.0", "config-version": 2, "profile": "many",
              "seeds": {"many": {**fmt, "+column_types": {"updated_at": "timestamp"}}},
              "models": {"many": dict(fmt)}}
    (project / "dbt_project.yml").write_text(yaml.safe_dump(config))
    if system == "sqlext":
        output = {"type": "sqlext", "threads": threads, "warehouse": str(workdir / "warehouse")}
    else:
        output = {"type": "spark", "method": "session", "host": "localhost", "threads": threads,
                  "server_side_parameters": {"spark.sql.warehouse.dir":
                                             str(workdir / "warehouse")}}
    profile = {"many": {"target": "dev", "outputs": {"dev": {**output, "schema": "many"}}}}
    (project / "profiles.yml").write_text(yaml.safe_dump(profile))
    template = SQLEXT_MODEL if system == "sqlext" else PEER_MODEL
    for k in range(models):
        (project / "models" / f"m_{k:02d}.sql").write_text(template.format(k=k))
    _write_seed(project, models, changed=False)
    return project


def change_seed(project: Path, models: int) -> None:
    """The second build's seed: a tenth of each group updated, a tenth more rows."""
    _write_seed(project, models, changed=True)


def expected_rows(models: int) -> int:
    """Rows across all models after the second build (the same on both systems)."""
    return len(_rows(models, changed=True))
