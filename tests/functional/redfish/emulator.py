# SPDX-License-Identifier: Apache-2.0
"""sushy-tools' real ``sushy-emulator`` (fake driver, no libvirt) as a
child process on loopback, with HTTP Basic auth and optionally TLS.

``Emulator(directory, systems, tls=None)``: ``start()``, ``stop()`` (the
state directory is kept, so a restart keeps the Systems' power and boot),
``url``, ``uuids``, ``username``/``password``, ``system(uuid)`` (the
System as the emulator itself serves it, read with requests),
``driver_info(uuid, **extra)``. ``REDFISH_CONF`` and ``apply_conf(conf)``
enable the redfish hardware type on a test's conductor configuration.
"""

import pathlib
import shutil
import subprocess
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


class Emulator:

    username = 'admin'
    password = 'rf-secret-9Xq'

    def __init__(self, directory: pathlib.Path, systems: int = 1,
                 tls: Files | None = None) -> None:
        if _BIN is None:
            require_real('sushy-emulator (pip install sushy-tools)')
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.tls = tls
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

    def _config(self) -> pathlib.Path:
        systems = [{'uuid': uuid, 'name': 'node-%d' % i, 'power_state': 'Off',
                    'nics': [{'mac': '52:54:00:00:%02x:%02x' % (i // 256,
                                                                i % 256),
                              'ip': '192.0.2.%d' % (i % 250 + 1)}]}
                   for i, uuid in enumerate(self.uuids)]
        lines = {'SUSHY_EMULATOR_FAKE_DRIVER': True,
                 'SUSHY_EMULATOR_LISTEN_IP': '127.0.0.1',
                 'SUSHY_EMULATOR_LISTEN_PORT': self.port,
                 'SUSHY_EMULATOR_STATE_DIR': str(self.directory / 'state'),
                 'SUSHY_EMULATOR_AUTH_FILE': str(self.directory / 'htpasswd'),
                 'SUSHY_EMULATOR_FAKE_SYSTEMS': systems}
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
                    [str(_BIN), '--config', str(config)], stdout=log,
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

    def system(self, uuid: str) -> dict[str, Any]:
        response = requests.get(
            '%s/redfish/v1/Systems/%s' % (self.url, uuid), timeout=30,
            auth=(self.username, self.password),
            verify=str(self.tls.ca) if self.tls else True)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

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
