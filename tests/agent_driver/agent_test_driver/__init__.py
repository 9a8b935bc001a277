# SPDX-License-Identifier: Apache-2.0
"""Test machines that run the real ironic-python-agent.

The ``agent-test`` hardware type powers a machine by starting or stopping
its sandboxed agent (:mod:`agent_test_driver.power`); management and boot
are ferrum's fake ones, deploy is ``direct`` (ferrum's agent deploy).
``redfish-agent-test`` (:mod:`agent_test_driver.redfish`) does the same
behind a real Redfish BMC (sushy-tools' emulator). Enable them with
``enabled_hardware_types = agent-test`` and ``enabled_power_interfaces =
agent-test`` (plus ``direct`` in ``enabled_deploy_interfaces``).
"""

from ferrum.drivers import hardware_type


class AgentTestHardware(hardware_type.AbstractHardwareType):
    """A machine whose power button boots the sandboxed agent."""

    @property
    def supported_power_interfaces(self) -> list[str]:
        return ['agent-test']

    @property
    def supported_management_interfaces(self) -> list[str]:
        return ['fake']

    @property
    def supported_boot_interfaces(self) -> list[str]:
        return ['fake', 'noop']

    @property
    def supported_deploy_interfaces(self) -> list[str]:
        return ['direct', 'fake']

    @property
    def supported_inspect_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_vendor_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_network_interfaces(self) -> list[str]:
        return ['noop']
