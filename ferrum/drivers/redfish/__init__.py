# SPDX-License-Identifier: Apache-2.0
"""The ``redfish`` hardware type: power and boot through a Redfish BMC.

Enable it with ``enabled_hardware_types = redfish``,
``enabled_power_interfaces = redfish``, ``enabled_management_interfaces =
redfish`` and ``enabled_deploy_interfaces = ramdisk``. It needs the sushy
library (``pip install "ferrum[redfish]"``): without it the conductor
refuses to start and names the missing library. Booting, by boot
interface: ``redfish-virtual-media`` (when in ``enabled_boot_interfaces``)
inserts ISO images into the BMC's virtual CD and boots from it (see
:mod:`ferrum.drivers.redfish.vmedia`); ``noop`` is network boot through
the boot device, as for ``ipmi`` (the ``ramdisk`` deploy sets PXE).
Out-of-band inspection (``enabled_inspect_interfaces = redfish``) fills
CPUs, memory and disk from the System and adds a port per NIC. A BMC
operation answered with a task monitor makes the node wait, polled by a
periodic task (:mod:`ferrum.drivers.redfish.tasks`). The ``redfish``
firmware interface (``enabled_firmware_interfaces = redfish``) reads the
BIOS and BMC versions into the node's firmware list
(:mod:`ferrum.drivers.redfish.firmware`).
See doc/redfish.md; the node fields are in
:mod:`ferrum.drivers.redfish.driver_info`.
"""

import importlib

from ferrum.drivers import hardware_type


class RedfishHardware(hardware_type.AbstractHardwareType):
    """Any machine whose BMC speaks Redfish."""

    def __init__(self) -> None:
        # Loaded once per conductor: without sushy the start-up stops here,
        # naming the library, instead of every node failing later.
        importlib.import_module('ferrum.drivers.redfish.client')

    @property
    def supported_power_interfaces(self) -> list[str]:
        return ['redfish']

    @property
    def supported_management_interfaces(self) -> list[str]:
        return ['redfish', 'noop']

    @property
    def supported_deploy_interfaces(self) -> list[str]:
        return ['direct', 'ramdisk', 'fake']

    @property
    def supported_boot_interfaces(self) -> list[str]:
        return ['redfish-virtual-media', 'noop', 'fake']

    @property
    def supported_inspect_interfaces(self) -> list[str]:
        return ['redfish', 'noop']

    @property
    def supported_network_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_firmware_interfaces(self) -> list[str]:
        return ['redfish', 'no-firmware']
