"""The commit of a write as delta-spark records it: its file actions, its operation (with the
``operationParameters``) and ``operationMetrics`` (delta-rs ``operations/write/metrics.rs``)."""

from __future__ import annotations

import time

from sqlext.engine.writes.execution import WriteOutcome
from sqlext.engine.writes.options import WriteOptions
from sqlext.engine.writes.plan import TableWrite
from sqlext.log import operations as ops
from sqlext.log.actions import Action
from sqlext.log.transaction import now_ms


def write_actions(outcome: WriteOutcome) -> list[Action]:
    """The removes, adds and change files of ``outcome``. A file of no rows (Spark writes one
    for an empty unpartitioned output) adds nothing: it is left out of the commit, as
    delta-spark leaves it out (:func:`write_metrics` counts it, as there)."""
    ts = now_ms()
    actions: list[Action] = [f.remove(ts) for f in outcome.removed]
    actions += [w.add() for w in outcome.written if w.num_records != 0]
    actions += [w.add() for w in outcome.rewritten]
    actions += [c.cdc() for c in outcome.changes]
    return actions


def write_metrics(plan: TableWrite, outcome: WriteOutcome, options: WriteOptions) -> dict:
    """``operationMetrics`` of the write, ``executionTimeMs`` measured up to now."""
    written = outcome.written
    metrics = {"numFiles": len(written),
               "numOutputRows": sum((w.num_records or 0) for w in written),
               "numOutputBytes": sum(w.size for w in written)}
    if outcome.removed or (plan.snapshot is not None and options.overwrite):
        metrics.update(numRemovedFiles=len(outcome.removed),
                       numRemovedBytes=sum(f.size for f in outcome.removed))
    metrics.update(outcome.metrics)
    if outcome.changes:
        metrics["numAddedChangeFiles"] = len(outcome.changes)
    metrics["executionTimeMs"] = int((time.time() - plan.started) * 1000)
    return metrics


def write_operation(plan: TableWrite, outcome: WriteOutcome,
                    options: WriteOptions) -> ops.Operation:
    """The write's operation: :class:`~sqlext.log.operations.Write`, or the caller's
    ``options.operation`` with the write's parameters first
    (:class:`~sqlext.log.operations.WriteAs`)."""
    write = ops.Write(options.save_mode, tuple(plan.partition_columns), options.replace_where,
                      outcome.dynamic, options.merge_schema)
    return write if options.operation is None else ops.WriteAs(write, options.operation)
