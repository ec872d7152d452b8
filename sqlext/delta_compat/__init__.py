"""delta-spark's ``delta`` package on sqlext, for scripts written for delta-spark.

Where delta-spark is not installed, ``import delta`` loads this folder as the package ``delta``
(:mod:`sqlext.delta_hook`, installed with sqlext, does it; a real delta-spark always wins), so a
delta-spark script runs unedited from its first line:

- ``delta``: ``DeltaTable``, ``configure_spark_with_delta_pip``, ``__version__`` (and
  ``from delta import *`` gives those three, as delta-spark's does);
- ``delta.tables``: sqlext's :class:`~sqlext.tables.DeltaTable`, ``DeltaMergeBuilder``,
  ``DeltaOptimizeBuilder``, ``DeltaTableBuilder``, ``IdentityGenerator``;
- ``delta.exceptions``: delta-spark's exception names bound to sqlext's classes
  (:mod:`sqlext.errors`);
- ``delta.pip_utils.configure_spark_with_delta_pip``: the builder's session gets
  :func:`sqlext.install` and no Delta jars, extension or catalog;
- ``delta.version.__version__``: the delta-spark release whose Python API this follows.

The modules import each other relatively, so they work alike as ``delta.*`` and as
``sqlext.delta_compat.*`` (the classes are sqlext's in both).
"""

from .tables import DeltaTable
from .pip_utils import configure_spark_with_delta_pip
from .version import __version__

__all__ = ["DeltaTable", "configure_spark_with_delta_pip", "__version__"]
