"""Every maintenance test starts and ends with the kernel's per-process caches empty, as a new
process would (tests here change logs behind the kernel's back: aged mtimes, deleted commits)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fresh_kernel_caches(fresh_caches):
    """The suite's ``fresh_caches`` (tests/conftest.py) for every test of this directory."""
