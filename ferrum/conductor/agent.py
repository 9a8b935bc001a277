# SPDX-License-Identifier: Apache-2.0
"""Heartbeats from a ramdisk agent running on a node.

Ironic's ramdisk agents find their node with ``GET /v1/lookup`` (the API
answers that from the database, and issues the node's agent token at the
first lookup) and then ``POST /v1/heartbeat/{node}`` every few seconds,
and at once after each command they finish. A heartbeat counts only with
the node's token (compared in constant time); the first one that carries
it pins the agent's session (:mod:`ferrum.drivers.agent.session`): its
URL and certificate. It then reaches the node's deploy interface, which
may end the node's wait (``task.resume()``) when the work it waited for
is done.
"""

import logging

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import task_manager
from ferrum.drivers.agent import session
from ferrum.objects import agent_token

LOG = logging.getLogger(__name__)


def _check(ctx: context_mod.ConductorContext, task: task_manager.Task,
           callback_url: str, token: str | None,
           verify_ca: str | None) -> bool:
    """Refuse a heartbeat that is not the node's agent's; True when the
    agent's session is recorded already (see :func:`heartbeat`)."""
    node = task.node
    if node.provision_state not in states.AGENT_STATES:
        raise exception.NodeNotWaiting(node=node.uuid,
                                       state=node.provision_state)
    if not agent_token.matches(ctx.db, node.id, token):
        # No URL in the line: anyone may call this endpoint.
        LOG.warning('Node %(node)s: a heartbeat without the node\'s agent '
                    'token was refused', {'node': node.uuid})
        raise exception.InvalidParameterValue(reason=(
            'Invalid or missing agent token received; an agent gets its '
            'token at its first lookup of the node.'))
    if (ctx.conf.agent.require_tls
            and not callback_url.lower().startswith('https://')):
        raise exception.InvalidParameterValue(reason=(
            'The heartbeat\'s callback_url must be https:// ([agent] '
            'require_tls): ironic-python-agent turns TLS on by itself '
            'against this API; check that it was not started with '
            '--noenable_auto_tls.'))
    return session.check(node.driver_internal_info, callback_url, verify_ca)


def heartbeat(ctx: context_mod.ConductorContext, node_id: int | str,
              callback_url: str, agent_version: str | None,
              agent_token_given: str | None = None,
              agent_verify_ca: str | None = None) -> None:
    """Check an agent's heartbeat and pass it to the node's deploy
    interface.

    The first heartbeat with the token records the agent's session, in a
    task of its own with the exclusive lock; the deploy interface is then
    called with a shared one, as its contract says.

    :raises NodeNotWaiting: no agent is expected in the node's state.
    :raises InvalidParameterValue: no token, a wrong one, plain HTTP under
        ``[agent] require_tls``, or another URL or certificate than the
        agent's session recorded; nothing changed.
    :raises HeartbeatNotSupported: its deploy interface takes none.
    """
    with task_manager.acquire(ctx, node_id, shared=True,
                              purpose='agent heartbeat') as task:
        recorded = _check(ctx, task, callback_url, agent_token_given,
                          agent_verify_ca)
        if recorded:
            task.driver.deploy.heartbeat(task, callback_url, agent_version)
            return
    with task_manager.acquire(ctx, node_id,
                              purpose='recording the agent\'s session'
                              ) as task:
        if not _check(ctx, task, callback_url, agent_token_given,
                      agent_verify_ca):
            session.record(task, callback_url, agent_version,
                           agent_verify_ca)
            LOG.info('Node %(node)s: agent %(version)s at %(url)s',
                     {'node': task.node.uuid, 'version': agent_version,
                      'url': callback_url})
    with task_manager.acquire(ctx, node_id, shared=True,
                              purpose='agent heartbeat') as task:
        task.driver.deploy.heartbeat(task, callback_url, agent_version)
