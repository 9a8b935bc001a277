# SPDX-License-Identifier: Apache-2.0
"""Heartbeats from a ramdisk agent running on a node.

Ironic's ramdisk agents find their node with ``GET /v1/lookup`` (the API
answers that from the database) and then ``POST /v1/heartbeat/{node}``
every few seconds; the heartbeat reaches the node's deploy interface,
which may end the node's wait (``task.resume()``) when the work it waited
for is done.
"""

import logging

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import task_manager

LOG = logging.getLogger(__name__)


def heartbeat(ctx: context_mod.ConductorContext, node_id: int | str,
              callback_url: str, agent_version: str | None) -> None:
    """Pass an agent's heartbeat to the node's deploy interface.

    :raises NodeNotWaiting: no agent is expected in the node's state.
    :raises HeartbeatNotSupported: its deploy interface takes none.
    """
    with task_manager.acquire(ctx, node_id, shared=True,
                              purpose='agent heartbeat') as task:
        state = task.node.provision_state
        if state not in states.AGENT_STATES:
            raise exception.NodeNotWaiting(node=task.node.uuid, state=state)
        LOG.debug('Node %(node)s: heartbeat from an agent at %(url)s',
                  {'node': task.node.uuid, 'url': callback_url})
        task.driver.deploy.heartbeat(task, callback_url, agent_version)
