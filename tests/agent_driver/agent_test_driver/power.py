# SPDX-License-Identifier: Apache-2.0
"""The ``agent-test`` power interface: a machine whose power button starts
the real ironic-python-agent in a sandbox.

Power on starts the node's sandboxed agent (:mod:`agent_test_driver.
sandbox`), as a machine booting its deploy ramdisk; power off SIGKILLs the
sandbox; the node is on while its sandbox runs. The machine is
``driver_info['agent_test_spec']``, the path of the JSON spec the test
harness wrote (tests/agent). Its state is in the spec's state directory,
so a restarted conductor finds a machine that kept running.

Before it starts an agent, the interface checks the node's root device
hints name the spec's loop device (``properties.root_device = {"name":
"/dev/loopN"}``): the second of the three guards (see the sandbox for the
others). With ``driver_info['agent_test_boot'] = 'boot_device'`` a power
on with the boot device ``disk`` boots "the instance" instead: the node
is on and no agent runs (the default, ``agent``, boots the agent always).

With ``standby`` in the spec, a machine powered off whose next power on
boots the agent goes back on standby in the background
(:func:`agent_test_driver.sandbox.stand_by`): that power on presses the
button of an agent already loaded. A power off of a machine that is off
does nothing, so its standby (ready or starting) stays.
"""

import logging
import os
import threading
from typing import TYPE_CHECKING, Any

from agent_test_driver import sandbox
from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers import base

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

LOG = logging.getLogger(__name__)

PROPERTIES = {
    'agent_test_spec': 'Required. Path of the agent test machine\'s JSON '
                       'spec (tests/agent writes it).',
    'agent_test_boot': 'Optional. "agent" (default): every power on boots '
                       'the agent; "boot_device": a power on with the boot '
                       'device "disk" boots the instance (no agent).',
}
_INSTANCE_ON = 'instance-on'


def spec_of(task: 'Task') -> dict[str, Any]:
    """The node's machine spec, checked against its root device hints.

    :raises MissingParameterValue: no ``agent_test_spec``.
    :raises InvalidParameterValue: an unreadable spec, a disk that is not a
        loop device, or root device hints that do not name exactly it.
    """
    path = task.node.driver_info.get('agent_test_spec')
    if not path:
        raise exception.MissingParameterValue(
            reason='driver_info is missing agent_test_spec; set it to the '
                   'path of the JSON spec the agent test harness wrote.')
    try:
        spec: dict[str, Any] = sandbox.load_spec(path)
    except (sandbox.SandboxError, OSError) as exc:
        raise exception.InvalidParameterValue(reason=str(exc)) from exc
    hints = (task.node.properties or {}).get('root_device')
    if hints != {'name': spec['disk']}:
        raise exception.InvalidParameterValue(
            reason='node %s: properties.root_device must be {"name": "%s"} '
                   'for the agent test machine, not %s'
                   % (task.node.uuid, spec['disk'], hints))
    boot = task.node.driver_info.get('agent_test_boot', 'agent')
    if boot not in ('agent', 'boot_device'):
        raise exception.InvalidParameterValue(
            reason='driver_info agent_test_boot must be "agent" or '
                   '"boot_device", not %r' % boot)
    return spec


def _instance_marker(spec: dict[str, Any]) -> str:
    return os.path.join(spec['state_dir'], _INSTANCE_ON)


def machine_is_on(spec: dict[str, Any]) -> bool:
    """On: the agent's sandbox runs, or the instance "booted"."""
    return sandbox.is_running(spec) or os.path.exists(_instance_marker(spec))


def _boots_instance(task: 'Task') -> bool:
    """Whether a power on boots the instance (no agent)."""
    return bool(task.node.driver_info.get('agent_test_boot') == 'boot_device'
                and task.driver.management.get_boot_device(task).get(
                    'boot_device') == 'disk')


def _stand_by(uuid: str, spec: dict[str, Any]) -> None:
    try:
        sandbox.stand_by(spec)
    except sandbox.SandboxError as exc:
        # The next power on starts a sandbox the long way.
        LOG.warning('Agent test machine of node %s did not stand by: %s',
                    uuid, exc)


def machine_off(task: 'Task', spec: dict[str, Any]) -> None:
    """Stop the sandbox (and the instance): the machine is off; then, with
    ``standby`` and an agent to boot next, put it on standby in the
    background. A machine already off keeps its standby (the power off
    that starts a deploy comes before the boot device is set)."""
    if spec.get('standby') and not machine_is_on(spec):
        return
    try:
        sandbox.stop(spec)
    except sandbox.SandboxError as exc:
        raise exception.PowerStateFailure(node=task.node.uuid,
                                          state=states.POWER_OFF,
                                          reason=str(exc)) from exc
    if os.path.exists(_instance_marker(spec)):
        os.unlink(_instance_marker(spec))
    LOG.info('Agent test machine of node %s is off', task.node.uuid)
    if spec.get('standby') and not _boots_instance(task):
        threading.Thread(target=_stand_by, args=(task.node.uuid, spec),
                         daemon=True).start()


def machine_on(task: 'Task', spec: dict[str, Any],
               timeout: int | None = None) -> None:
    """Boot the machine: start the sandboxed agent (or the instance)."""
    if machine_is_on(spec):
        return
    if _boots_instance(task):
        open(_instance_marker(spec), 'w').close()
        LOG.info('Agent test machine of node %s booted its instance',
                 task.node.uuid)
        return
    try:
        sandbox.start(spec, timeout=timeout or sandbox.START_TIMEOUT)
    except sandbox.SandboxError as exc:
        raise exception.PowerStateFailure(node=task.node.uuid,
                                          state=states.POWER_ON,
                                          reason=str(exc)) from exc
    LOG.info('Agent test machine of node %s started its agent',
             task.node.uuid)


class AgentTestPower(base.PowerInterface):
    """Power of an agent test machine: its sandboxed agent runs or not."""

    def get_properties(self) -> dict[str, str]:
        return dict(PROPERTIES)

    def validate(self, task: 'Task') -> None:
        spec_of(task)

    def get_power_state(self, task: 'Task') -> str:
        return states.POWER_ON if machine_is_on(spec_of(task)) \
            else states.POWER_OFF

    def get_supported_power_states(self, task: 'Task') -> list[str]:
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT,
                states.SOFT_POWER_OFF, states.SOFT_REBOOT]

    def set_power_state(self, task: 'Task', power_state: str,
                        timeout: int | None = None) -> None:
        spec = spec_of(task)
        if power_state in (states.POWER_OFF, states.SOFT_POWER_OFF):
            machine_off(task, spec)
        elif power_state == states.POWER_ON:
            machine_on(task, spec, timeout)
        elif power_state in (states.REBOOT, states.SOFT_REBOOT):
            machine_off(task, spec)
            machine_on(task, spec, timeout)
        else:
            raise exception.InvalidParameterValue(
                reason='the agent-test power interface cannot set "%s"'
                       % power_state)

    def reboot(self, task: 'Task', timeout: int | None = None) -> None:
        self.set_power_state(task, states.REBOOT, timeout)
