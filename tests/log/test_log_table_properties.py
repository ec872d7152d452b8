"""sqlext.log.table_properties: each honoured ``delta.*`` key parsed one way, with its default,
and the readers that used to parse inline (snapshot, retention, column mapping, checkpoints)
answer through it."""

from __future__ import annotations

import pytest

from sqlext.log import table_properties as props
from sqlext.log.column_mapping import mapping_mode
from sqlext.log.retention import deleted_file_retention_ms, log_retention_ms
from sqlext.log.table import DeltaLog
from tests.support.kernel_tables import create_table

DAY_MS = 86_400_000


def test_defaults_of_an_empty_configuration():
    typed = props.TableProperties({})
    assert typed.change_data_feed is False and typed.deletion_vectors is False
    assert typed.column_mapping_mode == "none" and typed.checkpoint_interval == 10
    assert typed.deleted_file_retention_ms == 7 * DAY_MS
    assert typed.log_retention_ms == 30 * DAY_MS
    assert typed.expired_log_cleanup is True and typed.isolation_level is None


@pytest.mark.parametrize("text, value", [("true", True), (" TRUE ", True), ("True", True),
                                         ("false", False), ("yes", False), ("", False)])
def test_booleans_are_true_only_when_they_say_true(text, value):
    assert props.CHANGE_DATA_FEED.of({"delta.enableChangeDataFeed": text}) is value
    assert props.TableProperties({"delta.appendOnly": text}).append_only is value


def test_modes_intervals_and_numbers():
    conf = {"delta.columnMapping.mode": " Name ", "delta.logRetentionDuration": "interval 2 days",
            "delta.deletedFileRetentionDuration": "168 hours",
            "delta.checkpointInterval": "0", "delta.columnMapping.maxColumnId": "7"}
    typed = props.TableProperties(conf)
    assert typed.column_mapping_mode == "name" and typed.column_mapping_max_id == 7
    assert typed.log_retention_ms == 2 * DAY_MS and typed.deleted_file_retention_ms == 7 * DAY_MS
    assert typed.checkpoint_interval == 1                      # at least one
    assert props.COLUMN_MAPPING_MODE.of({"delta.columnMapping.mode": ""}) == "none"


def test_a_bad_value_raises_unless_the_property_is_lenient():
    assert props.CHECKPOINT_INTERVAL.of({"delta.checkpointInterval": "often"}) == 10
    with pytest.raises(ValueError, match="not an interval"):
        props.LOG_RETENTION_MS.of({"delta.logRetentionDuration": "forever"})
    with pytest.raises(AttributeError):
        props.TableProperties({}).no_such_property


def test_every_property_is_listed_by_its_key():
    assert props.PROPERTIES["delta.enableChangeDataFeed"] is props.CHANGE_DATA_FEED
    assert all(key.startswith("delta.") for key in props.PROPERTIES)
    assert len(props.PROPERTIES) == len({p.key for p in props.PROPERTIES.values()})


def test_readers_of_a_table_answer_through_the_properties(tmp_path):
    log = create_table(tmp_path / "t", configuration={
        "delta.enableChangeDataFeed": " true", "delta.checkpointInterval": "3",
        "delta.logRetentionDuration": "interval 1 day",
        "delta.deletedFileRetentionDuration": "interval 2 days"})
    snapshot = DeltaLog(log.location).snapshot()
    assert snapshot.change_data_feed_enabled and snapshot.properties.change_data_feed
    assert log.checkpoint_interval(snapshot) == 3
    assert log_retention_ms(snapshot) == DAY_MS and deleted_file_retention_ms(snapshot) == 2 * DAY_MS
    assert mapping_mode(snapshot.metadata) == "none"
