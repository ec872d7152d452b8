"""The words of Spark's UPDATE and MERGE refusal in ``sqlext-thriftserver``'s JVM.

Spark refuses UPDATE and MERGE on a catalog entry (a Python data source has no row-level
operations) with ``UNSUPPORTED_FEATURE.TABLE_OPERATION``, naming the table by its catalog
identifier (``SparkStrategies.extractTableNameForError``), so the entry's data source name,
which DELETE and TRUNCATE print (:func:`sqlext.thrift.source.source_name`), never shows. Spark
reads its messages from the resource ``error/error-conditions.json`` of its class loader; the
server puts a copy of the running Spark's own file first on the driver's class path, with that
one condition reworded to say to change the table with sqlext. No JVM code: a JSON file.
"""

from __future__ import annotations

import glob
import json
import os
import zipfile

RESOURCE = "error/error-conditions.json"
CONDITION = ("UNSUPPORTED_FEATURE", "TABLE_OPERATION")
#: keeps Spark's two parameters; the table is Spark's identifier (```spark_catalog`.`s`.`t```)
MESSAGE = ("Table <tableName> does not support <operation> here: a sqlext table is read-only "
           "over JDBC (sqlext-thriftserver). Change it with sqlext (sqlext-sql, sqlext.sql, "
           "DeltaTable, dbt).")
CLASSPATH_CONF = "spark.driver.extraClassPath"


def spark_error_conditions() -> dict | None:
    """The running pyspark's ``error-conditions.json`` (from its ``spark-common-utils`` jar), or
    None when it cannot be found."""
    from pyspark.find_spark_home import _find_spark_home

    for jar in sorted(glob.glob(os.path.join(_find_spark_home(), "jars",
                                             "spark-common-utils_*.jar"))):
        with zipfile.ZipFile(jar) as zf:
            if RESOURCE in zf.namelist():
                return json.loads(zf.read(RESOURCE))
    return None


def write_error_conditions(directory: str) -> bool:
    """Write Spark's conditions with :data:`MESSAGE` for UPDATE / MERGE on a table that does
    not support them to ``directory/error/error-conditions.json``; False (nothing written,
    Spark's own words stay) when Spark's file or the condition is not found."""
    conditions = spark_error_conditions()
    parent, child = CONDITION
    try:
        entry = conditions[parent]["subClass"][child]
    except (TypeError, KeyError):
        return False
    entry["message"] = [MESSAGE]
    os.makedirs(os.path.join(directory, "error"), exist_ok=True)
    with open(os.path.join(directory, *RESOURCE.split("/")), "w", encoding="utf-8") as f:
        json.dump(conditions, f, indent=2)
    return True


def with_messages(conf: dict[str, str], directory: str) -> dict[str, str]:
    """``conf`` with ``directory`` first on the driver's class path, once
    :func:`write_error_conditions` wrote the reworded messages there (``conf`` unchanged
    otherwise). Takes effect in a JVM started with ``conf``."""
    if not write_error_conditions(directory):
        return conf
    given = conf.get(CLASSPATH_CONF)
    return {**conf, CLASSPATH_CONF: directory + (os.pathsep + given if given else "")}
