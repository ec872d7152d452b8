"""Reading a table's change feed on Spark (``read``) and its deduplication modes (``dedup``).
Which files hold the changes is decided from the log alone, in :mod:`sqlext.log.changes_plan`."""
