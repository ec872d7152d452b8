"""Package layout (the rest of the metadata is in pyproject.toml).

``sqlext`` and its subpackages come from ``sqlext/``; the dbt plugin installs into dbt's
namespaces: ``dbt.adapters.sqlext`` from ``dbt_adapter/`` and ``dbt.include.sqlext`` (the macros
and their ``dbt_project.yml``) from ``macros/``.
"""

from setuptools import find_packages, setup

DBT_PACKAGES = {"dbt.adapters.sqlext": "dbt_adapter", "dbt.include.sqlext": "macros"}

setup(
    packages=find_packages(include=["sqlext", "sqlext.*"]) + list(DBT_PACKAGES),
    package_dir=DBT_PACKAGES,
    package_data={"dbt.include.sqlext": ["dbt_project.yml", "profile_template.yml", "*/*.sql",
                                        "*/*/*.sql"]},
    include_package_data=False,
)
