"""Spark's Thrift JDBC/ODBC server with sqlext's tables in its catalog (``sqlext-thriftserver``):
:mod:`sqlext.thrift.server` starts it and keeps the catalog entries in step with sqlext's
catalog; :mod:`sqlext.thrift.source` is the Python data source the entries read through, the
table's current snapshot at each query; :mod:`sqlext.thrift.one_line` makes the server's errors one line
for JDBC clients."""
