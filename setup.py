"""Packages and the files sqlext puts at the top of site-packages (the rest of the metadata is in
pyproject.toml).

Packages: ``sqlext`` and its subpackages, and the dbt plugin in dbt's namespaces as dbt lays
plugins out, ``dbt/adapters/sqlext`` (the adapter) and ``dbt/include/sqlext`` (its macros,
``dbt_project.yml`` and ``profile_template.yml``); ``dbt/`` and ``dbt/adapters/`` have no
``__init__.py``: they are dbt-core's and dbt-adapters'.

:class:`build_sqlext_site` writes, for the wheel (``pip install .``) and for the editable install
(``pip install -e .``) alike:

- ``sqlext-delta.pth`` and ``_sqlext_delta_hook.py`` (a copy of ``sqlext/delta_hook.py``):
  ``import delta`` serves delta-spark's names from sqlext where delta-spark is not installed;
- for the editable install only, ``dbt/adapters/sqlext/__init__.py`` and ``__version__.py``:
  dbt lists plugins (``dbt --version``, ``dbt init``) by the folders holding a ``__version__.py``
  in the very directory of dbt-adapters' ``dbt/adapters`` package, where an editable install
  otherwise puts nothing; this ``__init__`` loads the source checkout's package in its place.

In an editable install these copies are made at install time: after changing
``sqlext/delta_hook.py``, run ``pip install -e .`` again.
"""

from pathlib import Path

from setuptools import Command, find_packages, setup
from setuptools.command.build import build

ROOT = Path(__file__).resolve().parent
DBT_PACKAGES = ["dbt.adapters.sqlext", "dbt.include.sqlext"]
DELTA_HOOK_SOURCE = "sqlext/delta_hook.py"
DELTA_HOOK_MODULE = "_sqlext_delta_hook"
DELTA_PTH = "sqlext-delta.pth"

EDITABLE_PLUGIN_INIT = '''"""sqlext's dbt plugin, installed in development mode (pip install -e): dbt finds plugins by the
folders here, so this one stands here; the package loaded in its place is the source checkout's,
{source!r}."""

import importlib.util as _util
import sys as _sys

_SOURCE = {source!r}
_spec = _util.spec_from_file_location(__name__, _SOURCE + "/__init__.py",
                                      submodule_search_locations=[_SOURCE])
_module = _util.module_from_spec(_spec)
_sys.modules[__name__] = _module
_spec.loader.exec_module(_module)
'''


class build_sqlext_site(Command):
    """Files for the top of site-packages (see the module docstring). In a wheel build they go to
    ``build_lib``, which becomes the wheel; in an editable build, which builds nothing into the
    wheel from ``build_lib``, to the ``install`` command's ``install_lib``: setuptools points it
    at the editable wheel's own folder, whose every file the wheel gets."""

    description = "write sqlext's .pth hook (and, editable, the dbt plugin's folder)"
    user_options = []

    def initialize_options(self):
        self.build_lib = None
        self.editable_mode = False      # set by setuptools' editable_wheel

    def finalize_options(self):
        self.set_undefined_options("build", ("build_lib", "build_lib"))

    def run(self):
        for path, text in self.files().items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    def get_outputs(self):
        return [] if self.editable_mode else [str(p) for p in self.files()]

    def files(self) -> dict:
        """``{path: text}`` of the files to write."""
        if self.editable_mode:
            target = Path(self.get_finalized_command("install").install_lib)
        else:
            target = Path(self.build_lib)
        files = {
            DELTA_PTH: f"import {DELTA_HOOK_MODULE}; {DELTA_HOOK_MODULE}.install()\n",
            f"{DELTA_HOOK_MODULE}.py": (ROOT / DELTA_HOOK_SOURCE).read_text(),
        }
        if self.editable_mode:
            source = ROOT / "dbt" / "adapters" / "sqlext"
            files["dbt/adapters/sqlext/__init__.py"] = EDITABLE_PLUGIN_INIT.format(
                source=str(source))
            files["dbt/adapters/sqlext/__version__.py"] = (source / "__version__.py").read_text()
        return {target / name: text for name, text in files.items()}


class build_with_site(build):
    sub_commands = build.sub_commands + [("build_sqlext_site", None)]


setup(
    packages=find_packages(include=["sqlext", "sqlext.*"]) + DBT_PACKAGES,
    package_data={"dbt.include.sqlext": ["dbt_project.yml", "profile_template.yml", "*/*.sql",
                                        "*/*/*.sql"]},
    include_package_data=False,
    cmdclass={"build": build_with_site, "build_sqlext_site": build_sqlext_site},
)
