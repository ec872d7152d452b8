"""sqlext's SQL front: the ``sqlext`` sqlglot dialect, the planner, the statement runner
(:func:`sqlext.sql.runner.run_sql`, public as the function ``sqlext.sql(spark, text)``) and the
``sqlext-sql`` shell (``python -m sqlext.sql``). Importing this package imports nothing else.
"""
