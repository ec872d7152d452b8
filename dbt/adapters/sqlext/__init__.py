"""dbt adapter ``type: sqlext``: dbt-spark on an in-process SparkSession (``method: session``) or
a running Spark Connect server's (``method: connect``), with every statement run by
``sqlext.sql``, so models are ACID Delta tables without the Delta Lake jars."""

from dbt.adapters.base import AdapterPlugin
from dbt.adapters.sqlext.connections import SqlextConnectionManager  # noqa: F401
from dbt.adapters.sqlext.credentials import SqlextCredentials
from dbt.adapters.sqlext.impl import SqlextAdapter
from dbt.adapters.sqlext.relation import SqlextRelation  # noqa: F401
from dbt.include import sqlext

Plugin = AdapterPlugin(
    adapter=SqlextAdapter,  # type: ignore[arg-type]
    credentials=SqlextCredentials,
    include_path=sqlext.PACKAGE_PATH,
    project_name="dbt_sqlext",     # dbt_project.yml's name (dbt would derive the same from the folder)
    dependencies=["spark"],
)
