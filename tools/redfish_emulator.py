# SPDX-License-Identifier: Apache-2.0
"""sushy-tools' real ``sushy-emulator`` (fake driver, no libvirt) as a child
process on loopback: any number of Systems in one process, HTTP Basic auth,
optionally TLS and the fake driver's change notifications.

Shared by the redfish tests (``tests/functional/redfish/emulator.py`` adds
their fixtures' conveniences) and ``tools/bench/power_sync.py``::

    emu = RedfishEmulator(work_dir, systems=200)
    emu.start()          # a free port; the state directory survives stop()
    emu.url, emu.uuids, emu.username, emu.password
    emu.stop()

With ``notify_url``, every System has the fake driver's
``external_notifier``: the emulator PUTs the whole System (power state,
pending power change, boot...) to that URL at every change it makes, so a
test can see which resets reached the BMC.

The fake driver shows a power change a random 1-11 s after it accepts it,
and has no option for that. With ``power_delay=(low, high)`` the process
is this module run as a program (``python tools/redfish_emulator.py
--power-delay LOW,HIGH --config FILE``): the same ``sushy-emulator`` main,
its fake driver drawing the delay from ``low``..``high`` seconds instead
(the change shows once ``int(now) + delay`` has passed, so ``(1, 1)``
shows it within a second, still after the request that asked for it). A
test that does not measure the delay loses nothing, and the suite's
average wait per power change falls from 6 s to under one.
"""

import argparse
import os
import pathlib
import random
import shutil
import socket
import subprocess
import sys
import time
import uuid as uuid_mod
from typing import Any

import requests

#: Installed beside the interpreter (the test extra installs sushy-tools).
BINARY = shutil.which('sushy-emulator',
                      path=os.path.dirname(sys.executable))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(('127.0.0.1', 0))
        return int(sock.getsockname()[1])


class RedfishEmulator:
    """One ``sushy-emulator --fake`` process serving ``systems`` Systems.

    :ivar uuids: the Systems' Ids (a System is addressed by its UUID).
    :ivar port: the TCP port, 0 until the first start; a restart keeps it.
    """

    username = 'admin'
    password = 'rf-secret-9Xq'

    def __init__(self, directory: pathlib.Path, systems: int = 1, *,
                 tls_cert: str | None = None, tls_key: str | None = None,
                 ca_file: str | None = None,
                 notify_url: str | None = None, nics: int = 1,
                 power_delay: tuple[int, int] | None = None) -> None:
        """:param power_delay: the fake driver's power delay in whole
            seconds, (low, high); None keeps its own 1-11 s."""
        if BINARY is None:
            raise FileNotFoundError(
                'sushy-emulator is not installed beside %s: pip install '
                'sushy-tools' % sys.executable)
        self.directory = pathlib.Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.tls_cert, self.tls_key, self.ca_file = tls_cert, tls_key, ca_file
        self.notify_url = notify_url
        self.nics = nics
        self.power_delay = power_delay
        self.uuids = [str(uuid_mod.uuid4()) for _ in range(systems)]
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self.log = self.directory / 'emulator.log'
        import bcrypt  # the emulator's own dependency: only bcrypt entries
        hashed = bcrypt.hashpw(self.password.encode(), bcrypt.gensalt(4))
        (self.directory / 'htpasswd').write_text(
            '%s:%s\n' % (self.username, hashed.decode()))

    @property
    def url(self) -> str:
        return '%s://127.0.0.1:%d' % ('https' if self.tls_cert else 'http',
                                      self.port)

    @property
    def verify(self) -> bool | str:
        """What ``requests`` needs to trust this emulator."""
        return self.ca_file or True

    @staticmethod
    def mac(system: int, nic: int = 0) -> str:
        """The MAC of NIC ``nic`` of the ``system``-th System."""
        return '52:54:00:%02x:%02x:%02x' % (nic, system // 256, system % 256)

    def command(self) -> list[str]:
        """The program serving the emulator (a subclass may wrap it)."""
        if self.power_delay is None:
            return [str(BINARY)]
        return [sys.executable, __file__,
                '--power-delay', '%d,%d' % self.power_delay]

    def extra_config(self) -> dict[str, Any]:
        """More lines of the emulator's config file (for a subclass)."""
        return {}

    def _config(self) -> pathlib.Path:
        systems = [{'uuid': uuid, 'name': 'node-%d' % i, 'power_state': 'Off',
                    'external_notifier': self.notify_url is not None,
                    'nics': [{'mac': self.mac(i, n),
                              'ip': '192.0.2.%d' % (i % 250 + 1)}
                             for n in range(self.nics)]}
                   for i, uuid in enumerate(self.uuids)]
        lines: dict[str, Any] = {
            'SUSHY_EMULATOR_FAKE_DRIVER': True,
            'SUSHY_EMULATOR_LISTEN_IP': '127.0.0.1',
            'SUSHY_EMULATOR_LISTEN_PORT': self.port,
            'SUSHY_EMULATOR_STATE_DIR': str(self.directory / 'state'),
            'SUSHY_EMULATOR_AUTH_FILE': str(self.directory / 'htpasswd'),
            'SUSHY_EMULATOR_FAKE_SYSTEMS': systems}
        if self.notify_url is not None:
            lines['EXTERNAL_NOTIFICATION_URL'] = self.notify_url
        if self.tls_cert:
            lines['SUSHY_EMULATOR_SSL_CERT'] = self.tls_cert
            lines['SUSHY_EMULATOR_SSL_KEY'] = self.tls_key
        lines.update(self.extra_config())
        path = self.directory / 'emulator.conf'
        path.write_text(''.join('%s = %r\n' % item for item in lines.items()))
        return path

    def start(self, timeout: float = 60.0) -> None:
        """Start and wait until the root answers; another port if the one
        picked was taken meanwhile."""
        for _attempt in range(5):
            if not self.port:
                self.port = _free_port()
            with open(self.log, 'ab') as log:
                self._proc = subprocess.Popen(
                    self.command() + ['--config', str(self._config())],
                    stdout=log, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL)
            try:
                ready = self._wait_ready(timeout)
            except BaseException:
                self.stop()  # never leave a half-started emulator behind
                raise
            if ready:
                return
            if 'in use' not in self.log.read_text(errors='replace'):
                break
            self.port = 0  # someone took the port: another one
        raise RuntimeError('sushy-emulator did not start:\n%s'
                           % self.log.read_text(errors='replace')[-3000:])

    def _wait_ready(self, timeout: float) -> bool:
        """True once it serves, False if it exited first."""
        assert self._proc is not None
        deadline = time.monotonic() + timeout
        while self._proc.poll() is None:
            try:
                requests.get(self.url + '/redfish/v1', timeout=5,
                             verify=self.verify)
                return True
            except requests.RequestException:
                if time.monotonic() > deadline:
                    raise TimeoutError('sushy-emulator did not serve in '
                                       '%.0fs' % timeout) from None
                time.sleep(0.05)
        return False

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
        """A resource as the emulator itself serves it, e.g.
        ``/redfish/v1``."""
        response = requests.get(
            self.url + path, timeout=30, auth=(self.username, self.password),
            verify=self.verify)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    def system(self, uuid: str) -> dict[str, Any]:
        """The System as the emulator itself serves it."""
        return self.get('/redfish/v1/Systems/%s' % uuid)


class _PowerDelay(random.Random):
    """The fake driver's ``random``: its one ``randint`` (the power delay)
    drawn from the range given instead of the one it asks for."""

    def __init__(self, low: int, high: int) -> None:
        super().__init__()
        self.low, self.high = low, high

    def randint(self, a: int, b: int) -> int:
        return super().randint(self.low, self.high)


def main() -> int:
    """``sushy-emulator`` with ``--power-delay LOW,HIGH`` (see above)."""
    parser = argparse.ArgumentParser('redfish_emulator')
    parser.add_argument('--power-delay', required=True)
    args, rest = parser.parse_known_args()
    low, high = (int(part) for part in args.power_delay.split(','))
    from sushy_tools.emulator import main as emulator
    from sushy_tools.emulator.resources.systems import fakedriver

    # Checked, so that a sushy-tools release that draws the delay some
    # other way fails here rather than quietly keeping 1-11 s.
    if not isinstance(getattr(fakedriver, 'random', None),
                      type(random)):
        raise SystemExit('sushy-tools changed: its fake driver has no '
                         'module-level random to draw the power delay from')
    fakedriver.random = _PowerDelay(low, high)
    sys.argv = [sys.argv[0]] + rest
    result: int = emulator.main() or 0
    return result


if __name__ == '__main__':
    sys.exit(main())
