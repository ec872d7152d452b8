"""pyspark's ``spark.catalog`` on a session with sqlext installed: sqlext's tables are listed
with Spark's (``listTables``, ``tableExists``, ``getTable``, ``listColumns``), as delta-spark's
tables are in the session catalog. Reading one still goes through sqlext (``spark.table``), so no
catalog entry ever points a plain parquet reader at files a DELETE removed."""

from __future__ import annotations

import fnmatch

from pyspark.sql.catalog import Catalog, Column, Table

from sqlext.drop_in.state import installed, is_sqlext_table


def _sqlext_catalog(spark):
    from sqlext.catalog import Catalog as SqlextCatalog
    return SqlextCatalog(spark)


def _table_entry(spark, schema: str, name: str) -> Table:
    from sqlext.log.table import DeltaLog
    ref = _sqlext_catalog(spark).lookup(schema, name)
    description = None
    if ref is not None:
        try:
            description = DeltaLog(ref.location).snapshot().metadata.description
        except Exception:  # noqa: BLE001 - a listing must not fail on one unreadable table
            pass
    return Table(name=name, catalog="spark_catalog", namespace=[schema],
                 description=description,
                 tableType="MANAGED" if ref is not None and ref.managed else "EXTERNAL",
                 isTemporary=False)


def _schema_of(spark, dbName: str | None) -> str:
    return (dbName or _sqlext_catalog(spark).current_schema()).split(".")[-1].strip("`").lower()


def _list_tables(original, self, dbName=None, pattern=None):
    spark = self._sparkSession
    found = original(self, dbName, pattern)
    if not installed(spark):
        return found
    schema = _schema_of(spark, dbName)
    known = {(t.namespace[0] if t.namespace else None, t.name) for t in found}
    extra = [_table_entry(spark, schema, name)
             for name in _sqlext_catalog(spark).list_tables(schema)
             if (schema, name) not in known
             and (pattern is None or fnmatch.fnmatch(name, pattern.replace("%", "*")))]
    return sorted(found + extra, key=lambda t: (t.isTemporary, t.name))


def _qualified(tableName: str, dbName: str | None) -> str:
    return f"{dbName}.{tableName}" if dbName else tableName


def _table_exists(original, self, tableName, dbName=None):
    spark = self._sparkSession
    if installed(spark) and is_sqlext_table(spark, _qualified(tableName, dbName)):
        return True
    return original(self, tableName, dbName)


def _get_table(original, self, tableName):
    spark = self._sparkSession
    if installed(spark) and is_sqlext_table(spark, tableName):
        from sqlext.catalog.registry import split_name
        schema, name = split_name(tableName)
        return _table_entry(spark, schema or _sqlext_catalog(spark).current_schema(), name)
    return original(self, tableName)


def _list_columns(original, self, tableName, dbName=None):
    spark = self._sparkSession
    qualified = _qualified(tableName, dbName)
    if not (installed(spark) and is_sqlext_table(spark, qualified)):
        return original(self, tableName, dbName)
    from sqlext.tables import DeltaTable
    table = DeltaTable.forName(spark, qualified)
    partitions = set(table.detail().collect()[0]["partitionColumns"])
    fields = Column._fields
    columns = []
    for field in table.toDF().schema.fields:
        values = {"name": field.name, "description": field.metadata.get("comment"),
                  "dataType": field.dataType.simpleString(), "nullable": field.nullable,
                  "isPartition": field.name in partitions, "isBucket": False, "isCluster": False}
        columns.append(Column(**{k: values[k] for k in fields}))
    return columns


WRAPPERS = {
    Catalog: {"listTables": _list_tables, "tableExists": _table_exists, "getTable": _get_table,
              "listColumns": _list_columns},
}
