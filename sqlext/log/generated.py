"""Generated and identity columns as the Delta protocol records them in a table's schema (Delta
PROTOCOL.md, "Generated Columns" and "Identity Columns"); no Spark here.

- A generated column's field metadata holds ``delta.generationExpression``, a Spark SQL
  expression over the row's other columns (writer feature ``generatedColumns``, writer 4).
- An identity column's holds ``delta.identity.start``, ``delta.identity.step``,
  ``delta.identity.allowExplicitInsert`` (BY DEFAULT when true, ALWAYS when false) and, once a
  value was generated, ``delta.identity.highWaterMark`` (writer feature ``identityColumns``,
  writer 6). Generated values are ``start + k * step`` (``k`` >= 0), beyond the high-water
  mark in the direction of ``step``; the commit that generates them records the new mark.

Only top-level columns can be generated or identity columns (as in delta-spark).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

GENERATION_EXPRESSION = "delta.generationExpression"
IDENTITY_PREFIX = "delta.identity."
IDENTITY_START = "delta.identity.start"
IDENTITY_STEP = "delta.identity.step"
IDENTITY_HIGH_WATER_MARK = "delta.identity.highWaterMark"
IDENTITY_ALLOW_EXPLICIT_INSERT = "delta.identity.allowExplicitInsert"

LONG_MIN, LONG_MAX = -(2 ** 63), 2 ** 63 - 1


@dataclass(frozen=True)
class Identity:
    """An identity column's definition and its high-water mark (None: nothing generated yet)."""

    column: str
    start: int
    step: int
    high_water_mark: int | None
    allow_explicit_insert: bool

    @property
    def always(self) -> bool:
        """``GENERATED ALWAYS AS IDENTITY``: explicit values are refused."""
        return not self.allow_explicit_insert

    def first_free(self) -> int:
        """The first value ``start + k * step`` (``k`` >= 0) beyond the high-water mark."""
        if self.high_water_mark is None:
            return self.start
        k = max(0, (self.high_water_mark - self.start) // self.step + 1)
        return self.start + k * self.step

    def synced_mark(self, extreme: int | None) -> int | None:
        """The high-water mark ``SYNC IDENTITY`` leaves, given the column's largest value (its
        smallest for a negative step; None when it holds none), as delta-spark 4.4: the value
        rounded to the next ``start + k * step``, when that lies beyond both ``start`` and the
        current mark; otherwise the current mark (it never moves back)."""
        if extreme is None:
            return self.high_water_mark
        before_start = extreme < self.start if self.step > 0 else extreme > self.start
        k = -((self.start - extreme) // self.step)        # ceil((extreme - start) / step)
        mark = self.start + k * self.step
        if before_start or not self.beyond(mark):
            return self.high_water_mark
        return mark

    def beyond(self, value: int) -> bool:
        """Whether ``value`` lies beyond the high-water mark in the direction of ``step``."""
        if self.high_water_mark is None:
            return True
        return value > self.high_water_mark if self.step > 0 else value < self.high_water_mark


def _fields(schema_string: str) -> list[dict]:
    return list(json.loads(schema_string).get("fields") or [])


def generation_expressions(schema_string: str) -> dict[str, str]:
    """``{column: generation expression}`` of the table's generated columns, in schema order."""
    return {f["name"]: str(f["metadata"][GENERATION_EXPRESSION])
            for f in _fields(schema_string)
            if GENERATION_EXPRESSION in (f.get("metadata") or {})}


def identity_columns(schema_string: str) -> dict[str, Identity]:
    """``{column: Identity}`` of the table's identity columns, in schema order."""
    out = {}
    for f in _fields(schema_string):
        meta = f.get("metadata") or {}
        if IDENTITY_START not in meta and IDENTITY_STEP not in meta:
            continue
        mark = meta.get(IDENTITY_HIGH_WATER_MARK)
        out[f["name"]] = Identity(f["name"], int(meta.get(IDENTITY_START, 1)),
                                  int(meta.get(IDENTITY_STEP, 1)),
                                  None if mark is None else int(mark),
                                  str(meta.get(IDENTITY_ALLOW_EXPLICIT_INSERT, False)).lower()
                                  == "true")
    return out


def identity_metadata(start: int, step: int, allow_explicit_insert: bool) -> dict:
    """The field metadata of a new identity column (no high-water mark yet)."""
    if step == 0:
        raise ValueError("an identity column's step (INCREMENT BY) cannot be 0")
    return {IDENTITY_START: int(start), IDENTITY_STEP: int(step),
            IDENTITY_ALLOW_EXPLICIT_INSERT: bool(allow_explicit_insert)}


def with_high_water_marks(schema_string: str, marks: dict[str, int]) -> str:
    """``schema_string`` with ``delta.identity.highWaterMark`` of the columns in ``marks`` set
    (other fields, and the rest of the schema, unchanged)."""
    schema = json.loads(schema_string)
    for f in schema.get("fields") or []:
        if f["name"] in marks:
            f["metadata"] = {**(f.get("metadata") or {}),
                             IDENTITY_HIGH_WATER_MARK: int(marks[f["name"]])}
    return json.dumps(schema, separators=(",", ":"))


def schema_features(schema_string: str) -> set[str]:
    """The writer features a schema uses: ``generatedColumns``, ``identityColumns``."""
    features = set()
    if generation_expressions(schema_string):
        features.add("generatedColumns")
    if identity_columns(schema_string):
        features.add("identityColumns")
    return features
