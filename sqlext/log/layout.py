"""What lives in a table's directory: the names of the entries Delta writers create there, and how
to recognise a data file a Delta writer produced from its name alone.

VACUUM deletes an unreferenced file only when the log referenced it or its name says a Delta table
writer wrote it (an orphan of a failed write); see :mod:`sqlext.log.vacuum`.
"""

from __future__ import annotations

import re

LOG_DIR = "_delta_log"
CHANGE_DATA_DIR = "_change_data"
STAGING_DIR = "_sqlext_staging"      # where sqlext's writers stage files before moving them in
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"   # a NULL partition value in a Hive-style directory name

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# part-00000-<uuid>.c000.snappy.parquet (sqlext, delta-spark) or ...-<uuid>-c000.snappy.parquet
# (delta-rs, Spark's file writer); the split number has at least five digits
_DATA_FILE = re.compile(rf"^part-\d{{5,}}-{_UUID}[^/]*\.parquet$")
_CHANGE_FILE = re.compile(r"^cdc-[^/]*\.parquet$")
_DELETION_VECTOR = re.compile(rf"^deletion_vector_{_UUID}\.bin$")


def written_by_delta_writer(rel: str) -> bool:
    """Whether the file at ``rel`` (``/``-separated, relative to the table root) is named as a
    Delta table writer names the files it writes: data files ``part-NNNNN-<uuid>...parquet``,
    change files ``_change_data/.../cdc-...parquet``, deletion vectors
    ``deletion_vector_<uuid>.bin``, or anything in sqlext's staging directory."""
    parts = rel.split("/")
    name = parts[-1]
    if parts[0] == STAGING_DIR and len(parts) > 1:
        return True
    if parts[0] == CHANGE_DATA_DIR and _CHANGE_FILE.match(name):
        return True
    return bool(_DATA_FILE.match(name) or _DELETION_VECTOR.match(name))
