"""What differs between pyspark lines and sessions for sqlext's streaming, without Spark: the
source's refusal of admission-control options on pyspark 4.0/4.1 (their Python data sources have
none), and the sink's query id read from the checkpoint (Spark Connect's foreachBatch worker has
no stream thread to ask)."""

from __future__ import annotations

import json

import pytest

from sqlext.engine.streaming.sink import checkpoint_query_id
from sqlext.engine.streaming.source import require_admission_control
from sqlext.errors import SqlextError, UnsupportedOperationError


@pytest.mark.parametrize("version", ["4.0.5", "4.1.4", "4.1.0-preview1"])
@pytest.mark.parametrize("option", ["maxFilesPerTrigger", "maxBytesPerTrigger"])
def test_admission_options_refused_before_4_2(version, option):
    with pytest.raises(UnsupportedOperationError) as caught:
        require_admission_control(version, {option.lower(): "2", "startingversion": "0"}, "/t")
    message = str(caught.value)
    assert f"option {option} needs pyspark 4.2 or later" in message
    assert f"Spark {version}" in message and "/t" in message and "pip install" in message
    assert caught.value.table == "/t"


@pytest.mark.parametrize("version", ["4.2.1", "4.3.0", "5.0.0"])
def test_admission_options_taken_from_4_2(version):
    require_admission_control(version, {"maxfilespertrigger": "2", "maxbytespertrigger": "1g"})


def test_other_options_taken_on_every_line():
    require_admission_control("4.0.5", {"startingversion": "1", "ignoredeletes": "true"})


def test_query_id_from_the_checkpoint(tmp_path):
    (tmp_path / "metadata").write_text(json.dumps({"id": "8c2a0c57-query"}))
    assert checkpoint_query_id(str(tmp_path)) == "8c2a0c57-query"
    assert checkpoint_query_id(f"file://{tmp_path}/") == "8c2a0c57-query"
    with pytest.raises(SqlextError, match="no streaming query id in the checkpoint"):
        checkpoint_query_id(str(tmp_path / "missing"))
