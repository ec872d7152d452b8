"""A resolved table: where it lives, and its name when it has one.

The catalog (:mod:`sqlext.catalog`) turns names into these; engine commands take them, so the
engine never resolves a name itself.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TableRef:
    """A resolved table: where it lives, and its name when it has one."""

    location: str
    schema: str | None = None
    name: str | None = None
    managed: bool = False

    @property
    def qualified_name(self) -> str | None:
        """``schema.table`` for a named table, else None."""
        return f"{self.schema}.{self.name}" if self.name else None

    @property
    def display(self) -> str:
        """How messages name the table: by name when it has one, else by location."""
        return f"`{self.schema}`.`{self.name}`" if self.name else self.location
