"""Table maintenance on Spark: OPTIMIZE (``optimize``), VACUUM (``vacuum``, over the kernel's
:mod:`sqlext.log.vacuum`), RESTORE (``restore``, over :mod:`sqlext.log.restore`), CLONE
(``clone``) and CONVERT TO DELTA (``convert``)."""
