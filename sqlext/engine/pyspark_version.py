"""The pyspark releases sqlext runs on, checked when the engine is first imported."""

from __future__ import annotations

import importlib.metadata

from sqlext.errors import UnsupportedPysparkError

# pyproject.toml's range; tests/compat runs the suite's core on the newest release of each minor
SUPPORTED = ((4, 0), (5, 0))


def require_supported(version: str | None = None) -> None:
    """Raise :class:`UnsupportedPysparkError` unless pyspark ``version`` (default: the installed
    one, read from package metadata without importing pyspark) is in :data:`SUPPORTED`."""
    if version is None:
        try:
            version = importlib.metadata.version("pyspark")
        except importlib.metadata.PackageNotFoundError:
            return      # pyspark's own import error says it better
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    low, high = SUPPORTED
    if len(parts) < 2 or not low <= parts < high:
        raise UnsupportedPysparkError(
            f"sqlext runs on pyspark {low[0]}.{low[1]} up to (not including) {high[0]}.{high[1]}, "
            f"found pyspark {version}: install a supported one (pip install 'pyspark>=4.0,<5')")
