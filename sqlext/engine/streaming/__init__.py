"""Structured Streaming on sqlext tables (issue 28): the Delta sink (:mod:`.sink`, micro-batches
committed through :func:`sqlext.engine.write.write` with the query's id and batch id as the
``txn`` of each commit) and the Delta source (:mod:`.source`, a Python data source whose offsets
walk the table's log). ``sqlext.install(spark)`` routes ``readStream``/``writeStream`` with
``format("delta")`` to them (:mod:`sqlext.drop_in.streaming`)."""
