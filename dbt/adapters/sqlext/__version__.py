"""The adapter's version: the sqlext package's (pyproject.toml, read from its metadata)."""

from sqlext.version import VERSION as version  # noqa: F401  (dbt reads ``version``)
