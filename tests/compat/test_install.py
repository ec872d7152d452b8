"""sqlext installed by pip into a new virtualenv, editable (``pip install -e .``) and from its
wheel (``pip install .``): dbt lists the plugin (``dbt --version``, the same scan ``dbt init``
offers adapters from), and ``import delta`` serves sqlext's names through the ``.pth`` hook;
``pip uninstall`` takes both away.

To stay within a couple of minutes the new virtualenv gets, by pip with ``--no-deps``, sqlext
and the three distributions that make up dbt's ``dbt/`` folder (dbt-core, dbt-adapters,
dbt-spark, at the versions of this interpreter's), while every other dependency (pyspark,
sqlglot, dbt-common, ...) is read from this interpreter's site-packages through a path ``.pth``
(a plain directory entry: that directory's own ``.pth`` files do not run there).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DBT_DISTRIBUTIONS = ("dbt-core", "dbt-adapters", "dbt-spark")   # the ones with files in dbt/
DEPENDENCIES_PTH = "zz-test-dependencies.pth"


def run(args, **kwargs) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "SQLEXT_DELTA_COMPAT")}
    env.update(DBT_SEND_ANONYMOUS_USAGE_STATS="false", PIP_DISABLE_PIP_VERSION_CHECK="1")
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env,
                            timeout=300, **kwargs)
    assert result.returncode == 0, f"{args}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


class Venv:
    def __init__(self, root: Path):
        self.root = root
        run([sys.executable, "-m", "venv", "--without-pip", root])
        self.python = root / "bin" / "python"
        self.site = Path(run([self.python, "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())

    def pip(self, *args) -> str:
        """pip on the new virtualenv, which it sees without this interpreter's packages."""
        deps = self.site / DEPENDENCIES_PTH
        saved = deps.read_text() if deps.exists() else None
        deps.unlink(missing_ok=True)
        try:
            return run([sys.executable, "-m", "pip", "--python", self.python, *args],
                       cwd=self.root)
        finally:
            if saved is not None:
                deps.write_text(saved)

    def plugins(self) -> list[str]:
        """The plugin names ``dbt --version`` lists."""
        out = run([self.root / "bin" / "dbt", "--version"], cwd=self.root)
        listed = out.split("Plugins:", 1)[1] if "Plugins:" in out else ""
        return re.findall(r"^\s+- (\w+):", listed, flags=re.M)

    def delta_table_class(self) -> str:
        return run([self.python, "-c", "from delta.tables import DeltaTable; "
                    "print(DeltaTable.__module__ + '.' + DeltaTable.__qualname__)"],
                   cwd=self.root).strip()

    def sqlext_files(self) -> set[str]:
        """The files pip recorded for sqlext (its RECORD)."""
        out = run([self.python, "-c", "import importlib.metadata as m; "
                   "print('\\n'.join(str(f) for f in m.distribution('sqlext').files))"],
                  cwd=self.root)
        return set(out.split())

    def imports_delta(self) -> bool:
        result = subprocess.run([str(self.python), "-c", "import delta"], capture_output=True,
                                cwd=self.root, env={"PATH": os.environ.get("PATH", "")})
        return result.returncode == 0


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    env = Venv(tmp_path_factory.mktemp("install") / "venv")
    ours = sysconfig.get_paths()["purelib"]
    (env.site / DEPENDENCIES_PTH).write_text(ours + "\n")
    pins = [f"{d}=={importlib.metadata.version(d)}" for d in DBT_DISTRIBUTIONS]
    env.pip("install", "--no-deps", "--quiet", *pins)
    assert "spark" in env.plugins()
    return env


def test_editable_install_registers_the_dbt_plugin_and_the_delta_hook(venv):
    venv.pip("install", "--no-deps", "--quiet", "-e", REPO)
    try:
        assert "sqlext" in venv.plugins()
        assert (venv.site / "dbt" / "adapters" / "sqlext" / "__version__.py").is_file()
        source = run([venv.python, "-c", "import dbt.adapters.sqlext as a, dbt.include.sqlext as i;"
                      " print(a.__file__); print(i.PACKAGE_PATH)"], cwd=venv.root).split()
        assert source == [str(REPO / "dbt" / "adapters" / "sqlext" / "__init__.py"),
                          str(REPO / "dbt" / "include" / "sqlext")]
        assert venv.delta_table_class() == "sqlext.tables.DeltaTable"
        files = venv.sqlext_files()
        assert {"sqlext-delta.pth", "_sqlext_delta_hook.py"} <= files
        assert not files & {"dbt/__init__.py", "dbt/adapters/__init__.py", "dbt/include/__init__.py"}
    finally:
        venv.pip("uninstall", "--yes", "--quiet", "sqlext")
    assert "sqlext" not in venv.plugins()
    assert not (venv.site / "dbt" / "adapters" / "sqlext").exists()
    assert not venv.imports_delta()


def test_wheel_install_registers_the_dbt_plugin_and_the_delta_hook(venv, tmp_path):
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", tmp_path, REPO],
        cwd=tmp_path)
    wheel, = tmp_path.glob("sqlext-*.whl")
    venv.pip("install", "--no-deps", "--quiet", wheel)
    try:
        assert "sqlext" in venv.plugins()
        package = venv.site / "dbt" / "adapters" / "sqlext"
        assert (package / "impl.py").is_file()
        assert (venv.site / "dbt" / "include" / "sqlext" / "materializations" / "table.sql").is_file()
        assert venv.delta_table_class() == "sqlext.tables.DeltaTable"
        files = venv.sqlext_files()
        assert {"sqlext-delta.pth", "_sqlext_delta_hook.py"} <= files
        assert not files & {"dbt/__init__.py", "dbt/adapters/__init__.py", "dbt/include/__init__.py"}
    finally:
        venv.pip("uninstall", "--yes", "--quiet", "sqlext")
    assert "sqlext" not in venv.plugins()
    assert not venv.imports_delta()
