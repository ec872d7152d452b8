"""VACUUM from Spark: the session's settings decide the retention check and the VACUUM START /
END commits, and the result becomes a DataFrame. What is deleted is decided without Spark, in
:mod:`sqlext.log.vacuum`."""

from __future__ import annotations

from sqlext.engine.session import conf_flag
from sqlext.log.storage import qualified_path
from sqlext.log.table import DeltaLog
from sqlext.log.vacuum import RETENTION_CHECK_CONF, VacuumResult, collect_garbage

LOGGING_CONF = "spark.databricks.delta.vacuum.logging.enabled"


def vacuum(spark, log_: DeltaLog, retention_hours: float | None = None, dry_run: bool = False,
           mode: str | None = None) -> VacuumResult:
    """VACUUM with the session's settings (retention check, logging) and engine info."""
    from sqlext.engine.commit import commit_fields
    return collect_garbage(log_, retention_hours, dry_run,
                           check_retention=conf_flag(spark, RETENTION_CHECK_CONF, True),
                           log_commits=conf_flag(spark, LOGGING_CONF, True), mode=mode,
                           **commit_fields(spark))


def _path_frame(spark, paths: list[str]):
    from pyspark.sql import types as T
    schema = T.StructType([T.StructField("path", T.StringType())])
    return spark.createDataFrame([(p,) for p in paths], schema)


def result_frame(spark, result: VacuumResult):
    """``DeltaTable.vacuum``'s result as a DataFrame with one string column ``path``: the files
    and directories deleted (a dry run: that would be deleted). Files kept because no table
    wrote them are not listed (see :mod:`sqlext.log.vacuum`)."""
    return _path_frame(spark, result.paths)


def sql_result_frame(spark, result: VacuumResult):
    """SQL VACUUM's result, as delta-spark answers it: one string column ``path`` holding the
    table's qualified location (``file:/...``), or in a dry run the qualified paths of the files
    and directories that would be deleted."""
    paths = result.paths if result.dry_run else [result.location]
    return _path_frame(spark, [qualified_path(p) for p in paths])
