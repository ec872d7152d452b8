"""The kernel's per-process caches, as one explicit object (:data:`LOG_CACHE`).

Commit files never change once written, so decoded commits are kept; the latest snapshot of each
table is kept so that the next read only replays newer commits. A table deleted and created
again at the same path gets new commit files: its identity (earliest commit version, size,
modification time, seen at the last listing) tells the caches not to answer for it with the old
table's commits. :meth:`LogCache.clear` forgets everything, as a new process would.
"""

from __future__ import annotations

import threading

from sqlext.log.actions import Action
from sqlext.log.snapshot import Snapshot


class LogCache:
    """Decoded commits per (location, version), the latest snapshot and the identity per
    location. Thread-safe."""

    def __init__(self, commit_limit: int = 4096):
        self.commit_limit = commit_limit
        self._commits: dict[tuple[str, int], list[Action]] = {}
        self._latest: dict[str, Snapshot] = {}
        self._identity: dict[str, tuple | None] = {}
        self._lock = threading.Lock()

    def commit(self, location: str, version: int) -> list[Action] | None:
        """The decoded actions of a commit, if cached."""
        return self._commits.get((location, version))

    def put_commit(self, location: str, version: int, actions: list[Action]) -> None:
        with self._lock:
            if len(self._commits) >= self.commit_limit:
                self._commits.clear()
            self._commits[(location, version)] = actions

    def latest(self, location: str) -> Snapshot | None:
        """The latest snapshot loaded of the table at ``location``, if any."""
        return self._latest.get(location)

    def put_latest(self, location: str, snapshot: Snapshot) -> None:
        self._latest[location] = snapshot

    def check_identity(self, location: str, identity: tuple | None) -> None:
        """Record the table's identity; forget what is cached for ``location`` when it changed
        (the table was deleted and created again)."""
        with self._lock:
            if location in self._identity and self._identity[location] != identity:
                self._forget(location)
            self._identity[location] = identity

    def _forget(self, location: str) -> None:
        self._latest.pop(location, None)
        for key in [k for k in self._commits if k[0] == location]:
            del self._commits[key]

    def clear(self) -> None:
        """Forget every cached commit, snapshot and identity."""
        with self._lock:
            self._commits.clear()
            self._latest.clear()
            self._identity.clear()


#: the process's kernel caches (what ``DeltaLog`` reads through)
LOG_CACHE = LogCache()
