"""The shell's compact view of ``DESCRIBE HISTORY``: delta-spark's fifteen columns, most of them
empty outside Databricks (job, notebook, cluster), cut down to what a reader scans for."""

from __future__ import annotations

from collections.abc import Sequence

COMPACT_COLUMNS = ["version", "timestamp", "operation", "parameters", "metrics"]
USER_METADATA = "userMetadata"


def _pairs(mapping, skip_zero: bool) -> str:
    if not mapping:
        return ""
    items = sorted(mapping.items())
    return ", ".join(f"{k}={v}" for k, v in items if not (skip_zero and str(v) in ("0", "")))


def compact_history(columns: Sequence[str], rows: Sequence[Sequence]
                    ) -> tuple[list[str], list[list]]:
    """``DESCRIBE HISTORY`` rows as version, timestamp, operation, its parameters (``k=v``), its
    non-zero metrics (``k=v``) and, when any commit has one, the user metadata."""
    at = {name: i for i, name in enumerate(columns)}
    with_user = any(row[at[USER_METADATA]] is not None for row in rows)
    out = []
    for row in rows:
        line = [row[at["version"]], row[at["timestamp"]], row[at["operation"]],
                _pairs(row[at["operationParameters"]], skip_zero=False),
                _pairs(row[at["operationMetrics"]], skip_zero=True)]
        if with_user:
            line.append(row[at[USER_METADATA]])
        out.append(line)
    return COMPACT_COLUMNS + ([USER_METADATA] if with_user else []), out
