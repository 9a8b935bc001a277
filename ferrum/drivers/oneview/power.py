# SPDX-License-Identifier: Apache-2.0
"""The ``oneview`` power interface: power through OneView's server hardware.

A power change is a OneView task the client waits for (up to ``[oneview]
task_timeout``), so it returns once the hardware reached the state. Hardware
a OneView user has is left alone: changing its power fails.
"""

import logging
from typing import TYPE_CHECKING

from oslo_config import cfg

from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers import base
from ferrum.drivers.oneview import allocation
from ferrum.drivers.oneview import client as client_mod
from ferrum.drivers.oneview import driver_info

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

LOG = logging.getLogger(__name__)

#: OneView powerState -> ferrum power state. A transition reports the state
#: before it, as upstream did: the change has not happened yet.
POWER_STATES = {'On': states.POWER_ON, 'Off': states.POWER_OFF,
                'PoweringOff': states.POWER_ON,
                'PoweringOn': states.POWER_OFF,
                'Resetting': states.POWER_ON}
#: ferrum target -> (request body, the OneView state it ends in).
_REQUESTS = {
    states.POWER_ON: ({'powerState': 'On', 'powerControl': 'MomentaryPress'},
                      'On'),
    states.POWER_OFF: (allocation.POWER_OFF, 'Off'),
    states.SOFT_POWER_OFF: ({'powerState': 'Off',
                             'powerControl': 'MomentaryPress'}, 'Off'),
}


class OneViewPower(base.PowerInterface):
    """Power of the node's server hardware, unless OneView's user has it."""

    def check_configuration(self, conf: cfg.ConfigOpts) -> None:
        """[oneview] must be complete; credentials are tried in the
        background (see ``client.check_configuration``)."""
        client_mod.check_configuration(conf)

    def get_properties(self) -> dict[str, str]:
        return dict(driver_info.PROPERTIES)

    def validate(self, task: 'Task') -> None:
        allocation.params(task)

    def get_power_state(self, task: 'Task') -> str:
        node = allocation.params(task)
        hardware = allocation.client_for(task).get_server_hardware(
            node.server_hardware_uri)
        return POWER_STATES.get(str(hardware.get('powerState')),
                                states.POWER_ERROR)

    def get_supported_power_states(self, task: 'Task') -> list[str]:
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT,
                states.SOFT_POWER_OFF]

    def set_power_state(self, task: 'Task', power_state: str,
                        timeout: int | None = None) -> None:
        if power_state not in _REQUESTS:
            raise exception.InvalidParameterValue(
                reason='The oneview power interface cannot set "%s"; it '
                       'supports %s' % (power_state, ', '.join(_REQUESTS)))
        self._change(task, power_state)

    def reboot(self, task: 'Task', timeout: int | None = None) -> None:
        """Off (unless already off), then on; each waits for its task."""
        self._change(task, states.POWER_OFF)
        self._change(task, states.POWER_ON)

    def _change(self, task: 'Task', target: str) -> None:
        node = allocation.params(task)
        ov = allocation.client_for(task)
        hardware = ov.get_server_hardware(node.server_hardware_uri)
        if allocation.owner(task, hardware, ov) == driver_info.ONEVIEW:
            raise exception.PowerStateFailure(
                node=task.node.uuid, state=target,
                reason='server hardware %s is in use by OneView (profile '
                       '%s); ferrum does not change its power'
                       % (node.server_hardware_uri,
                          hardware.get('serverProfileUri')))
        body, wanted = _REQUESTS[target]
        if hardware.get('powerState') == wanted:
            return
        ov.set_power_state(node.server_hardware_uri, body)
        LOG.info('Node %(node)s is %(state)s',
                 {'node': task.node.uuid, 'state': target})
