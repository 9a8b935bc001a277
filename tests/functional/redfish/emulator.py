# SPDX-License-Identifier: Apache-2.0
"""sushy-tools' real ``sushy-emulator`` (fake driver, no libvirt) as a
child process on loopback, with HTTP Basic auth and optionally TLS.

``Emulator(directory, systems, tls=None, nics=1)``: ``start()``,
``stop()`` (the state directory is kept, so a restart keeps the Systems'
power and boot), ``url``, ``uuids``, ``username``/``password``,
``system(uuid)``, ``macs(uuid)`` and ``get(path)`` (what the emulator
itself serves, read with requests), ``driver_info(uuid, **extra)``.
``REDFISH_CONF`` and ``apply_conf(conf)`` enable the redfish hardware type
on a test's conductor configuration.

With ``inventory=Inventory(...)`` every System also reports processors and
memory (the emulator behind inventory_emulator.py's middleware) and disks
(the emulator's own Storage options); ``crash_on`` (a path suffix) makes
that process exit when asked for it.
"""

import dataclasses
import pathlib
import shutil
import subprocess
import sys
import uuid as uuid_mod
from typing import Any

import bcrypt
import requests

from tests import process
from tests.certificates import Files
from tests.functional.server import BIN
from tests.polling import wait_for
from tests.real import require_real

#: Installed by the test extra beside the interpreter running the tests.
_BIN = shutil.which('sushy-emulator', path=BIN)
_INVENTORY_EMULATOR = pathlib.Path(__file__).with_name('inventory_emulator.py')
GIB = 1024 ** 3


@dataclasses.dataclass(frozen=True)
class Inventory:
    """The hardware every System reports, beyond the emulator's own."""

    sockets: int = 2
    threads_per_socket: int = 8
    memory_gib: int = 32
    model: str = 'Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz'
    #: Drives of the System's one Storage, in GiB.
    disks_gib: tuple[int, ...] = (2, 480, 120)

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


class Emulator:

    username = 'admin'
    password = 'rf-secret-9Xq'

    def __init__(self, directory: pathlib.Path, systems: int = 1,
                 tls: Files | None = None,
                 inventory: Inventory | None = None,
                 crash_on: str | None = None, nics: int = 1) -> None:
        if _BIN is None:
            require_real('sushy-emulator (pip install sushy-tools)')
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.tls = tls
        self.inventory = inventory
        self.nics = nics
        self.crash_on = crash_on
        self.uuids = [str(uuid_mod.uuid4()) for _ in range(systems)]
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = directory / 'emulator.log'
        hashed = bcrypt.hashpw(self.password.encode(), bcrypt.gensalt(4))
        (directory / 'htpasswd').write_text(
            '%s:%s\n' % (self.username, hashed.decode()))

    @property
    def url(self) -> str:
        return '%s://127.0.0.1:%d' % ('https' if self.tls else 'http',
                                      self.port)

    @staticmethod
    def mac(system: int, nic: int = 0) -> str:
        """The MAC of NIC ``nic`` of the ``system``-th System."""
        return '52:54:00:%02x:%02x:%02x' % (nic, system // 256, system % 256)

    def _config(self) -> pathlib.Path:
        systems = [{'uuid': uuid, 'name': 'node-%d' % i, 'power_state': 'Off',
                    'nics': [{'mac': self.mac(i, n),
                              'ip': '192.0.2.%d' % (i % 250 + 1)}
                             for n in range(self.nics)]}
                   for i, uuid in enumerate(self.uuids)]
        lines = {'SUSHY_EMULATOR_FAKE_DRIVER': True,
                 'SUSHY_EMULATOR_LISTEN_IP': '127.0.0.1',
                 'SUSHY_EMULATOR_LISTEN_PORT': self.port,
                 'SUSHY_EMULATOR_STATE_DIR': str(self.directory / 'state'),
                 'SUSHY_EMULATOR_AUTH_FILE': str(self.directory / 'htpasswd'),
                 'SUSHY_EMULATOR_FAKE_SYSTEMS': systems}
        if self.inventory:
            lines.update(self.inventory.storage_options(self.uuids))
            lines['FERRUM_INVENTORY'] = dataclasses.asdict(self.inventory)
            lines['FERRUM_CRASH_ON'] = self.crash_on
        if self.tls:
            lines['SUSHY_EMULATOR_SSL_CERT'] = str(self.tls.cert)
            lines['SUSHY_EMULATOR_SSL_KEY'] = str(self.tls.key)
        path = self.directory / 'emulator.conf'
        path.write_text(''.join('%s = %r\n' % item for item in lines.items()))
        return path

    def start(self) -> None:
        for _attempt in range(5):
            if not self.port:
                self.port = process.free_port()
            config = self._config()
            with open(self._log, 'ab') as log:
                self._proc = subprocess.Popen(
                    self._command() + ['--config', str(config)], stdout=log,
                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            try:
                ready = wait_for(self._ready, timeout=60, interval=0.05,
                                 what='sushy-emulator to serve')
            except BaseException:
                self.stop()  # never leave a half-started emulator behind
                raise
            if ready == 'up':
                return
            if 'in use' not in self._log.read_text(errors='replace'):
                break
            self.port = 0  # someone took the port: another one
        raise RuntimeError('sushy-emulator did not start:\n%s'
                           % self._log.read_text(errors='replace')[-3000:])

    def _command(self) -> list[str]:
        if self.inventory:
            return [sys.executable, str(_INVENTORY_EMULATOR)]
        return [str(_BIN)]

    def _ready(self) -> str | None:
        assert self._proc is not None
        if self._proc.poll() is not None:
            return 'exited'
        try:
            requests.get(self.url + '/redfish/v1', timeout=5,
                         verify=str(self.tls.ca) if self.tls else True)
        except requests.RequestException:
            return None
        return 'up'

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def get(self, path: str) -> dict[str, Any]:
        """A resource as the emulator serves it, e.g. ``/redfish/v1``."""
        response = requests.get(
            self.url + path, timeout=30, auth=(self.username, self.password),
            verify=str(self.tls.ca) if self.tls else True)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    def system(self, uuid: str) -> dict[str, Any]:
        return self.get('/redfish/v1/Systems/%s' % uuid)

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
    # The emulator shows a power change after up to 11 s: generous on a
    # loaded machine.
    'conductor': {'power_state_change_timeout': 90},
}


def apply_conf(conf, overrides=REDFISH_CONF):
    for group, values in overrides.items():
        for name, value in values.items():
            conf.set_override(name, value,
                              None if group == 'DEFAULT' else group)
