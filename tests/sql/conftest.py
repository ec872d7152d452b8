"""Fixtures of the SQL tests."""

from __future__ import annotations

import hashlib

import pytest

from sqlext.catalog import Catalog


@pytest.fixture
def schema(spark, request):
    """A fresh schema named after the test (a hash of its id), current while the test runs."""
    name = "sq_" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:12]
    Catalog(spark).create_schema(name)
    spark.catalog.setCurrentDatabase(name)
    yield name
    spark.catalog.setCurrentDatabase("default")
