"""Independent readers of Delta tables, for cross-checking what sqlext writes and reads.

Two engines that share no code with sqlext: delta-rs (``deltalake``) and DuckDB's delta
extension (delta-kernel-rs inside DuckDB). Every reader returns a ``pyarrow.Table``; compare
results with :func:`tests.support.compare.assert_same_rows`, which normalises the type
differences between engines (e.g. DuckDB's ``timestamp[us, tz=Etc/UTC]``, delta-rs's
``string_view`` in change feeds).

What each engine can do here (deltalake 1.6.6, duckdb + duckdb-extension-delta 1.5.5):

============================  =========================  =====================================
                              deltalake                  DuckDB delta extension
============================  =========================  =====================================
latest / ``version=n``        yes                        yes (``delta_scan(p, version=n)``)
timestamp time travel         ``load_as_version(dt)``    no
change data feed              ``load_cdf``               no (no CDF table function)
deletion vectors              yes (DataFusion route)     yes
log-only tables (no data)     file list only             ``delta_list_files`` only
============================  =========================  =====================================
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pyarrow as pa

PathLike = str | os.PathLike

#: Reader features that delta-rs's pyarrow-dataset route refuses; such tables are read with
#: delta-rs's DataFusion engine (QueryBuilder) instead, which applies deletion vectors.
_NEEDS_DATAFUSION = {"deletionVectors"}


def _delta_table(path: PathLike, version: int | None):
    from deltalake import DeltaTable

    return DeltaTable(str(path), version=version)


def read_deltalake(path: PathLike, version: int | None = None, *, engine: str = "auto") -> pa.Table:
    """Rows of the Delta table at ``path`` (latest, or ``version``) as read by delta-rs.

    ``engine``:
      - ``"pyarrow"``: delta-rs lists the snapshot's files and partition values, pyarrow reads
        the parquet with INT96 timestamps as microseconds (Spark's edge timestamps such as
        9999-12-31 overflow nanoseconds). Refuses tables with deletion vectors.
      - ``"datafusion"``: ``deltalake.QueryBuilder`` (``SELECT *``). Applies deletion vectors,
        but reads INT96 timestamps past 2262 wrongly (``table_with_edge_timestamps``: 9999-12-31
        comes back as 1816-03-29), so it is not the default.
      - ``"auto"`` (default): ``"datafusion"`` when the table uses deletion vectors or column
        mapping (the pyarrow route reads a column-mapped table's columns by their logical names
        and returns nulls: delta-rs's ``table_with_column_mapping``), else ``"pyarrow"``.

    The files are opened through pyarrow's own ``LocalFileSystem``: delta-rs's object-store
    filesystem handler left threads that abort the interpreter at exit
    ("terminate called without an active exception", exit 134).
    """
    table = _delta_table(path, version)
    if engine == "auto":
        features = set(table.protocol().reader_features or ())
        mapped = table.metadata().configuration.get("delta.columnMapping.mode", "none") != "none"
        engine = "datafusion" if features & _NEEDS_DATAFUSION or mapped else "pyarrow"
    if engine == "datafusion":
        from deltalake import QueryBuilder

        return pa.table(QueryBuilder().register("t", table).execute("SELECT * FROM t").read_all())
    if engine != "pyarrow":
        raise ValueError(f"engine must be 'auto', 'pyarrow' or 'datafusion', not {engine!r}")
    import pyarrow.dataset as pds
    import pyarrow.fs as pafs

    dataset = table.to_pyarrow_dataset(
        filesystem=pafs.SubTreeFileSystem(str(Path(path).resolve()), pafs.LocalFileSystem()),
        parquet_read_options=pds.ParquetReadOptions(coerce_int96_timestamp_unit="us"),
    )
    return dataset.to_table()


def deltalake_cdf(path: PathLike, starting_version: int, ending_version: int | None = None) -> pa.Table:
    """Change data feed of versions ``starting_version..ending_version`` (inclusive) by delta-rs.

    Columns: the table's, then ``_change_type`` (``insert``, ``delete``, ``update_preimage``,
    ``update_postimage``), ``_commit_version`` (uint64) and ``_commit_timestamp`` (naive
    ``timestamp[ms]``, UTC). Strings come back as ``string_view``. Raises ``DeltaError`` for a
    range that includes a version written without ``delta.enableChangeDataFeed``.
    """
    reader = _delta_table(path, None).load_cdf(
        starting_version=starting_version, ending_version=ending_version
    )
    return pa.table(reader.read_all())


def deltalake_add_paths(path: PathLike, version: int | None = None) -> set[str]:
    """Paths of the snapshot's active files, exactly as in the log's ``add.path`` (relative,
    URI-encoded: a partition directory ``x=A%2FA`` appears as ``x=A%252FA/...``)."""
    actions = pa.table(_delta_table(path, version).get_add_actions())
    return set(actions.column("path").to_pylist())


def _delta_extension_path() -> str:
    import duckdb
    import duckdb_extension_delta

    root = Path(duckdb_extension_delta.__file__).parent / "extensions"
    path = root / f"v{duckdb.__version__}" / "delta.duckdb_extension"
    if not path.is_file():
        found = sorted(root.glob("*/delta.duckdb_extension"))
        raise FileNotFoundError(
            f"no delta extension for duckdb {duckdb.__version__} under {root} (found {found});"
            " install duckdb-extension-delta with the same version as duckdb"
        )
    return str(path)


@functools.cache
def duckdb_connection():
    """One in-memory DuckDB connection per test run, delta extension loaded offline from the
    ``duckdb_extension_delta`` package, ``TimeZone=UTC``, no progress bar.

    Use it for ``delta_scan`` and to compute expected results of DELETE/UPDATE/MERGE on plain
    DuckDB tables (see :func:`duckdb_table` and :func:`duckdb_query`). Tables created on it
    outlive the test: use :func:`duckdb_table`, which replaces a table of the same name.
    """
    import duckdb

    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{_delta_extension_path()}'")
    con.execute("SET enable_progress_bar = false")
    con.execute("SET TimeZone = 'UTC'")
    return con


def duckdb_query(sql: str, params: list | dict | None = None) -> pa.Table:
    """Run ``sql`` on :func:`duckdb_connection` and return its result as a pyarrow table."""
    return duckdb_connection().execute(sql, params).to_arrow_table()


def duckdb_table(name: str, data) -> str:
    """Create (or replace) plain DuckDB table ``name`` holding ``data`` (anything DuckDB can
    scan: pyarrow table, pandas DataFrame, ...) and return its quoted name for use in SQL."""
    quoted = '"' + name.replace('"', '""') + '"'
    con = duckdb_connection()
    con.register("__sqlext_src", data)
    try:
        con.execute(f"CREATE OR REPLACE TABLE {quoted} AS SELECT * FROM __sqlext_src")
    finally:
        con.unregister("__sqlext_src")
    return quoted


def read_duckdb(path: PathLike, version: int | None = None) -> pa.Table:
    """Rows of the Delta table at ``path`` (latest, or ``version``) as read by DuckDB's delta
    extension: ``SELECT * FROM delta_scan(path[, version => n])``.

    DuckDB reads older versions by number only (also ``ATTACH p AS t (TYPE delta, VERSION n)``);
    it has no timestamp time travel and no change data feed. Each call takes a fresh snapshot.
    Timestamps come back as ``timestamp[us, tz=Etc/UTC]``.
    """
    location = str(Path(path).resolve())
    if version is None:
        return duckdb_query("SELECT * FROM delta_scan($path)", {"path": location})
    return duckdb_query(
        "SELECT * FROM delta_scan($path, version = $version)", {"path": location, "version": version}
    )
