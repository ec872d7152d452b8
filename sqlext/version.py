"""sqlext's version, read once from the installed package's metadata.

``pyproject.toml`` is the single place the version is written; ``engineInfo`` in commits,
``sqlext.__version__``, the SQL shell's banner and the dbt adapter's version all read
:data:`VERSION`. No pyspark here: the kernel (:mod:`sqlext.log`) uses it too.
"""

from __future__ import annotations

import importlib.metadata
import pathlib
import tomllib


def _from_source_tree() -> str:
    """The version in ``pyproject.toml`` next to the package, for a checkout that was never
    installed (no package metadata)."""
    pyproject = pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        return tomllib.loads(pyproject.read_text())["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "0+unknown"


def package_version() -> str:
    """The ``sqlext`` distribution's version (``importlib.metadata``), or pyproject's."""
    try:
        return importlib.metadata.version("sqlext")
    except importlib.metadata.PackageNotFoundError:
        return _from_source_tree()


VERSION = package_version()
