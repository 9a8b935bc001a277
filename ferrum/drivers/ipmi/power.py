# SPDX-License-Identifier: Apache-2.0
"""The ``ipmitool`` power interface.

Every change is followed by reading the power state until the BMC reports
the target (every ``[ipmi] power_poll_interval`` seconds) or the timeout
passes: a BMC acknowledges "power off" long before the machine is off.
"""

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers import base
from ferrum.drivers.interfaces import power as power_iface
from ferrum.drivers.ipmi import driver_info
from ferrum.drivers.ipmi import runner

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

LOG = logging.getLogger(__name__)

_STATUS = {'Chassis Power is on': states.POWER_ON,
           'Chassis Power is off': states.POWER_OFF}
#: Target -> (ipmitool subcommand, the state to wait for).
_COMMANDS = {states.POWER_ON: ('on', states.POWER_ON),
             states.POWER_OFF: ('off', states.POWER_OFF),
             states.SOFT_POWER_OFF: ('soft', states.POWER_OFF)}


def params(task: 'Task') -> driver_info.IpmiParams:
    return driver_info.parse(task.node.driver_info)


def power_state(ipmi: runner.IpmitoolRunner,
                bmc: driver_info.IpmiParams) -> str:
    """The BMC's answer to ``power status``, as a ferrum power state."""
    output = ipmi.run(bmc, 'power', 'status')
    for line in output.splitlines():
        state = _STATUS.get(line.strip())
        if state is not None:
            return state
    raise runner.IpmiParseError(command='power status', bmc=bmc.bmc,
                                reason=repr(output.strip()[:200]))


class IpmitoolPower(base.PowerInterface):
    """Power through ipmitool, for nodes whose driver_info names a BMC."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        # Loaded once per conductor: a missing ipmitool stops the start-up
        # with a clear message instead of failing every node later.
        runner.check_version()
        self._clock = clock
        self._sleep = sleep

    def get_properties(self) -> dict[str, str]:
        return dict(driver_info.PROPERTIES)

    def validate(self, task: 'Task') -> None:
        params(task)

    def get_power_state(self, task: 'Task') -> str:
        return power_state(runner.IpmitoolRunner(task.ctx.conf), params(task))

    def get_supported_power_states(self, task: 'Task') -> list[str]:
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT,
                states.SOFT_POWER_OFF]

    def set_power_state(self, task: 'Task', power_state: str,
                        timeout: int | None = None) -> None:
        if power_state not in _COMMANDS:
            raise exception.InvalidParameterValue(
                reason='The ipmitool power interface cannot set "%s"; it '
                       'supports %s' % (power_state, ', '.join(_COMMANDS)))
        ipmi = runner.IpmitoolRunner(task.ctx.conf)
        self._change(task, ipmi, params(task), power_state,
                     power_iface.change_timeout(task.ctx.conf, power_state,
                                                timeout))

    def reboot(self, task: 'Task', timeout: int | None = None) -> None:
        """Off (unless already off), then on, waiting for each.

        ``power cycle`` is not used: some BMCs refuse it while the machine
        is off, and a reboot must also turn an off node on.
        """
        ipmi = runner.IpmitoolRunner(task.ctx.conf)
        bmc = params(task)
        timeout = power_iface.change_timeout(task.ctx.conf, states.REBOOT,
                                             timeout)
        self._change(task, ipmi, bmc, states.POWER_OFF, timeout)
        self._change(task, ipmi, bmc, states.POWER_ON, timeout)

    def _change(self, task: 'Task', ipmi: runner.IpmitoolRunner,
                bmc: driver_info.IpmiParams, target: str,
                timeout: float) -> None:
        command, wanted = _COMMANDS[target]
        # Asking an off machine to turn off is an error on some BMCs.
        if power_state(ipmi, bmc) == wanted:
            return
        ipmi.run(bmc, 'power', command)
        deadline = self._clock() + timeout
        while True:
            current = power_state(ipmi, bmc)
            if current == wanted:
                LOG.info('Node %(node)s is %(state)s',
                         {'node': task.node.uuid, 'state': wanted})
                return
            if self._clock() >= deadline:
                raise exception.PowerStateFailure(
                    node=task.node.uuid, state=target,
                    reason='BMC %s still reported "%s" after %.0fs' % (
                        bmc.bmc, current, timeout))
            self._sleep(task.ctx.conf.ipmi.power_poll_interval)
