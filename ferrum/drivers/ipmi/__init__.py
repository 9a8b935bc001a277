# SPDX-License-Identifier: Apache-2.0
"""The ``ipmi`` hardware type: power and boot device through ipmitool.

Enable it with ``enabled_hardware_types = ipmi``, ``enabled_power_interfaces
= ipmitool``, ``enabled_management_interfaces = ipmitool`` and
``enabled_deploy_interfaces = direct`` (ironic-python-agent writes an image:
see doc/deploy.md) or ``ramdisk`` (plus ``fake`` ones for tests).
``driver_info`` is described in :mod:`ferrum.drivers.ipmi.driver_info`.
"""

from ferrum.drivers import hardware_type


class IPMIHardware(hardware_type.AbstractHardwareType):
    """Any machine with an IPMI 2.0 BMC."""

    @property
    def supported_power_interfaces(self) -> list[str]:
        return ['ipmitool']

    @property
    def supported_management_interfaces(self) -> list[str]:
        return ['ipmitool', 'noop']

    @property
    def supported_deploy_interfaces(self) -> list[str]:
        return ['direct', 'ramdisk', 'fake']

    @property
    def supported_boot_interfaces(self) -> list[str]:
        return ['noop', 'fake']

    @property
    def supported_network_interfaces(self) -> list[str]:
        return ['noop']
