"""``schemaTrackingLocation`` on sqlext's Delta stream source (issue 28,
:mod:`sqlext.engine.streaming.schema_log`): the ``ckpt_<hash>`` setting the error names
unblocks only its own stream, for the version it names; an added column stops the stream once
(the log records it) and needs no setting to go on (a setting is needed while the log's last two
entries are a rename, as in delta-spark, which compares them at each start). delta-spark's outcomes for a rename and a
drop: tests/deltaspark/test_deltaspark_streaming_schema_tracking.py."""

from __future__ import annotations

import json
import re

import pytest
from pyspark.errors import StreamingQueryException

from sqlext.engine.streaming.schema_log import checkpoint_hash
from tests.support.streaming_lines import ADMISSION_CONTROL

pytestmark = pytest.mark.skipif(not ADMISSION_CONTROL,
                                reason="schemaTrackingLocation needs pyspark 4.2+")
PREFIX = "spark.databricks.delta.streaming."


def test_checkpoint_hash_is_java_string_hash_code():
    # delta-spark 4.4 named ckpt_-177171769 for this path (measured)
    assert checkpoint_hash("file:/tmp/h8/probe/ck/sources/0") == -177171769
    assert checkpoint_hash("") == 0


def test_widened_types_match_columns_by_mapping_id_else_name():
    from sqlext.engine.streaming.schema_changes import widened_types

    def schema(*fields):
        return json.dumps({"type": "struct", "fields": [
            {"name": n, "type": t, "nullable": True, "metadata": m} for n, t, m in fields]})
    before = schema(("id", "integer", {}), ("d", "decimal(5,2)", {}),
                    ("s", {"type": "struct", "fields": [
                        {"name": "f", "type": "short", "nullable": True, "metadata": {}}]}, {}))
    after = schema(("id", "long", {}), ("d", "decimal(7,2)", {}),
                   ("s", {"type": "struct", "fields": [
                       {"name": "f", "type": "integer", "nullable": True, "metadata": {}}]}, {}))
    assert widened_types(before, after) == [(("id",), "INT", "BIGINT"),
                                            (("d",), "DECIMAL(5,2)", "DECIMAL(7,2)"),
                                            (("s", "f"), "SMALLINT", "INT")]
    assert widened_types(before, before) == []
    # column mapping: a renamed column is the same column (its id), its new type a widening
    mapped = schema(("a", "integer", {"delta.columnMapping.id": 1}))
    renamed = schema(("b", "long", {"delta.columnMapping.id": 1}))
    assert widened_types(mapped, renamed) == [(("a",), "INT", "BIGINT")]
    # named by its physical name where it has one, as delta-spark's error does
    physical = {"delta.columnMapping.id": 1, "delta.columnMapping.physicalName": "col-1"}
    assert widened_types(schema(("a", "integer", physical)), schema(("b", "long", physical))) \
        == [(("col-1",), "INT", "BIGINT")]


def _run(spark, table, ck, **options):
    """One Trigger.AvailableNow run; (batches as (id, columns, sorted ids), error or None)."""
    seen = []
    reader = spark.readStream.format("delta").option("schemaTrackingLocation", ck + "/schemas")
    for key, value in options.items():
        reader = reader.option(key, value)
    query = (reader.load(table).writeStream
             .foreachBatch(lambda df, i: seen.append((i, df.columns,
                                                      sorted(r.id for r in df.collect()))))
             .option("checkpointLocation", ck).trigger(availableNow=True).start())
    try:
        query.awaitTermination()
    except StreamingQueryException as exc:
        return seen, str(exc)
    return seen, None


def _condition(error):
    return re.findall(r"\[(DELTA_[A-Z_]+)\]", error or "")[:1]


def test_checkpoint_setting_unblocks_its_stream_and_version(drop_in, tmp_path):
    spark, table = drop_in, str(tmp_path / "t")
    ck, other = str(tmp_path / "ck"), str(tmp_path / "other")
    spark.sql(f"CREATE TABLE delta.`{table}` (id long, a string) USING delta "
              "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    spark.sql(f"INSERT INTO delta.`{table}` VALUES (1, 'x')")
    for c in (ck, other):
        assert _run(spark, table, c) == ([(0, ["id", "a"], [1])], None)
    spark.sql(f"ALTER TABLE delta.`{table}` RENAME COLUMN a TO b")          # v2
    spark.sql(f"INSERT INTO delta.`{table}` VALUES (2, 'y')")
    for c in (ck, other):
        _, error = _run(spark, table, c)
        assert _condition(error) == ["DELTA_STREAMING_METADATA_EVOLUTION"]
    _, error = _run(spark, table, ck)
    assert _condition(error) == \
        ["DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION"]
    key = re.search(r"SET (\S+\.ckpt_-?\d+) = 2;", error).group(1)
    # delta-spark's hash: of the checkpoint's source path, not of the tracking location
    assert key == f"{PREFIX}allowSourceColumnRename.ckpt_{checkpoint_hash(f'file:{ck}/sources/0')}"
    spark.conf.set(key, "1")                    # another version: still blocked
    try:
        assert _condition(_run(spark, table, ck)[1]) == \
            ["DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION"]
        spark.conf.set(key, "2")
        batches, error = _run(spark, table, ck)
        assert error is None and batches[-1] == (batches[-1][0], ["id", "b"], [2])
        # the other stream has its own hash: still blocked, until its reader option
        assert _condition(_run(spark, table, other)[1]) == \
            ["DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION"]
        batches, error = _run(spark, table, other, allowSourceColumnRename="2")
        assert error is None and [b[2] for b in batches if b[2]] == [[2]]
        # an added column: one stop, recorded (the rename is still the log's last change)
        spark.sql(f"ALTER TABLE delta.`{table}` ADD COLUMNS (c int)")
        spark.sql(f"INSERT INTO delta.`{table}` VALUES (3, 'z', 7)")
        _, error = _run(spark, table, ck)
        assert _condition(error) == ["DELTA_STREAMING_METADATA_EVOLUTION"]
    finally:
        spark.conf.unset(key)
    # the log's last change is additive: on without any setting
    batches, error = _run(spark, table, ck)
    assert error is None
    assert [(cols, ids) for _, cols, ids in batches if ids] == [(["id", "b", "c"], [3])]


def test_schema_log_refused_before_pyspark_4_2_names_the_option():
    from sqlext.engine.streaming.schema_log import require_tracking_support
    from sqlext.errors import UnsupportedOperationError
    with pytest.raises(UnsupportedOperationError, match="schemaTrackingLocation needs pyspark"):
        require_tracking_support({"schematrackinglocation": "/ck/s"}, "/t")
    require_tracking_support({}, "/t")      # no option: nothing to refuse
