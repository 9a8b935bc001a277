# SPDX-License-Identifier: Apache-2.0
"""The deploy interface: the workload on the node, and cleaning.

The rules every implementation follows are in :mod:`ferrum.drivers.base`.
"""

import abc
from typing import TYPE_CHECKING, Any

from ferrum.drivers import interfaces

if TYPE_CHECKING:
    from ferrum.drivers.task import AnyTask


class DeployInterface(interfaces.BaseInterface):
    """Puts a workload on the node, takes it off, and drives cleaning."""

    kind = 'deploy'

    @abc.abstractmethod
    def prepare(self, task: 'AnyTask') -> None:
        """Get the node ready for ``deploy``: allocate resources it needs.

        Called with an exclusive lock in ``deploying``, before ``deploy``;
        also at take-over, in ``active`` (see take_over), where only what
        the running workload needs from this conductor is to be prepared
        (its instance boot, not a deploy ramdisk). Must be idempotent: a
        failed deploy is retried by calling it again.
        """

    @abc.abstractmethod
    def deploy(self, task: 'AnyTask') -> str | None:
        """Put the workload on the node.

        Called with an exclusive lock in ``deploying``, after ``prepare``,
        as the deploy step ``deploy.deploy`` (priority 100, the first); an
        interface that declares more deploy steps (``@deploy_step``) has
        them run after it, by priority, as Ironic's ``direct`` deploy does.

        :returns: None when the node is deployed (it goes ``active``), or
            ``states.DEPLOYWAIT`` when deployment goes on asynchronously: the
            driver calls ``task.resume()`` when it is done (see the rules in
            :mod:`ferrum.drivers.base`), or the node fails after
            ``[conductor]deploy_callback_timeout``.
        """

    def get_deploy_steps(self, task: 'AnyTask') -> list[dict[str, Any]]:
        """The interface's deploy steps: ``deploy`` at priority 100, and
        those marked ``@deploy_step``.

        Called as ``BaseInterface.get_deploy_steps`` is: when a deploy
        is requested and when it starts, after ``prepare``.
        """
        found = super().get_deploy_steps(task)
        if not any(step['step'] == 'deploy' for step in found):
            found.append({'step': 'deploy', 'priority': 100,
                          'interface': self.kind, 'argsinfo': None})
        return found

    @abc.abstractmethod
    def tear_down(self, task: 'AnyTask') -> None:
        """Take the workload off the node (typically: power it off).

        Called with an exclusive lock in ``deleting``. Must be idempotent:
        it also runs after a failed or half-done deploy.
        """

    @abc.abstractmethod
    def clean_up(self, task: 'AnyTask') -> None:
        """Release what ``prepare`` allocated.

        Called with an exclusive lock after ``tear_down``, and when a deploy
        fails (``prepare`` or ``deploy`` raised), times out in ``wait
        call-back`` or is aborted there: the node then goes to ``deploy
        failed``. Idempotent; what it raises is added to ``last_error``.
        """

    def take_over(self, task: 'AnyTask') -> None:
        """Adopt an ``active`` node another conductor set up.

        Called with an exclusive lock, right after ``prepare``, by the
        conductor the hash ring now gives the node to: its previous
        conductor died or stopped, or a new conductor joined. Also called
        when a node is adopted. Rebuild whatever per-conductor state the
        deploy needs (boot files, console); the workload keeps running.
        Idempotent. The default does nothing.

        Raising leaves the node ``active`` with ``last_error`` set; the
        take-over is retried every ``[conductor]sync_local_state_interval``
        seconds until it succeeds.
        """

    def validate_cleaning(self, task: 'AnyTask') -> None:
        """Check that the node can be cleaned (no image is needed).

        Called with an exclusive lock when cleaning starts, before
        ``prepare_cleaning``; raise as ``validate`` does. The default is
        ``validate``.
        """
        self.validate(task)

    def prepare_cleaning(self, task: 'AnyTask') -> str | None:
        """Get the node ready to run clean steps.

        Called with an exclusive lock when cleaning starts, before any step.

        :returns: None, or ``states.CLEANWAIT`` when preparation goes on
            asynchronously (the driver then calls ``task.resume()``).
        """
        return None

    def tear_down_cleaning(self, task: 'AnyTask') -> None:
        """Undo ``prepare_cleaning``.

        Called with an exclusive lock when cleaning ends, *whether it
        succeeded or failed*. Idempotent.
        """

    def heartbeat(self, task: 'AnyTask', callback_url: str,
                  agent_version: str | None) -> None:
        """A ramdisk agent on the node says it is alive (and where).

        Called with a *shared* lock for ``POST /v1/heartbeat/{node}``, which
        an agent found the node through ``GET /v1/lookup``; only while the
        node is deploying, cleaning or inspecting (or waiting in one of
        those). An agent-driven deploy interface reads the agent's progress
        at ``callback_url``, and when the work it waits for is done calls
        ``task.upgrade_lock()`` and ``task.resume()``. Must be quick: it
        runs in the API request. The default refuses heartbeats (400).

        The heartbeat API is public, as in Ironic, but only heartbeats
        carrying the node's agent token (issued at the agent's first
        lookup) get here, and the first of them pinned the agent's session:
        its URL and certificate, in ``driver_internal_info``
        (:mod:`ferrum.drivers.agent.session`); the conductor may have taken
        the exclusive lock for that. Still confirm progress with the agent
        before resuming: a heartbeat is no proof that work finished.

        :raises HeartbeatNotSupported: this interface takes no heartbeats.
        """
        from ferrum.common import exception
        raise exception.HeartbeatNotSupported(
            node=task.node.uuid, interface=type(self).__name__)
