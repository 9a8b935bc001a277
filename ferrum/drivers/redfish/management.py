# SPDX-License-Identifier: Apache-2.0
"""The ``redfish`` management interface: the System's boot override.

The boot device is ``Boot.BootSourceOverrideTarget``, one-time
(``Once``) or persistent (``Continuous``). Boot mode (UEFI or legacy) and
secure boot are read and set where the BMC has them; a BMC without them
answers with :class:`~ferrum.drivers.redfish.errors.RedfishUnsupported`.

Virtual media devices are attached, detached and listed for the node
API (1.89, 1.93) by :mod:`ferrum.drivers.redfish.vmedia_devices`.

The manual clean step ``set_bmc_clock`` (Ironic's) sets the clock of the
System's Manager; a BMC that runs it as a task makes the node wait in
``clean wait`` (:mod:`ferrum.drivers.redfish.tasks`).
"""

import datetime
from typing import TYPE_CHECKING, Any

from ferrum.common import exception
from ferrum.drivers import base
from ferrum.drivers import steps
from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors
from ferrum.drivers.redfish import power
from ferrum.drivers.redfish import tasks
from ferrum.drivers.redfish import vmedia_devices

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


#: How far the clock a BMC shows may be from the one it was set to (it
#: ticks between the PATCH and the read).
_CLOCK_TOLERANCE = datetime.timedelta(seconds=10)


class RedfishManagement(client.ClosesSessions, tasks.TaskPolling,
                        base.ManagementInterface):
    """Boot device, boot mode and secure boot of the node's System, and the
    clock of its Manager."""

    def get_properties(self) -> dict[str, str]:
        return dict(driver_info.PROPERTIES)

    def validate(self, task: 'Task') -> None:
        power.params(task)

    def get_supported_boot_devices(self, task: 'Task') -> list[str]:
        return list(BOOT_DEVICES)

    def attach_virtual_media(self, task: 'Task', device_type: str,
                             image_url: str) -> None:
        vmedia_devices.attach(task, device_type, image_url)

    def detach_virtual_media(self, task: 'Task',
                             device_types: list[str] | None = None) -> None:
        vmedia_devices.detach(task, device_types)

    def get_virtual_media(self, task: 'Task') -> list[dict[str, Any]]:
        return vmedia_devices.listing(task)

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

    def inject_nmi(self, task: 'Task') -> None:
        """The System's ``Nmi`` reset (sushy's ``RESET_NMI``); a BMC that
        does not implement it answers with its own error."""
        client.call(task.ctx.conf, power.params(task), 'injecting an NMI',
                    lambda system: system.reset_system(client.ResetType.NMI))

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

    @steps.clean_step(priority=0, argsinfo={
        'target_datetime': {
            'description': 'The time to set, ISO 8601 with its UTC offset '
                           '(2026-11-28T09:30:00+01:00; without one it is '
                           'UTC). Default: the conductor\'s time, in UTC.',
            'required': False},
        'datetime_local_offset': {
            'description': 'The BMC\'s local offset from UTC, "+HH:MM" or '
                           '"-HH:MM". Default: the offset of '
                           'target_datetime.',
            'required': False}})
    def set_bmc_clock(self, task: 'Task', target_datetime: str | None = None,
                      datetime_local_offset: str | None = None
                      ) -> str | None:
        """Set the clock of the BMC (the System's first Manager).

        Done when the BMC shows the time set (within a few seconds); when it
        answers with a task monitor, the node waits in ``clean wait`` until
        the task ends.
        """
        when = _target_time(task, target_datetime)
        offset = _offset(datetime_local_offset, when)
        bmc = power.params(task)

        def set_clock(system: Any) -> str | None:
            return client.send(_manager(system, bmc), 'PATCH', {
                'DateTime': when.isoformat(),
                'DateTimeLocalOffset': offset})
        monitor = client.call(task.ctx.conf, bmc, 'setting the BMC clock',
                              set_clock)
        if monitor:
            return tasks.wait(task, self.kind,
                              'clean step management.set_bmc_clock', monitor)
        shown = client.call(task.ctx.conf, bmc, 'reading the BMC clock',
                            lambda system: _manager(system, bmc).datetime)
        try:
            seen = datetime.datetime.fromisoformat(str(shown))
            drift = abs(seen - when) if seen.tzinfo else None
        except ValueError:
            drift = None
        if drift is None or drift > _CLOCK_TOLERANCE:
            raise errors.RedfishError(
                address=bmc.address, action='setting the BMC clock',
                reason='it shows %s after being set to %s' % (
                    str(shown)[:64], when.isoformat()))
        return None


def _manager(system: Any, bmc: driver_info.RedfishParams) -> Any:
    managers = system.managers
    if not managers:
        raise errors.RedfishUnsupported(
            address=bmc.address, action='setting the BMC clock',
            reason='the System links no Manager (Links.ManagedBy)')
    return managers[0]


def _target_time(task: 'Task', value: str | None) -> datetime.datetime:
    if value is None:
        now = task.ctx.clock().replace(microsecond=0)
        return now.replace(tzinfo=datetime.timezone.utc)
    try:
        when = datetime.datetime.fromisoformat(str(value))
    except ValueError:
        raise exception.InvalidParameterValue(
            reason='set_bmc_clock: target_datetime "%s" is not an ISO 8601 '
                   'time such as 2026-11-28T09:30:00+01:00'
                   % str(value)[:64]) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.replace(microsecond=0)


def _offset(value: str | None, when: datetime.datetime) -> str:
    if value is None:
        return when.isoformat()[-6:]  # "+HH:MM" of an aware time
    text = str(value)
    try:
        parsed = datetime.datetime.strptime(text, '%z') if (
            len(text) == 6 and text[0] in '+-' and text[3] == ':') else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise exception.InvalidParameterValue(
            reason='set_bmc_clock: datetime_local_offset "%s" is not an '
                   'offset such as +01:00 or -05:30' % text[:32])
    return text
