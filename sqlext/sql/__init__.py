"""sqlext's SQL front: the ``sqlext`` sqlglot dialect, the planner, the statement runner
(:func:`sqlext.sql.runner.run_sql`) and the ``sqlext-sql`` shell (``python -m sqlext.sql``).

The package is also the public function ``sqlext.sql(spark, text)``: calling it runs one or more
``;``-separated statements and returns the last one's result (a DataFrame, or None). One object
serves both, so ``import sqlext.sql as m`` and ``from sqlext import sql`` give the same callable
package and nothing shadows anything. Importing this package imports nothing else.
"""

import sys as _sys
import types as _types


class _SqlPackage(_types.ModuleType):
    """The ``sqlext.sql`` package, callable as ``sqlext.sql(spark, text)``."""

    def __call__(self, spark, text: str):
        """Run one or more ``;``-separated SQL statements; returns the last one's result (a
        DataFrame, or None for statements that return nothing)."""
        from sqlext.sql.runner import run_sql
        return run_sql(spark, text)


_sys.modules[__name__].__class__ = _SqlPackage
