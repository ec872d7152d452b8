"""sqlext's SQL front: the ``sqlext`` sqlglot dialect, the statement runner and the shell.

``sqlext.sql`` is both this package and the public function ``sqlext.sql(spark, text)``: once the
package is imported, Python binds the attribute ``sqlext.sql`` to it, so the package itself is
callable and runs :func:`sqlext.sql.runner.run_sql`.
"""

from __future__ import annotations

import sys
import types


class _CallablePackage(types.ModuleType):
    def __call__(self, spark, text: str):
        """Run ``;``-separated SQL statements; returns the last one's result (see ``run_sql``)."""
        from sqlext.sql.runner import run_sql

        return run_sql(spark, text)


sys.modules[__name__].__class__ = _CallablePackage
