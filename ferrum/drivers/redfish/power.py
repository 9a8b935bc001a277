# SPDX-License-Identifier: Apache-2.0
"""The ``redfish`` power interface: ``ComputerSystem.Reset``.

A BMC acknowledges a reset long before the machine reaches the state (the
emulator shows it after 1 to 11 s), so every change reads the System every
``[redfish] power_poll_interval`` seconds until it shows the target or the
timeout passes, as Ironic's does: the request's timeout, else ``[conductor]
soft_power_off_timeout`` for a soft power off or soft reboot and
``power_state_change_timeout`` for the others. No read starts after the
deadline.
"""

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers import base
from ferrum.drivers.interfaces import power as power_iface
from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import driver_info

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

LOG = logging.getLogger(__name__)

#: Redfish PowerState -> ferrum; a transition reports where it goes, as
#: Ironic does.
POWER_STATES = {client.PowerState.ON: states.POWER_ON,
                client.PowerState.POWERING_ON: states.POWER_ON,
                client.PowerState.OFF: states.POWER_OFF,
                client.PowerState.POWERING_OFF: states.POWER_OFF}
#: ferrum target -> (Redfish reset type, the state to wait for).
_RESETS = {
    states.POWER_ON: (client.ResetType.ON, states.POWER_ON),
    states.POWER_OFF: (client.ResetType.FORCE_OFF, states.POWER_OFF),
    states.SOFT_POWER_OFF: (client.ResetType.GRACEFUL_SHUTDOWN,
                            states.POWER_OFF),
    states.REBOOT: (client.ResetType.FORCE_RESTART, states.POWER_ON),
    states.SOFT_REBOOT: (client.ResetType.GRACEFUL_RESTART, states.POWER_ON),
}


def params(task: 'Task') -> driver_info.RedfishParams:
    return driver_info.parse(task.node.driver_info)


def read_power_state(task: 'Task') -> str:
    """The System's power state, as a ferrum power state."""
    state = client.call(task.ctx.conf, params(task), 'reading the power '
                        'state', lambda system: system.power_state)
    return POWER_STATES.get(state, states.POWER_ERROR)


class RedfishPower(client.ClosesSessions, base.PowerInterface):
    """Power of the node's Redfish System."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._clock = clock
        self._sleep = sleep

    def get_properties(self) -> dict[str, str]:
        return dict(driver_info.PROPERTIES)

    def validate(self, task: 'Task') -> None:
        params(task)

    def get_power_state(self, task: 'Task') -> str:
        return read_power_state(task)

    def get_supported_power_states(self, task: 'Task') -> list[str]:
        return list(_RESETS)

    def set_power_state(self, task: 'Task', power_state: str,
                        timeout: int | None = None) -> None:
        if power_state not in _RESETS:
            raise exception.InvalidParameterValue(
                reason='The redfish power interface cannot set "%s"; it '
                       'supports %s' % (power_state, ', '.join(_RESETS)))
        target = power_state
        current = read_power_state(task)
        if power_state in (states.REBOOT, states.SOFT_REBOOT):
            if current != states.POWER_ON:
                # Restarting an off machine is refused by some BMCs; a
                # reboot of an off node means "turn it on".
                target = states.POWER_ON
        elif current == _RESETS[power_state][1]:
            return  # idempotent; some BMCs refuse "off" when off
        self._reset(task, target, timeout)

    def reboot(self, task: 'Task', timeout: int | None = None) -> None:
        self.set_power_state(task, states.REBOOT, timeout)

    def _reset(self, task: 'Task', target: str, timeout: int | None) -> None:
        reset, wanted = _RESETS[target]
        bmc = params(task)
        limit = power_iface.change_timeout(task.ctx.conf, target, timeout)
        # The timeout bounds the whole change, the reset included.
        deadline = self._clock() + limit

        def do_reset(system: Any) -> None:
            system.reset_system(reset)
        client.call(task.ctx.conf, bmc, 'reset %s' % reset.value, do_reset)
        interval = task.ctx.conf.redfish.power_poll_interval
        while True:
            current = read_power_state(task)
            if current == wanted:
                LOG.info('Node %(node)s is %(state)s after %(reset)s',
                         {'node': task.node.uuid, 'state': wanted,
                          'reset': reset.value})
                return
            remaining = deadline - self._clock()
            if remaining > 0:
                self._sleep(min(interval, remaining))
            # Checked before the next read, not only after one: a read
            # begun at the deadline would overrun it by up to a request's
            # timeout (and its retries).
            if self._clock() >= deadline:
                raise exception.PowerStateFailure(
                    node=task.node.uuid, state=target,
                    reason='BMC %s still reported "%s" %ds after %s'
                    % (bmc.address, current, limit, reset.value))
