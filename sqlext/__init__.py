"""sqlext: ACID Delta Lake tables on PySpark.

The protocol kernel (:mod:`sqlext.log`) is pure Python and never imports pyspark; the Spark-facing
API below is loaded on first use so that ``import sqlext.log`` stays light.
"""

import importlib as _importlib

from sqlext import errors
from sqlext.errors import *  # noqa: F401,F403  (the error classes are part of the public API)
from sqlext.version import VERSION as __version__  # noqa: F401  (pyproject.toml's, via metadata)


# public name -> module that defines it; imported lazily (PEP 562)
_LAZY = {
    "session": "sqlext.engine.session",
    "write": "sqlext.api",
    "read": "sqlext.api",
    "changes": "sqlext.api",
    "DeltaTable": "sqlext.tables",
    "IdentityGenerator": "sqlext.tables",
    "install": "sqlext.drop_in",
}

# ``sqlext.sql(spark, text)`` runs SQL: the SQL front's package is itself callable (see its
# docstring), so the name is one object whether imported as a package or called.
from sqlext import sql  # noqa: E402,F401


#: ``from sqlext import *``: the API above and the error classes
__all__ = sorted(["__version__", "sql", *_LAZY, *errors.__all__])


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sqlext' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
