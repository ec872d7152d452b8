"""Every maintenance test starts and ends with the kernel's per-process caches empty, as a new
process would (tests here change logs behind the kernel's back: aged mtimes, deleted commits)."""

from __future__ import annotations

import pytest

from tests.log.kit import clear_caches


@pytest.fixture(autouse=True)
def _fresh_kernel_caches():
    clear_caches()
    yield
    clear_caches()
