"""The write command in stages (model: delta-rs ``operations/write/``), each passing on one
options object:

- :mod:`.options`: :class:`~.options.WriteOptions`, the write's options checked once, with its
  :class:`~sqlext.engine.commit.CommitProperties` (user metadata, application transaction);
- :mod:`.plan`: the plan stage: the snapshot, the mode's and idempotency's early answers, the
  schema and partitioning written under, generated columns, the metadata staged;
- :mod:`.execution`: the write stage: replaceWhere's check, identity values, the data files
  (on the driver or by one Spark job) and the files replaced;
- :mod:`.metrics`: the commit's actions, ``operationParameters`` and ``operationMetrics``.

:func:`sqlext.engine.write.write` runs them and commits (:func:`sqlext.engine.commit.commit`);
what follows a commit is in :mod:`sqlext.engine.post_commit`.
"""
