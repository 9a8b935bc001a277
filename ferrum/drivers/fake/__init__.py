# SPDX-License-Identifier: Apache-2.0
"""The ``fake-hardware`` type: every interface fake, for tests and demos."""

from ferrum.drivers import hardware_type


class FakeHardware(hardware_type.AbstractHardwareType):
    """A machine that exists only in the database; nothing is contacted."""

    @property
    def supported_power_interfaces(self) -> list[str]:
        return ['fake']

    @property
    def supported_management_interfaces(self) -> list[str]:
        return ['fake', 'noop']

    @property
    def supported_deploy_interfaces(self) -> list[str]:
        return ['fake', 'direct']

    @property
    def supported_boot_interfaces(self) -> list[str]:
        return ['fake', 'noop']

    @property
    def supported_network_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_inspect_interfaces(self) -> list[str]:
        return ['fake', 'noop']

    @property
    def supported_vendor_interfaces(self) -> list[str]:
        return ['fake', 'noop']

    @property
    def supported_firmware_interfaces(self) -> list[str]:
        return ['fake', 'no-firmware']
