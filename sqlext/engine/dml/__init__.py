"""DELETE and UPDATE (``delete``, ``update``), what they share with MERGE (``command``: the
transaction, checks, timings and commit), the touched-file rewrite (``rewrite``) and SET
assignments (``assignments``)."""
