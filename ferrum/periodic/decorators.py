# SPDX-License-Identifier: Apache-2.0
"""Decorators that mark methods as periodic tasks. They only set attributes.

Spacing is a callable of the configuration, called when the conductor
starts its periodic worker, never at import or decoration time: reading
config in a decorator argument is how Ironic once ran periodics with
default intervals whatever the operator configured (LP #1562258).

A periodic method takes the running conductor (a :class:`Conductor`) as
its only argument, and uses the one it is given. ``@node_periodic`` turns
a per-node method ``func(self, task)`` into such a method: it is built on
:meth:`Conductor.each_node`, the one way ferrum visits nodes periodically.
"""

import dataclasses
import functools
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

from oslo_config import cfg

LOG = logging.getLogger(__name__)
F = TypeVar('F', bound=Callable[..., Any])
Spacing = Callable[[cfg.ConfigOpts], float]
MARK = '_ferrum_periodic'


class Stop(Exception):
    """Raised by a per-node function to end the current run early."""


class Conductor(Protocol):
    """What a periodic task gets: the conductor that runs it.

    The conductor's :class:`~ferrum.conductor.context.ConductorContext`
    is one; :class:`ferrum.drivers.base.ConductorView` adds what drivers
    may use besides.
    """

    @property
    def conf(self) -> cfg.ConfigOpts:
        """The conductor's configuration; read options at call time."""

    @property
    def host(self) -> str:
        """The conductor's name, as node locks record it."""

    def each_node(self, purpose: str, func: Callable[[Any], None], *,
                  columns: Iterable[str] = (),
                  filters: Mapping[str, Any] | None = None,
                  predicate: Callable[[Any], bool] | None = None,
                  limit: int | None = None, shared: bool = True,
                  workers: int = 1) -> int:
        """Call ``func(task)`` on each matching node this conductor handles.

        Only the nodes of this conductor's group, of a hardware type it
        loaded, that the hash ring gives to it. Each call runs in its own
        task (a shared or an exclusive lock), taken without waiting.

        One policy for every caller: a node that is locked or was deleted
        meanwhile is skipped; any other exception is logged with its
        traceback (a driver's ``DriverError`` as one line) and the run goes
        on with the next node; :class:`Stop` or a full worker pool ends the
        run.

        :param columns: node columns ``predicate`` reads, besides ``id``,
            ``uuid``, ``driver``, ``provision_state`` and ``maintenance``.
        :param filters: node list filters (see ``Node.list``), in SQL.
        :param predicate: a cheap check on the row before any lock.
        :param limit: at most this many nodes get ``func`` called.
        :param workers: visit up to this many nodes at a time, each on a
            thread of the run's own (for tasks that mostly wait on a BMC).
        :returns: the number of nodes ``func`` was called on.
        """


@dataclasses.dataclass(frozen=True)
class PeriodicSpec:
    spacing: Spacing
    run_immediately: bool


def periodic(spacing: Spacing, run_immediately: bool = False
             ) -> Callable[[F], F]:
    """Mark ``method(self, conductor)`` to run every ``spacing(conf)`` s.

    A spacing of 0 (or less) disables the task. A task that raises is logged
    and runs again at its next time.
    """
    if not callable(spacing):
        raise TypeError('periodic spacing must be a callable of the config, '
                        'so that it is read when the worker starts')

    def mark(func: F) -> F:
        setattr(func, MARK, PeriodicSpec(spacing, run_immediately))
        return func
    return mark


def node_periodic(purpose: str, spacing: Spacing,
                  filters: Mapping[str, Any] | None = None,
                  predicate: Callable[[Any], bool] | None = None,
                  limit: int | Callable[[cfg.ConfigOpts], int] | None = None,
                  shared: bool = True,
                  columns: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Mark ``func(self, task)`` to run on every matching node periodically.

    :param purpose: what the task does, for logs and lock holders.
    :param spacing: seconds between runs, from the config (0 disables).
    :param filters: node list filters (see ``Node.list``), applied in SQL.
    :param predicate: a cheap check on the node row (its ``id``, ``uuid``,
        ``driver``, ``provision_state``, ``maintenance`` and ``columns``)
        before any lock is taken.
    :param limit: at most this many nodes per run (or a callable of conf).
    :param shared: take a shared lock (call ``task.upgrade_lock()`` to
        change the node) or an exclusive one.

    The nodes visited, and what happens when ``func`` raises, are those of
    :meth:`Conductor.each_node`. On a driver interface, ``func`` is called
    only for nodes that use that interface (an instance of its class as
    their interface of its kind), as in Ironic: another driver's nodes in
    the same state are not its business.
    """
    def wrap(func: F) -> F:
        @functools.wraps(func)
        def run(self: Any, conductor: Conductor) -> None:
            max_nodes = limit(conductor.conf) if callable(limit) else limit
            kind = getattr(self, 'kind', '')

            def visit(task: Any) -> None:
                if kind and not isinstance(getattr(task.driver, kind, None),
                                           type(self)):
                    return
                func(self, task)

            conductor.each_node(
                purpose, visit, columns=columns, filters=filters,
                predicate=predicate, limit=max_nodes, shared=shared)
        return periodic(spacing)(run)  # type: ignore[return-value]
    return wrap
