# SPDX-License-Identifier: Apache-2.0
"""Moving a node on as its agent works: never waiting for a heartbeat.

A step that runs on the agent (an image write, an erase) is started as an
asynchronous command; :func:`wait` records it in the node's
``driver_internal_info`` (:data:`KEY`: its id, its name, the step) and the
step returns the wait state. The node then goes on as soon as either of
two things sees the command finished:

* the heartbeat the agent sends at once when a command ends
  (:func:`on_heartbeat`);
* the conductor's own poll, every ``[agent] command_poll_interval``
  seconds (:class:`Polling`), for the heartbeat that is lost or late.

Whichever comes first takes the node's lock and reads the record again, so
the other finds nothing left to do. SUCCEEDED resumes the node (the next
step); FAILED fails it with the agent's own message in ``last_error``. An
agent that stops answering leaves the node waiting until the callback
timeout, whose message says what was awaited (:data:`AWAITING`).

A node waiting for its agent to boot (``deploy.deploy``, or cleaning's
preparation) goes on at the first heartbeat that carries the token.
"""

import logging
from typing import TYPE_CHECKING, Any

from ferrum.common import states
from ferrum.drivers import base
from ferrum.drivers.agent import client as client_mod
from ferrum.drivers.agent import errors
from ferrum.drivers.agent import inband
from ferrum.drivers.agent import session
from ferrum.objects import agent_token
from ferrum.periodic import decorators

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

LOG = logging.getLogger(__name__)

#: The ``driver_internal_info`` key of the command the node waits for.
KEY = 'agent_command'
#: What the node waits for, in words: the callback timeout's message says
#: it (the driver contract's key).
AWAITING = base.AWAITING
#: What some of the agent's own messages mean, said for an operator: the
#: agent reports the tool's words (qemu-img's, the kernel's).
_HINTS = (
    (('cannot grow device files', 'no space left on device'),
     'the root device is smaller than the image: choose a larger disk '
     '(properties root_device) or a smaller image'),
)
#: The wait a hook in each state returns.
WAITS = {states.DEPLOYING: states.DEPLOYWAIT,
         states.CLEANING: states.CLEANWAIT}


def endpoint(task: 'Task') -> client_mod.Endpoint:
    """Where and how to reach the node's agent.

    :raises AgentError: no agent has heartbeated with its token since the
        session started (or its token is gone).
    """
    info = task.node.driver_internal_info
    url = session.recorded_url(info)
    token = agent_token.get(task.ctx.db, task.node.id)
    if url is None or token is None:
        raise errors.AgentError(
            node=task.node.uuid, command='any command',
            reason='no agent of this node has heartbeated with its token '
                   'yet (or its session ended)')
    ca = info.get(session.CA)
    return client_mod.Endpoint(node=task.node.uuid, url=url, token=token,
                              ca_pem=ca if isinstance(ca, str) else None)


def boot_wait(task: 'Task') -> str:
    """Make the node wait for its agent to boot and heartbeat."""
    task.node.driver_internal_info = dict(
        task.node.driver_internal_info,
        **{AWAITING: 'the agent to boot and heartbeat with its token'})
    task.node.driver_internal_info.pop(KEY, None)
    return WAITS[task.node.provision_state]


def wait(task: 'Task', command: client_mod.Command, step: str) -> str:
    """Make the node wait for ``command``, started for ``step``.

    :returns: the wait state for the hook to return.
    """
    info = dict(task.node.driver_internal_info)
    info[KEY] = {'id': command.id, 'name': command.name, 'step': step}
    info[AWAITING] = 'the agent to finish %s (%s)' % (step, command.name)
    task.node.driver_internal_info = info
    LOG.info('Node %(node)s: the agent runs %(step)s',
             {'node': task.node.uuid, 'step': step})
    return WAITS[task.node.provision_state]


def forget(task: 'Task') -> None:
    info = task.node.driver_internal_info
    if KEY in info or AWAITING in info:
        task.node.driver_internal_info = {
            key: value for key, value in info.items()
            if key not in (KEY, AWAITING)}


def record(node: Any) -> dict[str, Any] | None:
    """The command the node waits for, if it still waits."""
    found = (node.driver_internal_info or {}).get(KEY)
    if (node.provision_state not in states.WAIT_STATES
            or not isinstance(found, dict) or not found.get('id')):
        return None
    return found


def _awaits_boot(node: Any) -> bool:
    info = node.driver_internal_info or {}
    return (node.provision_state in (states.DEPLOYWAIT, states.CLEANWAIT)
            and KEY not in info and AWAITING in info)


def on_heartbeat(task: 'Task', agent: client_mod.AgentClient) -> None:
    """The agent heartbeated with its token (any lock)."""
    node = task.node
    if _awaits_boot(node):
        task.upgrade_lock()
        if not _awaits_boot(task.node):
            return
        try:
            _cache_steps(task, agent)
        except errors.AgentError as exc:
            forget(task)
            task.fail('Listing the agent\'s steps failed: %s' % exc)
            return
        forget(task)
        LOG.info('Node %(node)s: its agent is up', {'node': node.uuid})
        task.resume()
        return
    check(task, agent)


def check(task: 'Task', agent: client_mod.AgentClient) -> None:
    """Read the command the node waits for; go on when it finished."""
    pending = record(task.node)
    if pending is None:
        return
    ep = endpoint(task)
    try:
        command = agent.get(ep, pending['id'])
    except errors.AgentUnreachable as exc:
        # The callback timeout bounds this: the agent may be rebooting.
        LOG.warning('Node %(node)s: %(error)s', {'node': task.node.uuid,
                                                  'error': exc})
        return
    except errors.AgentError as exc:
        _finish(task, pending, None, str(exc))
        return
    if command.done:
        _finish(task, pending, command, None)


def _finish(task: 'Task', pending: dict[str, Any],
            command: client_mod.Command | None, error: str | None) -> None:
    task.upgrade_lock()
    if record(task.node) != pending:
        return  # the other trigger, an abort or the timeout came first
    forget(task)
    if command is not None and command.status == 'SUCCEEDED':
        LOG.info('Node %(node)s: the agent finished %(step)s',
                 {'node': task.node.uuid, 'step': pending['step']})
        task.resume()
        return
    if command is not None:
        error = ('the agent reported %s: %s' % (command.status,
                                                command.message()))
        lowered = error.lower()
        for phrases, hint in _HINTS:
            if any(phrase in lowered for phrase in phrases):
                error = '%s (%s)' % (error, hint)
    task.fail('%s failed on the agent: %s' % (pending['step'], error))


def _cache_steps(task: 'Task', agent: client_mod.AgentClient) -> None:
    """Ask the agent that just came up for its steps (and its hardware
    managers' versions, which its step commands need)."""
    node = task.node
    step_type, key = (('clean', inband.CACHED)
                      if node.provision_state == states.CLEANWAIT
                      else ('deploy', inband.CACHED_DEPLOY))
    command = agent.run(endpoint(task), '%s.get_%s_steps' % (
        step_type, step_type), {
            'node': inband.node_view(node, task.ctx.conf),
            'ports': inband.ports(task.ctx.db, node.id)})
    found = command.result if isinstance(command.result, dict) else {}
    node.driver_internal_info = dict(
        node.driver_internal_info,
        **{key: inband.reported(found, step_type)})


def _waiting(row: Any) -> bool:
    return record(row) is not None


class Polling:
    """Mix into the deploy interface: the periodic task that polls the
    agent's commands the nodes wait for. The class provides
    ``agent(task)``, the client to use."""

    kind: str

    def agent(self, task: 'Task') -> client_mod.AgentClient:
        raise NotImplementedError

    @decorators.node_periodic(
        purpose='polling agent commands',
        spacing=lambda conf: conf.agent.command_poll_interval,
        filters={'provision_state_in': sorted(WAITS.values()),
                 'reserved': False},
        predicate=_waiting, columns=('driver_internal_info',))
    def poll_agent_commands(self, task: 'Task') -> None:
        check(task, self.agent(task))
