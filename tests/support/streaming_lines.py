"""What the running pyspark line's Python data sources give sqlext's Delta stream source:
admission control (``maxFilesPerTrigger``, ``maxBytesPerTrigger``) arrived in pyspark 4.2; on
4.0 and 4.1 sqlext refuses those options before the query starts."""

from __future__ import annotations

import re

import pyspark
import pytest

from sqlext.errors import UnsupportedOperationError


def has_admission_control(spark_version: str = pyspark.__version__) -> bool:
    """Whether Spark ``spark_version`` (default: this process's pyspark) has admission control
    for Python streaming sources (4.2 or later)."""
    return tuple(int(n) for n in re.findall(r"\d+", spark_version)[:2]) >= (4, 2)


#: this process's pyspark has admission control
ADMISSION_CONTROL = has_admission_control()
#: a reader option making each batch one file where the line can (else: one batch)
ONE_FILE_A_BATCH = {"maxFilesPerTrigger": 1} if ADMISSION_CONTROL else {}


def admission_refused(option: str):
    """``pytest.raises`` for sqlext's refusal of ``option`` on a line before pyspark 4.2."""
    return pytest.raises(UnsupportedOperationError,
                         match=f"option {option} needs pyspark 4.2 or later")
