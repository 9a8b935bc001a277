# SPDX-License-Identifier: Apache-2.0
"""Decorators that mark methods as periodic tasks. They only set attributes.

Spacing is a callable of the configuration, called when the conductor
starts its periodic worker, never at import or decoration time: reading
config in a decorator argument is how Ironic once ran periodics with
default intervals whatever the operator configured (LP #1562258).

A periodic method takes the :class:`ferrum.conductor.context.ConductorContext`
as its only argument. ``@node_periodic`` turns a per-node method
``func(self, task)`` into such a method, doing the iterate / lock /
skip-if-busy work for it.
"""

import dataclasses
import functools
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from oslo_config import cfg

from ferrum.common import exception

if TYPE_CHECKING:
    from ferrum.conductor.context import ConductorContext

LOG = logging.getLogger(__name__)
F = TypeVar('F', bound=Callable[..., Any])
Spacing = Callable[[cfg.ConfigOpts], float]
MARK = '_ferrum_periodic'


@dataclasses.dataclass(frozen=True)
class PeriodicSpec:
    spacing: Spacing
    run_immediately: bool


class Stop(Exception):
    """Raised by a ``node_periodic`` function to end the current run early."""


def periodic(spacing: Spacing, run_immediately: bool = False
             ) -> Callable[[F], F]:
    """Mark ``method(self, ctx)`` to run every ``spacing(conf)`` seconds.

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

    Only the nodes this conductor handles are visited: its conductor group,
    a hardware type it loaded, and its share of the hash ring (see
    :mod:`ferrum.conductor.ownership`). A node that is locked or deleted
    meanwhile is skipped; raising :class:`Stop` ends the run.
    """
    wanted = ('id', 'uuid', 'driver', 'provision_state',
              'maintenance') + tuple(columns)

    def wrap(func: F) -> F:
        @functools.wraps(func)
        def run(self: Any, ctx: 'ConductorContext') -> None:
            from ferrum.conductor import ownership
            from ferrum.conductor import task_manager
            max_nodes = limit(ctx.conf) if callable(limit) else limit
            done = 0
            for row in ownership.node_rows(ctx, wanted, filters):
                if predicate is not None and not predicate(row):
                    continue
                if max_nodes is not None and done >= max_nodes:
                    return
                try:
                    with task_manager.acquire(ctx, row.id, purpose=purpose,
                                              shared=shared,
                                              retry=False) as task:
                        func(self, task)
                except (exception.NodeLocked, exception.NodeNotFound):
                    continue
                except Stop:
                    return
                done += 1
        return periodic(spacing)(run)  # type: ignore[return-value]
    return wrap
