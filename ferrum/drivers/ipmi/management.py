# SPDX-License-Identifier: Apache-2.0
"""The ``ipmitool`` management interface: the boot device, and NMIs.

UEFI nodes (``properties/capabilities`` holds ``boot_mode:uefi``) get the
boot flags as raw bytes, because ``chassis bootdev`` of older ipmitool
cannot combine the EFI and persistent bits; others get ``chassis bootdev``.
The current device is read from the raw data of ``chassis bootparam get
5``, which is steadier across ipmitool versions than its prose.
"""

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ferrum.common import exception
from ferrum.drivers import base
from ferrum.drivers.ipmi import driver_info
from ferrum.drivers.ipmi import power
from ferrum.drivers.ipmi import runner

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

#: ferrum device -> device selector of boot option parameter 5 (byte 1).
DEVICE_CODES = {'pxe': 0x04, 'disk': 0x08, 'safe': 0x0c, 'cdrom': 0x14,
                'bios': 0x18}
_DEVICES_BY_SELECTOR = {code >> 2: name for name, code in DEVICE_CODES.items()}
_VALID, _PERSISTENT, _EFI = 0x80, 0x40, 0x20


def is_uefi(node_properties: Mapping[str, Any]) -> bool:
    """Whether the node's capabilities say it boots in UEFI mode."""
    capabilities = node_properties.get('capabilities') or ''
    if isinstance(capabilities, dict):
        return str(capabilities.get('boot_mode', '')).lower() == 'uefi'
    pairs = (item.split(':', 1) for item in str(capabilities).split(','))
    return any(len(pair) == 2 and pair[0].strip() == 'boot_mode'
               and pair[1].strip().lower() == 'uefi' for pair in pairs)


def decode_boot_flags(data: str) -> dict[str, Any]:
    """Parse the hex of boot option parameter 5, e.g. ``c004000000``."""
    flags, selector = int(data[0:2], 16), int(data[2:4], 16)
    device = (_DEVICES_BY_SELECTOR.get((selector >> 2) & 0x0f)
              if flags & _VALID else None)
    return {'boot_device': device,
            'persistent': bool(flags & _PERSISTENT) if device else None,
            'uefi': bool(flags & _EFI)}


class IpmitoolManagement(base.ManagementInterface):
    """Boot device through ipmitool; the BMC keeps it, ferrum does not."""

    def __init__(self) -> None:
        runner.check_version()

    def get_properties(self) -> dict[str, str]:
        return dict(driver_info.PROPERTIES)

    def validate(self, task: 'Task') -> None:
        power.params(task)

    def get_supported_boot_devices(self, task: 'Task') -> list[str]:
        return list(DEVICE_CODES)

    def set_boot_device(self, task: 'Task', device: str,
                        persistent: bool = False) -> None:
        if device not in DEVICE_CODES:
            raise exception.InvalidParameterValue(
                reason='Boot device "%s" is not supported by the ipmitool '
                       'management interface; use one of %s' % (
                           device, ', '.join(DEVICE_CODES)))
        bmc = power.params(task)
        ipmi = runner.IpmitoolRunner(task.ctx.conf)
        disable_timeout = (bmc.disable_boot_timeout
                           if bmc.disable_boot_timeout is not None
                           else task.ctx.conf.ipmi.disable_boot_timeout)
        if disable_timeout:
            # Without this the BMC forgets the device after 60 seconds
            # (IPMI boot option parameter 3, "boot info acknowledge").
            ipmi.run(bmc, 'raw', '0x00', '0x08', '0x03', '0x08')
        if is_uefi(task.node.properties):
            flags = _VALID | _EFI | (_PERSISTENT if persistent else 0)
            ipmi.run(bmc, 'raw', '0x00', '0x08', '0x05', '0x%02x' % flags,
                     '0x%02x' % DEVICE_CODES[device], '0x00', '0x00', '0x00')
        else:
            command = ['chassis', 'bootdev', device]
            if persistent:
                command.append('options=persistent')
            ipmi.run(bmc, *command)

    def get_boot_device(self, task: 'Task') -> dict[str, Any]:
        bmc = power.params(task)
        output = runner.IpmitoolRunner(task.ctx.conf).run(
            bmc, 'chassis', 'bootparam', 'get', '5')
        match = re.search(r'Boot parameter data:\s*([0-9a-fA-F]{4,})', output)
        if match is None:
            raise runner.IpmiParseError(
                command='chassis bootparam get 5', bmc=bmc.bmc,
                reason='no "Boot parameter data" line')
        flags = decode_boot_flags(match.group(1))
        return {'boot_device': flags['boot_device'],
                'persistent': flags['persistent']}

    def inject_nmi(self, task: 'Task') -> None:
        """``chassis power diag``: the BMC pulses a diagnostic interrupt."""
        runner.IpmitoolRunner(task.ctx.conf).run(power.params(task),
                                                 'chassis', 'power', 'diag')
