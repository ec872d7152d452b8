"""Where sqlext keeps the views whose queries read sqlext tables.

Such a view cannot be a Spark view: Spark would freeze the files of the snapshot it was created
on. sqlext stores the view's query instead (as SQL in the ``sqlext`` dialect, rendered from its
tree) and expands it wherever the view is referenced, so a query of the view reads the tables'
current data. Temporary views live as long as their SparkSession; persistent views are files in
sqlext's catalog (``<warehouse>/_sqlext_catalog/<schema>/_views/<view>.json``), so any new
SparkSession on the same warehouse sees them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from pyspark.sql import SparkSession

from sqlext.catalog.registry import CATALOG_DIR, Catalog
from sqlext.engine.session import session_constant

VIEWS_DIR = "_views"


@dataclass(frozen=True)
class ViewDef:
    """A view: its name, its query (``sqlext`` dialect SQL) and optional column names."""

    name: str
    query: str
    schema: str | None = None          # None for a temporary view
    columns: tuple[str, ...] | None = None
    comment: str | None = None
    column_comments: tuple[str | None, ...] | None = None   # one per column, as ``columns``

    @property
    def temporary(self) -> bool:
        return self.schema is None

    @property
    def display(self) -> str:
        return self.name if self.temporary else f"{self.schema}.{self.name}"


def _session_key(spark: SparkSession) -> str:
    if hasattr(spark, "session_id"):    # Spark Connect: the server's session id
        return str(spark.session_id)
    return session_constant(spark, "session_key", lambda: _jvm_session_key(spark))


def _jvm_session_key(spark: SparkSession) -> str:
    try:
        return str(spark._jsparkSession.sessionUUID())
    except Exception:  # noqa: BLE001 - older Spark: one registry per Python session object
        return str(id(spark))


class TemporaryViews:
    """The temporary views of every SparkSession of this process, by session.

    A temporary view lives as long as its session; :meth:`clear` forgets all of them (tests that
    start over, or a process that stops its sessions).
    """

    def __init__(self):
        self._by_session: dict[str, dict[str, ViewDef]] = {}

    def of_session(self, spark: SparkSession) -> dict[str, ViewDef]:
        """The mutable name -> view map of ``spark``'s temporary views."""
        return self._by_session.setdefault(_session_key(spark), {})

    def clear(self) -> None:
        """Forget the temporary views of every session."""
        self._by_session.clear()


TEMPORARY_VIEWS = TemporaryViews()


class ViewStore:
    """The views of one SparkSession (temporary) and of its warehouse (persistent)."""

    def __init__(self, spark: SparkSession, catalog: Catalog,
                 temporary: TemporaryViews = TEMPORARY_VIEWS):
        self.catalog = catalog
        self._temporary = temporary.of_session(spark)

    def _path(self, schema: str, name: str | None = None) -> str:
        store = self.catalog.store
        base = store.join(self.catalog.warehouse, CATALOG_DIR, schema, VIEWS_DIR)
        return base if name is None else store.join(base, f"{name}.json")

    # --- temporary ------------------------------------------------------------------------------

    def temporary(self, name: str) -> ViewDef | None:
        return self._temporary.get(name.lower())

    def temporary_views(self) -> list[ViewDef]:
        return sorted(self._temporary.values(), key=lambda v: v.name)

    # --- persistent -----------------------------------------------------------------------------

    def persistent(self, schema: str, name: str) -> ViewDef | None:
        try:
            data = json.loads(self.catalog.store.read(self._path(schema, name)))
        except FileNotFoundError:
            return None
        columns, comments = data.get("columns"), data.get("column_comments")
        return ViewDef(data["name"], data["query"], data["schema"],
                       tuple(columns) if columns is not None else None, data.get("comment"),
                       tuple(comments) if comments is not None else None)

    def persistent_views(self, schema: str) -> list[str]:
        try:
            entries = self.catalog.store.list_dir(self._path(schema))
        except FileNotFoundError:
            return []
        return sorted(e.name[:-5] for e in entries if e.name.endswith(".json") and not e.is_dir)

    # --- changes --------------------------------------------------------------------------------

    def put(self, view: ViewDef) -> None:
        """Store (or replace) a view."""
        if view.temporary:
            self._temporary[view.name.lower()] = view
            return
        store = self.catalog.store
        store.mkdirs(self._path(view.schema))
        data = asdict(view)
        data["columns"] = list(view.columns) if view.columns is not None else None
        if view.column_comments is not None:
            data["column_comments"] = list(view.column_comments)
        store.write(self._path(view.schema, view.name), json.dumps(data).encode())

    def drop(self, view: ViewDef) -> None:
        if view.temporary:
            self._temporary.pop(view.name.lower(), None)
        else:
            self.catalog.store.delete(self._path(view.schema, view.name))
