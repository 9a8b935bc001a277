# SPDX-License-Identifier: Apache-2.0
"""Take-over of active nodes when the hash ring gives them to this conductor.

A node's ``conductor_affinity`` names the conductor that last deployed,
adopted or took it over: the one holding whatever per-conductor state the
workload needs (boot files, a console). When a conductor dies, stops or
joins, the hash ring (:mod:`ferrum.conductor.ownership`) moves some nodes
to another conductor. Every conductor runs
:meth:`NodeTakeover.sync_local_state` every
``[conductor]sync_local_state_interval`` seconds, as Ironic's conductor
does: for each ``active`` node out of maintenance that the ring gives to
it but whose affinity is another conductor, it locks the node, calls the
deploy interface's ``prepare`` and ``take_over``, and records itself as
the affinity.

A take-over that raises never moves the node: it stays ``active`` (its
workload is still running), ``last_error`` says what failed, and the
affinity is left as it was, so the next run tries again, as in Ironic.
The next successful take-over clears that ``last_error``.
"""

import logging

from ferrum.common import plural
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import driver_errors
from ferrum.conductor import task_manager
from ferrum.drivers.agent import session
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node_history
from ferrum.periodic import decorators

LOG = logging.getLogger(__name__)
PURPOSE = 'node take-over'
#: How a failed take-over's last_error starts, so a later success clears
#: that error and no other.
FAILED_PREFIX = 'Take-over by conductor '


class NodeTakeover:
    """The periodic task that takes over the active nodes that moved here."""

    @decorators.periodic(
        spacing=lambda conf: conf.conductor.sync_local_state_interval)
    def sync_local_state(self, ctx: context_mod.ConductorContext) -> None:
        hosts: dict[int, str] = {}
        taken: list[str] = []

        def visit(task: task_manager.Task) -> None:
            node = task.node
            # Again under the lock: the node may have changed since listed.
            if (node.provision_state != states.ACTIVE or node.maintenance
                    or node.conductor_affinity == ctx.conductor_id):
                return
            if not hosts:  # once a run, and only when there is work
                hosts.update((c.id, c.hostname)
                             for c in conductor_obj.list_all(ctx.db))
            if _take_over(task, hosts.get(node.conductor_affinity or -1,
                                          'none')):
                taken.append(node.uuid)

        visited = ctx.each_node(
            PURPOSE, visit, columns=('conductor_affinity',),
            filters={'provision_state': states.ACTIVE, 'maintenance': False,
                     'reserved': False},
            predicate=lambda row: row.conductor_affinity != ctx.conductor_id,
            shared=False)
        if visited:
            LOG.info('Took over %(taken)d of %(nodes)s the hash ring moved '
                     'to conductor %(host)s',
                     {'taken': len(taken), 'host': ctx.host,
                      'nodes': plural.count(visited, 'active node')})


def _take_over(task: task_manager.Task, previous: str) -> bool:
    node = task.node
    try:
        task.driver.deploy.prepare(task)
        task.driver.deploy.take_over(task)
    except Exception as exc:
        node.last_error = (
            '%s. The node stays active and the take-over is retried every '
            '[conductor] sync_local_state_interval seconds.'
            % driver_errors.describe(
                task, '%s%s failed (previous conductor: %s)'
                % (FAILED_PREFIX, task.ctx.host, previous), exc))
        return False
    node.conductor_affinity = task.ctx.conductor_id
    # An active node runs its instance: no agent session survives.
    session.forget(task)
    if (node.last_error or '').startswith(FAILED_PREFIX):
        node.last_error = None
    node.note(node_history.note(
        node_history.TAKEOVER, 'Taken over by conductor %s (previous: %s)'
        % (task.ctx.host, previous)))
    LOG.info('Node %(node)s taken over from conductor %(previous)s by '
             '%(host)s (%(purpose)s)', {'node': node.uuid,
                                        'previous': previous,
                                        'host': task.ctx.host,
                                        'purpose': PURPOSE})
    return True
