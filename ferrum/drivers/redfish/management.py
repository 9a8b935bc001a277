# SPDX-License-Identifier: Apache-2.0
"""The ``redfish`` management interface: the System's boot override.

The boot device is ``Boot.BootSourceOverrideTarget``, one-time
(``Once``) or persistent (``Continuous``). Boot mode (UEFI or legacy) and
secure boot are read and set where the BMC has them; a BMC without them
answers with :class:`~ferrum.drivers.redfish.errors.RedfishUnsupported`.
"""

from typing import TYPE_CHECKING, Any

from ferrum.common import exception
from ferrum.drivers import base
from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors
from ferrum.drivers.redfish import power

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

#: ferrum boot device -> Redfish BootSourceOverrideTarget.
BOOT_DEVICES = {'pxe': client.BootSource.PXE, 'disk': client.BootSource.HDD,
                'cdrom': client.BootSource.CD,
                'bios': client.BootSource.BIOS_SETUP}
_DEVICES_BY_TARGET = {target: name for name, target in BOOT_DEVICES.items()}
#: ferrum boot mode -> Redfish BootSourceOverrideMode (Ironic's names).
BOOT_MODES = {'uefi': client.BootSourceOverrideMode.UEFI,
              'bios': client.BootSourceOverrideMode.LEGACY}
_MODES_BY_VALUE = {mode: name for name, mode in BOOT_MODES.items()}


class RedfishManagement(base.ManagementInterface):
    """Boot device, boot mode and secure boot of the node's System."""

    def get_properties(self) -> dict[str, str]:
        return dict(driver_info.PROPERTIES)

    def validate(self, task: 'Task') -> None:
        power.params(task)

    def get_supported_boot_devices(self, task: 'Task') -> list[str]:
        return list(BOOT_DEVICES)

    def set_boot_device(self, task: 'Task', device: str,
                        persistent: bool = False) -> None:
        if device not in BOOT_DEVICES:
            raise exception.InvalidParameterValue(
                reason='Boot device "%s" is not supported by the redfish '
                       'management interface; use one of %s' % (
                           device[:100], ', '.join(BOOT_DEVICES)))
        enabled = (client.BootSourceOverrideEnabled.CONTINUOUS if persistent
                   else client.BootSourceOverrideEnabled.ONCE)
        bmc = power.params(task)
        target = BOOT_DEVICES[device]

        def set_device(system: Any) -> None:
            # Checked here to name the device and the BMC's choices in
            # Redfish's words; sushy's refusal prints Python enums.
            allowed = system.get_allowed_system_boot_source_values()
            if allowed and target not in allowed:
                raise errors.RedfishUnsupported(
                    address=bmc.address, action='boot device %s' % device,
                    reason='it has no boot source %s; it allows %s' % (
                        target.value, ', '.join(sorted(
                            value.value for value in allowed))))
            system.set_system_boot_options(target=target, enabled=enabled)
        client.call(task.ctx.conf, bmc, 'setting the boot device', set_device)

    def get_boot_device(self, task: 'Task') -> dict[str, Any]:
        def read(system: Any) -> dict[str, Any]:
            enabled = system.boot.enabled
            device = (_DEVICES_BY_TARGET.get(system.boot.target)
                      if enabled != client.BootSourceOverrideEnabled.DISABLED
                      else None)
            return {'boot_device': device,
                    'persistent': (enabled == client.BootSourceOverrideEnabled
                                   .CONTINUOUS) if device else None}
        return client.call(task.ctx.conf, power.params(task),
                           'reading the boot device', read)

    def get_supported_boot_modes(self, task: 'Task') -> list[str]:
        return list(BOOT_MODES)

    def get_boot_mode(self, task: 'Task') -> str | None:
        """``uefi``, ``bios``, or None when the BMC does not say."""
        mode = client.call(task.ctx.conf, power.params(task),
                           'reading the boot mode',
                           lambda system: system.boot.mode)
        return _MODES_BY_VALUE.get(mode)

    def set_boot_mode(self, task: 'Task', mode: str) -> None:
        if mode not in BOOT_MODES:
            raise exception.InvalidParameterValue(
                reason='Boot mode "%s" is not one of %s' % (
                    mode[:100], ', '.join(BOOT_MODES)))

        def set_mode(system: Any) -> None:
            system.set_system_boot_options(mode=BOOT_MODES[mode])
        client.call(task.ctx.conf, power.params(task),
                    'setting the boot mode', set_mode)

    def get_secure_boot_state(self, task: 'Task') -> bool:
        return bool(client.call(task.ctx.conf, power.params(task),
                                'reading the secure boot state',
                                lambda system: system.secure_boot.enabled))

    def set_secure_boot_state(self, task: 'Task', enabled: bool) -> None:
        def set_state(system: Any) -> None:
            system.secure_boot.set_enabled(bool(enabled))
        client.call(task.ctx.conf, power.params(task),
                    'setting secure boot', set_state)
