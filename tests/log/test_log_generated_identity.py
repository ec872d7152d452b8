"""The kernel side of generated and identity columns: field metadata read and written, the
first free identity value, and the protocol a schema with them needs (no Spark)."""

from __future__ import annotations

import json

from sqlext.log.actions import Protocol
from sqlext.log.generated import (Identity, generation_expressions, identity_columns,
                                  identity_metadata, schema_features, with_high_water_marks)
from sqlext.log.protocol import (check_writable, protocol_for_new_table,
                                 upgrade_for_configuration)


def _schema(*fields) -> str:
    return json.dumps({"type": "struct", "fields": [
        {"name": n, "type": t, "nullable": True, "metadata": m} for n, t, m in fields]})


SCHEMA = _schema(("id", "long", identity_metadata(10, -3, False)), ("a", "integer", {}),
                 ("b", "integer", {"delta.generationExpression": "a + 1"}))


def test_metadata_round_trip():
    assert generation_expressions(SCHEMA) == {"b": "a + 1"}
    (ident,) = identity_columns(SCHEMA).values()
    assert ident == Identity("id", 10, -3, None, False) and ident.always
    marked = with_high_water_marks(SCHEMA, {"id": 4})
    assert identity_columns(marked)["id"].high_water_mark == 4
    assert generation_expressions(marked) == {"b": "a + 1"}
    assert schema_features(SCHEMA) == {"generatedColumns", "identityColumns"}


def test_first_free_value_follows_start_step_and_mark():
    assert Identity("i", 10, -3, None, False).first_free() == 10
    assert Identity("i", 10, -3, 4, False).first_free() == 1
    assert Identity("i", 1, 5, 12, True).first_free() == 16          # mark off the grid
    assert Identity("i", 100, 10, 5, True).first_free() == 100       # mark before start
    assert Identity("i", 1, 1, 7, False).beyond(8) and not Identity("i", 1, 1, 7, False).beyond(7)
    assert Identity("i", 1, -1, -7, False).beyond(-8)


def test_sync_identity_mark():
    """SYNC IDENTITY's new mark, as delta-spark 4.4 leaves it (tests/deltaspark compares the
    same cases): the extreme value rounded to start + k*step, only forward, not before start."""
    def mark(start, step, high, extreme):
        return Identity("id", start, step, high, True).synced_mark(extreme)

    assert mark(1, 1, 3, 10) == 10
    assert mark(1, 1, 10, 3) == 10                  # never moves back
    assert mark(0, 5, 5, 12) == 15                  # rounded up to the step's grid
    assert mark(0, 5, 5, 10) == 10
    assert mark(-1, -2, -3, -10) == -11             # negative step: the smallest value
    assert mark(-1, -2, -3, -9) == -9
    assert mark(100, 1, None, 50) is None           # before the start: no mark
    assert mark(100, 1, None, 150) == 150
    assert mark(1, 1, None, None) is None           # no values
    assert mark(1, 1, 2, 2) == 2


def test_protocol_of_tables_with_generated_and_identity_columns():
    only_generated = _schema(("a", "integer", {}),
                             ("b", "integer", {"delta.generationExpression": "a + 1"}))
    assert protocol_for_new_table({}, only_generated) == Protocol(1, 4)
    assert protocol_for_new_table({}, SCHEMA) == Protocol(1, 6)
    dv = protocol_for_new_table({"delta.enableDeletionVectors": "true"}, SCHEMA)
    assert dv.min_writer_version == 7
    assert {"generatedColumns", "identityColumns"} <= set(dv.writer_features)
    assert upgrade_for_configuration(Protocol(1, 2), {}, SCHEMA) == Protocol(1, 6)
    assert upgrade_for_configuration(Protocol(1, 6), {}, SCHEMA) is None
    for protocol in (Protocol(1, 6), dv):
        check_writable("t", 0, protocol, None)       # no refusal
