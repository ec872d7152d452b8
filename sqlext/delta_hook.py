"""``import delta`` on sqlext: delta-spark's package names served by :mod:`sqlext.delta_compat`,
only where nothing else provides ``delta``.

sqlext's distribution (wheel and editable install alike, see setup.py) installs a copy of this
file as ``_sqlext_delta_hook`` at the top of site-packages with ``sqlext-delta.pth``, whose line
``import _sqlext_delta_hook; _sqlext_delta_hook.install()`` runs at interpreter start. It uses
the standard library only and imports nothing of sqlext until ``delta`` is imported.

:class:`DeltaOnSqlext` goes last on ``sys.meta_path``, so Python asks it only after every other
finder (the standard path finder: every ``sys.path`` entry; editable installs' finders) found no
module of that name (and a finder put there later is asked first too): a real delta-spark,
installed or editable, or any ``delta`` package of the user's own, always wins. It answers:

- ``delta``: :mod:`sqlext.delta_compat`'s ``__init__``, a package whose submodules
  (``delta.tables``, ``delta.exceptions``, ``delta.pip_utils``, ``delta.version``) are that
  folder's modules;
- ``delta.<name>`` under a ``delta`` that Python made a namespace package of a folder named
  ``delta`` on ``sys.path`` (a data folder beside a script, say) and that has no such module:
  the compat module of that name, so ``from delta.tables import DeltaTable`` still works there.

``SQLEXT_DELTA_COMPAT=0`` in the environment leaves the finder out (``import delta`` then fails
as it would without sqlext).
"""

from __future__ import annotations

import os
import sys
from importlib.util import find_spec, spec_from_file_location

ENV = "SQLEXT_DELTA_COMPAT"
PACKAGE = "delta"
COMPAT_FOLDER = "delta_compat"      # inside sqlext's package folder


class DeltaOnSqlext:
    """The meta path finder (classmethods only: the class itself is on ``sys.meta_path``)."""

    SQLEXT_DELTA_COMPAT = True      # how :func:`install` recognizes a finder already installed

    @classmethod
    def find_spec(cls, fullname: str, path=None, target=None):
        if fullname.partition(".")[0] != PACKAGE or found_after(cls, fullname, path, target):
            return None
        if fullname == PACKAGE:
            folder = compat_folder()
            if folder is None:
                return None
            return spec_from_file_location(PACKAGE, os.path.join(folder, "__init__.py"),
                                           submodule_search_locations=[folder])
        parent, _, name = fullname.rpartition(".")
        if parent != PACKAGE or not is_namespace(sys.modules.get(PACKAGE)):
            return None
        folder = compat_folder()
        module = folder and os.path.join(folder, name + ".py")
        if not module or not os.path.isfile(module):
            return None
        return spec_from_file_location(fullname, module)

    @classmethod
    def invalidate_caches(cls) -> None:
        pass


def found_after(finder, fullname: str, path, target) -> bool:
    """Whether a finder put on ``sys.meta_path`` after ``finder`` (by a ``.pth`` file read
    later, say) has the module: then it is that finder's to serve."""
    finders = sys.meta_path
    later = finders[finders.index(finder) + 1:] if finder in finders else []
    for other in later:
        find = getattr(other, "find_spec", None)
        if find is not None and find(fullname, path, target) is not None:
            return True
    return False


def compat_folder() -> str | None:
    """The folder of :mod:`sqlext.delta_compat`, found without importing sqlext."""
    try:
        spec = find_spec("sqlext")
    except (ImportError, ValueError):
        return None
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        folder = os.path.join(root, COMPAT_FOLDER)
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            return folder
    return None


def is_namespace(module) -> bool:
    """Whether ``module`` is a namespace package (folders only: no ``__init__``, no file)."""
    spec = getattr(module, "__spec__", None)
    return (spec is not None and spec.origin in (None, "namespace")
            and spec.submodule_search_locations is not None)


def install() -> None:
    """Put :class:`DeltaOnSqlext` last on ``sys.meta_path`` (once), unless ``$SQLEXT_DELTA_COMPAT``
    is ``0``/``false``/``no``/``off``."""
    if os.environ.get(ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return
    if not any(getattr(f, "SQLEXT_DELTA_COMPAT", False) for f in sys.meta_path):
        sys.meta_path.append(DeltaOnSqlext)
