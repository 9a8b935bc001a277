# SPDX-License-Identifier: Apache-2.0
"""The interface kinds of the driver contract, one module each.

This package holds :class:`BaseInterface`, which every kind extends;
:mod:`ferrum.drivers.base` states the rules every implementation follows
and is the module driver authors import (it re-exports each kind).
"""

import abc
from typing import TYPE_CHECKING, Any

from ferrum.drivers import steps

if TYPE_CHECKING:
    from oslo_config import cfg

    from ferrum.drivers.task import AnyTask


class BaseInterface(abc.ABC):
    """Common base of all interfaces."""

    #: The interface kind, a key of :data:`ferrum.drivers.base.INTERFACES`.
    kind: str = ''

    #: ``driver_info`` keys whose values are secrets (tokens, keys,
    #: community strings) beyond those whose name contains "password",
    #: which are always secret. The API shows their values as ``******``
    #: on every node that uses this interface, and neither ferrum nor the
    #: interface may log them or put them into an exception. Read by the
    #: conductor once at start-up, without a node or lock, and registered
    #: in the database for the API; a change takes effect when the
    #: conductors restart. List the keys in ``get_properties`` too.
    secret_properties: frozenset[str] = frozenset()

    def check_configuration(self, conf: 'cfg.ConfigOpts') -> None:
        """Check this interface's own options, once, at conductor start.

        Called for every enabled interface before the conductor registers,
        without a node or lock. Raise a
        :class:`~ferrum.common.exception.FerrumException` naming the option
        and what to set: the conductor then refuses to start, naming the
        entry point. Must not block on the hardware or a remote service
        (check reachability in the background, and only warn: it may be
        down for a while). The default checks nothing.
        """
        return None

    def shutdown(self) -> None:
        """Let go of what this interface holds for all its nodes (sessions
        at BMCs, connections, threads), once, when the conductor stops.

        Called for every enabled interface once the conductor stopped
        taking work and its operations ended (or
        ``[conductor] graceful_shutdown_timeout`` passed: those still
        running then were failed and are not waited for), without a node
        or lock. An error raised is logged and the stop goes on; a peer
        that does not answer costs the interface's own request timeouts.
        An interface that holds nothing between calls needs nothing here;
        the default does nothing.
        """
        return None

    def get_properties(self) -> dict[str, str]:
        """The ``driver_info`` keys this interface reads, with a description.

        Called by the conductor once at start-up, without a node or lock;
        the result is registered in the database, and the API serves it
        (``GET /v1/drivers/<name>/properties`` for a hardware type's default
        interfaces) without loading drivers. Mark required keys by starting
        the description with "Required.".
        """
        return {}

    @abc.abstractmethod
    def validate(self, task: 'AnyTask') -> None:
        """Check that the node's ``driver_info`` is enough for this interface.

        Called with a shared lock before any operation that uses the
        interface, and by ``/validate``. Must not contact the hardware and
        must be idempotent.

        :raises MissingParameterValue: a required ``driver_info`` key is
            missing (name it).
        :raises InvalidParameterValue: a value is wrong (say which and why).
        """

    def get_clean_steps(self, task: 'AnyTask') -> list[dict[str, Any]]:
        """The clean steps of this interface (those marked ``@clean_step``).

        Called with an exclusive lock when cleaning starts. Override to
        change priorities per node.
        """
        return steps.collect(self, self.kind)

    def execute_clean_step(self, task: 'AnyTask',
                           step: dict[str, Any]) -> str | None:
        """Run one clean step.

        Called with an exclusive lock, in the order cleaning computed.

        :returns: None when the step is done, or ``states.CLEANWAIT`` when it
            continues asynchronously: the driver calls ``task.resume()``
            when it finishes (see the rules in :mod:`ferrum.drivers.base`),
            and the next step runs.
        """
        method = getattr(self, step['step'])
        result: str | None = method(task, **(step.get('args') or {}))
        return result

    def get_deploy_steps(self, task: 'AnyTask') -> list[dict[str, Any]]:
        """The deploy steps of this interface (those marked
        ``@deploy_step``).

        Called with an exclusive lock when a deploy is requested (before
        ``prepare``: the node's deploy templates are checked against these
        steps) and when it starts, after the deploy interface's
        ``prepare``; it must only read the node. A step with priority 0
        runs only when a deploy template enables it. Override to change
        priorities per node.
        """
        return steps.collect(self, self.kind, 'deploy')

    def execute_deploy_step(self, task: 'AnyTask',
                            step: dict[str, Any]) -> str | None:
        """Run one deploy step.

        Called with an exclusive lock in ``deploying``, in priority order;
        the step shows in the node's ``deploy_step`` while it runs.

        :returns: None when the step is done, or ``states.DEPLOYWAIT`` when
            it continues asynchronously: the driver calls ``task.resume()``
            when it finishes, and the next step runs.
        """
        method = getattr(self, step['step'])
        result: str | None = method(task, **(step.get('args') or {}))
        return result
