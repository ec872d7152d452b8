"""``delta.exceptions``: delta-spark's names for commit conflicts, bound to sqlext's classes.

``except ConcurrentAppendException`` (or any other name here) catches what sqlext raises for that
conflict. delta-spark's Python classes are siblings; sqlext's share the base
:class:`~sqlext.errors.ConcurrentModificationException`, which ``DeltaConcurrentModificationException``
names, so catching it catches every conflict. ``ConcurrentWriteException`` (delta-spark: another
writer committed the same version and the transaction is not retried) is that base too: sqlext
retries every commit after checking the winners, and raises the base class itself when it gives up.
"""

from sqlext.errors import (
    ConcurrentAppendException,
    ConcurrentDeleteDeleteException,
    ConcurrentDeleteReadException,
    ConcurrentModificationException,
    ConcurrentTransactionException,
    MetadataChangedException,
    ProtocolChangedException,
)

DeltaConcurrentModificationException = ConcurrentModificationException
ConcurrentWriteException = ConcurrentModificationException

__all__ = [
    "DeltaConcurrentModificationException",
    "ConcurrentWriteException",
    "MetadataChangedException",
    "ProtocolChangedException",
    "ConcurrentAppendException",
    "ConcurrentDeleteReadException",
    "ConcurrentDeleteDeleteException",
    "ConcurrentTransactionException",
]
