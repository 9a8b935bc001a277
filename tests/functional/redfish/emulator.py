# SPDX-License-Identifier: Apache-2.0
"""The real ``sushy-emulator`` for the redfish tests: tools/redfish_emulator.py
(one child process on loopback, HTTP Basic auth, optionally TLS and change
notifications) with what the fixtures need on top.

``Emulator(directory, systems, tls=None, notify_url=None, nics=1,
inventory=None, crash_on=None, power_delay=POWER_DELAY)``: ``start()``,
``stop()`` (the state directory is kept, so a restart keeps the Systems'
power and boot),
``url``, ``uuids``, ``username``/``password``, ``system(uuid)``,
``macs(uuid)`` and ``get(path)`` (what the emulator itself serves, read
with requests), ``driver_info(uuid, **extra)``. ``REDFISH_CONF`` and
``apply_conf(conf)`` enable the redfish hardware type on a test's conductor
configuration.

With ``inventory=Inventory(...)`` every System also reports processors and
memory (the emulator behind inventory_emulator.py's middleware) and disks
(the emulator's own Storage options); ``crash_on`` (a path suffix) makes
that process exit when asked for it.

A power change shows within a second (``POWER_DELAY``, the fake driver's
delay set through tools/redfish_emulator.py), rather than after the fake
driver's own 1-11 s: the driver still waits for every change it asks for,
and no test here measures the delay. ``power_delay=None`` keeps 1-11 s;
the inventory emulator always does (it serves the emulator's app itself).
"""

import dataclasses
import pathlib
import sys
from typing import Any

from tests.certificates import Files
from tests.real import require_real
from tools import redfish_emulator

_INVENTORY_EMULATOR = pathlib.Path(__file__).with_name('inventory_emulator.py')
GIB = 1024 ** 3
#: The fake driver's power delay in the tests: shown within a second.
POWER_DELAY = (1, 1)


@dataclasses.dataclass(frozen=True)
class Inventory:
    """The hardware every System reports, beyond the emulator's own."""

    sockets: int = 2
    threads_per_socket: int = 8
    memory_gib: int = 32
    model: str = 'Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz'
    #: Drives of the System's one Storage, in GiB.
    disks_gib: tuple[int, ...] = (2, 480, 120)
    #: The System's BiosVersion; None leaves the emulator's (none).
    bios_version: str | None = None

    def storage_options(self, uuids: list[str]) -> dict[str, Any]:
        """The emulator's own options giving each System these drives."""
        drives = [{'Id': 'disk%d' % n, 'Name': 'Disk %d' % n,
                   'CapacityBytes': size * GIB, 'Protocol': 'SAS'}
                  for n, size in enumerate(self.disks_gib)]
        return {
            'SUSHY_EMULATOR_STORAGE': {uuid: [{
                'Id': '1', 'Name': 'Local Storage Controller',
                'StorageControllers': [],
                'Drives': [drive['Id'] for drive in drives]}]
                for uuid in uuids},
            'SUSHY_EMULATOR_DRIVES': {(uuid, '1'): drives for uuid in uuids},
            # No volumes: without this the emulator answers 500.
            'SUSHY_EMULATOR_VOLUMES': {(uuid, '1'): [] for uuid in uuids}}


class Emulator(redfish_emulator.RedfishEmulator):

    def __init__(self, directory: pathlib.Path, systems: int = 1,
                 tls: Files | None = None, notify_url: str | None = None,
                 nics: int = 1, inventory: Inventory | None = None,
                 crash_on: str | None = None,
                 power_delay: tuple[int, int] | None = POWER_DELAY) -> None:
        if redfish_emulator.BINARY is None:
            require_real('sushy-emulator (pip install sushy-tools)')
        self.tls = tls
        self.inventory = inventory
        self.crash_on = crash_on
        super().__init__(
            directory, systems, notify_url=notify_url, nics=nics,
            tls_cert=str(tls.cert) if tls else None,
            tls_key=str(tls.key) if tls else None,
            ca_file=str(tls.ca) if tls else None,
            power_delay=None if inventory else power_delay)

    def command(self) -> list[str]:
        if self.inventory:
            return [sys.executable, str(_INVENTORY_EMULATOR)]
        return super().command()

    def extra_config(self) -> dict[str, Any]:
        if not self.inventory:
            return {}
        lines = self.inventory.storage_options(self.uuids)
        lines['FERRUM_INVENTORY'] = dataclasses.asdict(self.inventory)
        lines['FERRUM_CRASH_ON'] = self.crash_on
        return lines

    def macs(self, uuid: str) -> list[str]:
        """The MACAddress of each of the System's EthernetInterfaces."""
        nics = self.get(self.system(uuid)['EthernetInterfaces']['@odata.id'])
        return sorted(self.get(member['@odata.id'])['MACAddress']
                      for member in nics['Members'])

    def driver_info(self, uuid: str, **extra: Any) -> dict[str, Any]:
        info = {'redfish_address': self.url, 'redfish_system_id': uuid,
                'redfish_username': self.username,
                'redfish_password': self.password}
        if self.tls:
            info['redfish_verify_ca'] = str(self.tls.ca)
        info.update(extra)
        return info


REDFISH_CONF = {
    'DEFAULT': {'enabled_hardware_types': ['fake-hardware', 'redfish'],
                'enabled_power_interfaces': ['fake', 'redfish'],
                'enabled_management_interfaces': ['fake', 'noop', 'redfish'],
                'enabled_inspect_interfaces': ['fake', 'noop', 'redfish'],
                'enabled_deploy_interfaces': ['fake', 'ramdisk']},
    'redfish': {'power_poll_interval': 0.2, 'connect_timeout': 2.0,
                'request_timeout': 30.0, 'server_side_retries_delay': 0.1},
    # An emulator with power_delay=None shows a power change after up to
    # 11 s: generous on a loaded machine.
    'conductor': {'power_state_change_timeout': 90},
}


def apply_conf(conf, overrides=REDFISH_CONF):
    for group, values in overrides.items():
        for name, value in values.items():
            conf.set_override(name, value,
                              None if group == 'DEFAULT' else group)
