# SPDX-License-Identifier: Apache-2.0
"""``redfish-agent-test``: an agent test machine behind a Redfish BMC.

Every power change is first made through the BMC, as ferrum's ``redfish``
power interface does (against sushy-tools' emulator in the tests), then
the machine follows: on (or a reboot) starts the sandboxed agent, off
stops it (:mod:`agent_test_driver.power`). The power state is the BMC's:
an agent that died leaves the BMC on, as a crashed ramdisk would. Needs
sushy, as the ``redfish`` hardware type does (checked when the conductor
loads the type).
"""

from typing import TYPE_CHECKING

from agent_test_driver import power as agent_power
from ferrum.common import states
from ferrum.drivers import redfish
from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import power as redfish_power

if TYPE_CHECKING:
    from ferrum.drivers.base import Task


class RedfishAgentTestHardware(redfish.RedfishHardware):
    """A Redfish machine whose power boots the sandboxed agent."""

    @property
    def supported_power_interfaces(self) -> list[str]:
        return ['redfish-agent-test']

    @property
    def supported_management_interfaces(self) -> list[str]:
        return ['redfish']

    @property
    def supported_boot_interfaces(self) -> list[str]:
        return ['redfish-virtual-media']

    @property
    def supported_deploy_interfaces(self) -> list[str]:
        return ['direct']

    @property
    def supported_inspect_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_vendor_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_network_interfaces(self) -> list[str]:
        return ['noop']


class RedfishAgentTestPower(redfish_power.RedfishPower):
    """Redfish power, then the agent test machine follows it."""

    def get_properties(self) -> dict[str, str]:
        return dict(driver_info.PROPERTIES, **agent_power.PROPERTIES)

    def validate(self, task: 'Task') -> None:
        super().validate(task)
        agent_power.spec_of(task)

    def set_power_state(self, task: 'Task', power_state: str,
                        timeout: int | None = None) -> None:
        spec = agent_power.spec_of(task)
        super().set_power_state(task, power_state, timeout)
        if power_state in (states.POWER_OFF, states.SOFT_POWER_OFF):
            agent_power.machine_off(task, spec)
        elif power_state == states.POWER_ON:
            agent_power.machine_on(task, spec, timeout)
        else:  # REBOOT, SOFT_REBOOT: the BMC restarted the machine
            agent_power.machine_off(task, spec)
            agent_power.machine_on(task, spec, timeout)
