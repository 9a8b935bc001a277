# SPDX-License-Identifier: Apache-2.0
"""What a driver method receives: the task, and the conductor behind it.

The rules in :mod:`ferrum.drivers.base` say what a method may do with them.
"""

import datetime
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ferrum.periodic import decorators

if TYPE_CHECKING:
    from ferrum.db import api as db_api
    from ferrum.objects import node as node_obj

#: The type of ``task.driver``: :class:`ferrum.drivers.base.Driver` for
#: every task the conductor makes (:data:`ferrum.drivers.base.Task`).
DriverT_co = TypeVar('DriverT_co', covariant=True)


class ConductorView(decorators.Conductor, Protocol):
    """What a driver may use of the conductor that runs it (``task.ctx``).

    Besides ``conf``, ``host`` and ``each_node`` (see
    :class:`ferrum.periodic.decorators.Conductor`): the database, the clock
    and the sleep, which tests replace, so drivers should use these rather
    than ``time``.
    """

    @property
    def db(self) -> 'db_api.Database':
        """The conductor's database (for objects' class methods)."""

    @property
    def clock(self) -> Callable[[], datetime.datetime]:
        """Returns "now" as naive UTC."""

    @property
    def sleep(self) -> Callable[[float], None]:
        """Sleeps for the given seconds (instant in tests)."""


class Task(Protocol[DriverT_co]):
    """The task a driver method receives: one node, under its lock.

    The conductor's :class:`ferrum.conductor.task_manager.Task` is the one
    implementation; drivers depend on this description only, as
    :data:`ferrum.drivers.base.Task` (this protocol with its ``driver``
    typed).
    """

    @property
    def node(self) -> 'node_obj.Node':
        """The node; changes are written when the task releases its lock."""

    @property
    def driver(self) -> DriverT_co:
        """The node's interfaces."""

    @property
    def ctx(self) -> ConductorView:
        """The conductor running the task."""

    @property
    def shared(self) -> bool:
        """True for a shared (read-only) task."""

    @property
    def purpose(self) -> str:
        """What the task is for, in words, as logs show it."""

    def upgrade_lock(self) -> None:
        """Take the exclusive lock (re-reading the node) if not held yet.

        :raises NodeLocked: another task holds the node.
        """

    def process_event(self, event: str, last_error: str | None = None,
                      target_state: str | None = None) -> str:
        """Fire a state-machine event; needs the exclusive lock."""

    def spawn_after(self, func: Callable[..., Any], *args: Any) -> None:
        """Run ``func(*args)`` on a worker once the task's block ends."""

    def resume(self) -> None:
        """End the node's wait: the asynchronous work is done.

        Needs the exclusive lock, and the node in ``wait call-back``
        (the deploy goes ``active``), ``clean wait`` (cleaning goes on with
        the next step) or ``inspect wait`` (inspection ends in
        ``manageable``). The rest runs on a worker after the task's block.

        :raises InvalidStateRequested: the node is not waiting.
        """

    def fail(self, error: str) -> None:
        """End the node's wait with a failure: the asynchronous work failed.

        Needs the exclusive lock, and the node in one of the wait states
        :meth:`resume` names. ``error`` becomes ``last_error``; the node
        then fails as the callback timeout fails it: ``wait call-back`` goes
        to ``deploy failed`` after the deploy interface's ``clean_up``,
        ``clean wait`` to ``clean failed`` (in maintenance) after
        ``tear_down_cleaning`` (both on a worker after the task's block),
        ``inspect wait`` to ``inspect failed``.

        :raises InvalidStateRequested: the node is not waiting.
        """

    def start(self, verb: str,
              args: Mapping[str, Any] | None = None) -> None:
        """Start a provision verb (``provide``, ``manage``, ...) on the node.

        The same verbs, checks and flows as ``PUT .../states/provision``;
        needs the exclusive lock. The work runs after the task's block.

        :raises InvalidStateRequested: the verb is not allowed now.
        """


#: What the interface classes' methods take: a task, whatever its driver.
#: The interfaces are the parts of :class:`ferrum.drivers.base.Driver`, so
#: their modules cannot name it without the two importing each other
#: (tests/unit/test_house_rules.py allows no import cycle). Implementations
#: type their methods against :data:`ferrum.drivers.base.Task`, whose
#: ``driver`` is that Driver.
AnyTask = Task[Any]
