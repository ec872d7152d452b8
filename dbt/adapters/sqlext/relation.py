"""Relations of ``type: sqlext``: dbt-spark's (``schema.identifier``, names matched
case-blind), rendered with the parts that are not plain identifiers backquoted: a seed file
``seed.with.dots.csv`` is the table ``schema.`seed.with.dots```."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbt.adapters.spark.relation import SparkRelation

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, eq=False, repr=False)
class SqlextRelation(SparkRelation):
    """A dbt relation on sqlext; tables sqlext lists carry ``is_delta=True``."""

    def _render_iterator(self):
        for key, part in super()._render_iterator():
            if part is not None and not _PLAIN.match(part) and not part.startswith("`"):
                part = "`{}`".format(part.replace("`", "``"))
            yield key, part
