"""sqlext's errors as pyspark's: ``except pyspark.errors.AnalysisException`` catches them.

delta-spark raises Spark's exceptions (``AnalysisException``, ``ParseException``,
``IllegalArgumentException``, ``UnsupportedOperationException``; ``delta.exceptions``' classes
derive from ``PySparkException``), and code written for it catches those. sqlext's errors must be
instances of the same classes, and stay :class:`~sqlext.errors.SqlextError` subclasses.

The design, and why:

- Python's ``except`` tests real inheritance (the MRO; ``__subclasscheck__``/``__instancecheck__``
  hooks are not consulted), so the pyspark class has to be a base class. Raising separate
  engine-side subclasses instead would not do: the kernel (:mod:`sqlext.log`), which may not
  import pyspark, raises many of these errors itself (versions, tables, conflicts, ...), and
  converting them at every boundary would lose the class whenever one boundary is missed.
- So :mod:`sqlext.errors` stays pure and says, per class, which pyspark class it stands for
  (``pyspark_class``, a name), and :func:`bind` appends that class to its ``__bases__`` once,
  when :mod:`sqlext.engine` is imported (which imports pyspark anyway; every Spark-facing entry
  point imports the engine: ``sqlext.read``/``write``/``sql``, ``DeltaTable``, ``install``, the
  shell, dbt, Thrift). Subclasses follow through their MRO: ``SchemaMismatchError`` is an
  ``AnalysisException`` because sqlext's ``AnalysisException`` is. CPython allows the assignment
  because both sides are plain heap-type ``Exception`` subclasses with the same instance layout;
  the root ``SqlextError`` is left alone (``Exception`` -> ``PySparkException`` is a layout
  change CPython refuses, and not every sqlext error is one of Spark's).
- :class:`~sqlext.errors.SqlextError` comes first in each MRO and implements pyspark's accessors
  (``getCondition``, ``getSqlState``, ``getMessageParameters``, ...) and ``__str__`` from its own
  fields, so pyspark's ``PySparkException.__init__`` is never run and pyspark's lookup of
  conditions (which knows no ``DELTA_*`` one) never consulted.
- A process that uses the kernel alone, without the engine, has the pure classes: nothing there
  catches pyspark's exceptions.

sqlext's own code that catches pyspark's classes around calls that may raise sqlext errors must
let those through first (``except SqlextError: raise``; see :func:`spark_fields` for carrying a
Spark error's condition into a sqlext error).
"""

from __future__ import annotations

import pyspark.errors

from sqlext import errors

_bound = False


def bind() -> None:
    """Make each :mod:`sqlext.errors` class with a ``pyspark_class`` (its own, not inherited)
    derive from that ``pyspark.errors`` class too; idempotent."""
    global _bound
    if _bound:
        return
    for cls in _all_subclasses(errors.SqlextError):
        name = cls.__dict__.get("pyspark_class")
        if name is None:
            continue
        target = getattr(pyspark.errors, name)
        if not issubclass(cls, target):
            cls.__bases__ = (*cls.__bases__, target)
    _bound = True


def _all_subclasses(cls: type) -> list[type]:
    """``cls``'s subclasses, each after its bases (depth first, no repeats)."""
    found: list[type] = []
    stack = list(reversed(cls.__subclasses__()))
    while stack:
        sub = stack.pop()
        if sub not in found:
            found.append(sub)
            stack.extend(reversed(sub.__subclasses__()))
    return found


def spark_fields(error: BaseException) -> dict:
    """The condition, SQLSTATE and message parameters of an error Spark raised (a
    ``PySparkException``, or a ``Py4JJavaError`` whose Java exception has them), as keyword
    arguments of a :class:`~sqlext.errors.SqlextError`; ``{}`` when it has none."""
    source = error
    if not isinstance(error, pyspark.errors.PySparkException):
        source = getattr(error, "java_exception", None)
        if source is None:
            return {}
        names = ("getErrorClass", "getSqlState", "getMessageParameters")
    else:
        names = ("getCondition", "getSqlState", "getMessageParameters")
    values = []
    for name in names:
        try:
            values.append(getattr(source, name)())
        except Exception:  # noqa: BLE001 - no such accessor, or a condition Spark cannot look up
            values.append(None)
    condition, sqlstate, parameters = values
    if not condition:
        return {}
    fields = {"error_class": str(condition)}
    if sqlstate:
        fields["sqlstate"] = str(sqlstate)
    if parameters:
        try:
            fields["message_parameters"] = {str(k): str(v) for k, v in dict(parameters).items()}
        except (TypeError, ValueError):
            pass
    return fields
