"""``import delta`` on sqlext (sqlext/delta_compat, served by sqlext/delta_hook.py through the
``sqlext-delta.pth`` that sqlext's install puts in site-packages): delta-spark's names are
sqlext's classes; ``configure_spark_with_delta_pip`` makes a sqlext session from a delta-spark
script's builder; and anything else named ``delta`` always wins over the hook. Import-hook
behaviour is checked in subprocesses of this interpreter, whose site-packages has the hook."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import sqlext
import sqlext.errors
import sqlext.tables
from sqlext.delta_compat import pip_utils
from sqlext.drop_in import installed, uninstall
from sqlext.engine.dml.delete import delete
from sqlext.log.table import DeltaLog

pytestmark = pytest.mark.execution_paths("auto", "off")   # issue 30: driver path and Spark's

REPO = Path(__file__).resolve().parents[2]

# delta-spark 4.4's public names (its delta/__init__.py, delta/exceptions/__init__.py __all__)
DELTA_ALL = ["DeltaTable", "configure_spark_with_delta_pip", "__version__"]
DELTA_EXCEPTIONS = [
    "DeltaConcurrentModificationException", "ConcurrentWriteException",
    "MetadataChangedException", "ProtocolChangedException", "ConcurrentAppendException",
    "ConcurrentDeleteReadException", "ConcurrentDeleteDeleteException",
    "ConcurrentTransactionException",
]
DELTA_TABLES_CLASSES = ["DeltaTable", "DeltaMergeBuilder", "DeltaOptimizeBuilder",
                        "DeltaTableBuilder", "IdentityGenerator"]


def run_python(code: str, cwd=None, env=None, timeout=120) -> subprocess.CompletedProcess:
    """``code`` in a new process of this interpreter (its site-packages' .pth files run)."""
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",
                                                                   "SQLEXT_DELTA_COMPAT")}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd or REPO,
                          env=environment, capture_output=True, text=True, timeout=timeout)


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout


@pytest.fixture(scope="module")
def hook_installed():
    out = ok(run_python("import sys; print([getattr(f, '__name__', '') for f in sys.meta_path])"))
    if "DeltaOnSqlext" not in out:
        pytest.fail("sqlext's delta hook is not on sys.meta_path of a new interpreter: reinstall "
                    "sqlext (pip install -e .) so that site-packages has sqlext-delta.pth")


def test_delta_names_are_sqlexts(hook_installed):
    out = ok(run_python(f"""
        import sys
        import delta, delta.tables, delta.exceptions, delta.pip_utils, delta.version
        import sqlext.tables, sqlext.errors
        from delta.tables import DeltaTable
        assert DeltaTable is sqlext.tables.DeltaTable
        for name in {DELTA_TABLES_CLASSES!r}:
            assert getattr(delta.tables, name) is getattr(sqlext.tables, name), name
        star = {{}}
        exec("from delta import *", star)
        print(sorted(k for k in star if k != "__builtins__"))
        print(sorted(delta.exceptions.__all__))
        print(delta.__version__, delta.version.__version__)
        print(type(sys.modules["delta"].__spec__.loader).__name__)
    """))
    names, exceptions, version, _ = out.splitlines()
    assert names == str(sorted(DELTA_ALL))
    assert exceptions == str(sorted(DELTA_EXCEPTIONS))
    assert version == "4.4.0 4.4.0"


def test_delta_tables_star_import_binds_delta_sparks_names(hook_installed):
    # delta-spark's delta/tables.py has no __all__: `import *` also binds what it imports
    out = ok(run_python("""
        ns = {}
        exec("from delta.tables import *", ns)
        print(sorted(k for k in ns if k != "__builtins__"))
    """))
    names = set(eval(out))
    assert set(DELTA_TABLES_CLASSES) | {"Column", "DataFrame", "SparkSession", "functions",
                                        "StructType", "StructField", "DataType"} <= names


def test_exception_names_map_to_sqlexts_classes():
    from sqlext.delta_compat import exceptions
    for name in DELTA_EXCEPTIONS:
        cls = getattr(exceptions, name)
        assert issubclass(cls, sqlext.errors.ConcurrentModificationException), name
    for name in ("ConcurrentAppendException", "ConcurrentDeleteReadException",
                 "ConcurrentDeleteDeleteException", "MetadataChangedException",
                 "ProtocolChangedException", "ConcurrentTransactionException"):
        assert getattr(exceptions, name) is getattr(sqlext.errors, name)
    assert exceptions.DeltaConcurrentModificationException is \
        sqlext.errors.ConcurrentModificationException


def test_concurrent_append_is_caught_by_delta_exceptions_name(spark, tmp_path):
    import delta.exceptions
    path = str(tmp_path / "t")
    rows = spark.createDataFrame([(i, i % 2) for i in range(6)], "id long, p long")
    sqlext.write(rows, path, partitionBy=["p"])
    log = DeltaLog(path)
    txn = log.start_transaction()
    sqlext.write(spark.createDataFrame([(100, 1)], "id long, p long"), path, mode="append")
    with pytest.raises(delta.exceptions.ConcurrentAppendException) as info:
        delete(spark, log, "id > 3 AND p = 1", txn=txn)
    assert isinstance(info.value, sqlext.errors.ConcurrentAppendException)
    with pytest.raises(delta.exceptions.DeltaConcurrentModificationException):
        raise info.value


def test_a_real_delta_package_wins(tmp_path, hook_installed):
    fake = tmp_path / "fake"
    (fake / "delta").mkdir(parents=True)
    (fake / "delta" / "__init__.py").write_text("WHO = 'fake'\n")
    out = ok(run_python("import delta; print(delta.WHO, delta.__file__)",
                        env={"PYTHONPATH": str(fake)}))
    assert out.split() == ["fake", str(fake / "delta" / "__init__.py")]


def test_a_module_named_delta_wins(tmp_path, hook_installed):
    (tmp_path / "delta.py").write_text("WHO = 'module'\n")
    out = ok(run_python("import delta; print(delta.WHO)", cwd=tmp_path,
                        env={"PYTHONPATH": str(tmp_path)}))
    assert out.strip() == "module"


def test_a_finder_put_after_the_hook_wins(hook_installed):
    out = ok(run_python("""
        import sys, types
        from importlib.machinery import ModuleSpec
        class Later:
            @classmethod
            def find_spec(cls, name, path=None, target=None):
                if name == "delta":
                    return ModuleSpec("delta", cls)
            @staticmethod
            def create_module(spec):
                return types.ModuleType("delta")
            @staticmethod
            def exec_module(module):
                module.WHO = "later finder"
        sys.meta_path.append(Later)
        import delta
        print(delta.WHO)
    """))
    assert out.strip() == "later finder"


def test_a_namespace_delta_keeps_its_modules_and_gets_the_missing_ones(tmp_path, hook_installed):
    # a folder named delta beside the script (a data folder, or a namespace package's portion):
    # Python makes a namespace package of it; its own modules win, delta.tables is still sqlext's
    (tmp_path / "delta").mkdir()
    (tmp_path / "delta" / "mine.py").write_text("WHO = 'mine'\n")
    out = ok(run_python("""
        import delta.mine
        from delta.tables import DeltaTable
        print(delta.mine.WHO, DeltaTable.__module__)
    """, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)}))
    assert out.split() == ["mine", "sqlext.tables"]


def test_the_hook_can_be_turned_off(hook_installed):
    result = run_python("import delta", env={"SQLEXT_DELTA_COMPAT": "0"})
    assert result.returncode != 0
    assert "No module named 'delta'" in result.stderr


def test_importing_nothing_named_delta_costs_nothing(hook_installed):
    out = ok(run_python("import sys; print(sorted(m for m in sys.modules if m.startswith(('sqlext', 'pyspark', 'delta'))))"))
    assert out.strip() == "[]"


def test_drop_delta_settings_keeps_other_extensions():
    options = {
        "spark.sql.extensions": "com.example.Ext, io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.app.name": "x",
    }
    dropped = pip_utils.drop_delta_settings(options)
    assert options == {"spark.sql.extensions": "com.example.Ext", "spark.app.name": "x"}
    assert set(dropped) == {"spark.sql.extensions", "spark.sql.catalog.spark_catalog"}
    options = {"spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
               "spark.sql.catalog.spark_catalog": "com.example.OtherCatalog"}
    pip_utils.drop_delta_settings(options)
    assert options == {"spark.sql.catalog.spark_catalog": "com.example.OtherCatalog"}


def test_configure_spark_with_delta_pip_refuses_what_delta_spark_refuses():
    with pytest.raises(TypeError, match="SparkSession builder"):
        pip_utils.configure_spark_with_delta_pip("not a builder")


def test_configure_spark_with_delta_pip_on_a_running_session(spark, caplog):
    was_installed = installed(spark)
    builder = (SparkSession.builder
               .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
               .config("spark.sql.catalog.spark_catalog",
                       "org.apache.spark.sql.delta.catalog.DeltaCatalog"))
    configured = pip_utils.configure_spark_with_delta_pip(builder, extra_packages=["a:b:1"])
    assert configured is builder
    assert builder._options["spark.jars.packages"] == "a:b:1"
    try:
        with caplog.at_level("INFO", logger="sqlext"):
            session = configured.getOrCreate()
        assert session is spark and installed(spark)
        assert "spark.sql.extensions" not in builder._options
        assert any("io.delta.sql.DeltaSparkSessionExtension" in r.getMessage()
                   for r in caplog.records)
    finally:
        if not was_installed:
            uninstall(spark)


QUICKSTART = """
    import logging, sys, tempfile
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    from delta import *
    from delta.tables import *
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import col, expr

    builder = SparkSession.builder.appName("quickstart").master("local[1]") \\
        .config("spark.ui.enabled", "false") \\
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension") \\
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    spark = configure_spark_with_delta_pip(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    path = tempfile.mkdtemp() + "/delta-table"

    spark.range(0, 5).write.format("delta").save(path)
    spark.range(5, 10).write.format("delta").mode("overwrite").save(path)
    table = DeltaTable.forPath(spark, path)
    table.update(condition=expr("id % 2 == 0"), set={"id": expr("id + 100")})
    table.delete(condition=expr("id % 2 == 0"))
    new = spark.range(0, 20)
    table.alias("old").merge(new.alias("new"), "old.id = new.id") \\
        .whenMatchedUpdate(set={"id": col("new.id")}) \\
        .whenNotMatchedInsert(values={"id": col("new.id")}).execute()
    print("rows", sorted(r.id for r in table.toDF().collect()))
    print("v0", sorted(r.id for r in spark.read.format("delta").option("versionAsOf", 0)
                                           .load(path).collect()))
    print("ops", [r.operation for r in table.history().orderBy("version").collect()])
    print("catalog", spark.conf.get("spark.sql.catalog.spark_catalog", "unset"))
    spark.stop()
"""


def test_a_delta_spark_quickstart_runs_unedited(tmp_path, hook_installed):
    result = run_python(QUICKSTART, cwd=tmp_path, timeout=300)
    out = ok(result)
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    assert eval(lines["rows"]) == list(range(20))
    assert eval(lines["v0"]) == [0, 1, 2, 3, 4]
    assert eval(lines["ops"]) == ["WRITE", "WRITE", "UPDATE", "DELETE", "MERGE"]
    assert lines["catalog"] == "unset"
    assert "left out spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension" in result.stderr
