# SPDX-License-Identifier: Apache-2.0
"""What this conductor is working on right now, as only it can know.

The database says which nodes this conductor has locked and which
allocations are stamped with its id; it cannot say which of those a live
thread is still working on. After the database was unreachable that is the
difference between a lock that must be kept and one that a failed release
left behind, and between an allocation being processed and one whose
worker gave up. :func:`ferrum.conductor.outage.recover` uses this record to
free the second kind once the database is back.
"""

import threading
from collections.abc import Sequence
from typing import Any

#: A failed release: the node's UUID, the changes and their history
#: entries (:meth:`ferrum.objects.node.Node.history`).
Unreleased = tuple[str, dict[str, Any], tuple[dict[str, Any], ...]]


class InFlight:
    """Thread-safe record of live node locks, failed releases, allocations."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._locks: set[int] = set()
        self._reserving = 0
        self._unreleased: dict[int, Unreleased] = {}
        self._allocations: set[int] = set()

    # ---- node locks ---------------------------------------------------------

    def reserving(self, delta: int) -> None:
        """A task is (+1) or no longer (-1) between asking for a lock and
        recording it: a lock it took may not be recorded yet."""
        with self._lock:
            self._reserving += delta

    def lock_taken(self, node_id: int) -> None:
        with self._lock:
            self._locks.add(node_id)

    def lock_released(self, node_id: int) -> None:
        with self._lock:
            self._locks.discard(node_id)
            self._unreleased.pop(node_id, None)

    def release_failed(self, node_id: int, node_uuid: str,
                       changes: dict[str, Any],
                       history: Sequence[dict[str, Any]] = ()) -> None:
        """The task ended but its lock (and its last changes, with their
        history entries) were not written; they are written again once the
        database answers."""
        with self._lock:
            self._locks.discard(node_id)
            self._unreleased[node_id] = (node_uuid, dict(changes),
                                         tuple(history))

    def unreleased(self) -> dict[int, Unreleased]:
        with self._lock:
            return dict(self._unreleased)

    def live_locks(self) -> frozenset[int] | None:
        """Nodes whose lock a live task holds; None while a lock may be
        taken but not yet recorded (then nothing can be called orphaned)."""
        with self._lock:
            if self._reserving:
                return None
            return frozenset(self._locks) | frozenset(self._unreleased)

    # ---- allocations --------------------------------------------------------

    def allocation_started(self, allocation_id: int) -> None:
        with self._lock:
            self._allocations.add(allocation_id)

    def allocation_ended(self, allocation_id: int) -> None:
        with self._lock:
            self._allocations.discard(allocation_id)

    def allocations(self) -> frozenset[int]:
        with self._lock:
            return frozenset(self._allocations)
