# SPDX-License-Identifier: Apache-2.0
"""A test machine for the real ironic-python-agent: a loop device, a MAC
address, an agent port and the spec the ``agent-test`` power interface
boots it from.

``with machine(api_url) as m:`` attaches a sparse file as ``m.loop``,
writes ``m.spec_path`` and always detaches the loop device, kills the
sandbox and deletes the machine's directory (the agent logs its token:
nothing of it is kept). The agent reaches the API's port of the host's
loopback, and the ports in ``forward_ports=[...]`` or given to
``m.forward_port(port)`` (an image server's), nothing else. Enrol
the node with ``driver_info = {'agent_test_spec': m.spec_path}``,
``properties = {'root_device': m.root_device}`` and a port with
``m.mac``; ferrum reaches the agent at ``m.agent_url``.
"""

import contextlib
import functools
import json
import os
import random
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from typing import Any

from agent_test_driver import sandbox

from tests import real
from tests.process import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
#: The agent's virtualenv (``make test`` builds it from
#: tools/ipa-requirements.txt).
IPA_VENV = os.path.join(ROOT, '.venv-ipa')
#: What the agent and the harness run; each missing one is named.
TOOLS = ('unshare', 'losetup', 'socat', 'lshw', 'sgdisk', 'parted',
         'partprobe', 'qemu-img', 'hexdump', 'fuser', 'shred', 'sfdisk',
         'mkfs.ext4', 'blockdev', 'wipefs', 'lsblk', 'udevadm', 'ip', 'mount')


@functools.cache
def missing_agent_tools() -> tuple[str, ...]:
    """What of the agent's environment this machine lacks (asked once)."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    for script in ('ironic-python-agent', 'python'):
        if not os.access(os.path.join(IPA_VENV, 'bin', script), os.X_OK):
            missing.append('%s/bin/%s (make .venv-ipa/.installed)'
                           % (IPA_VENV, script))
    if not missing and subprocess.run(
            [os.path.join(IPA_VENV, 'bin', 'python'), '-c',
             'import ipa_loopdisk.manager'], capture_output=True
    ).returncode != 0:
        missing.append('ipa_loopdisk in %s' % IPA_VENV)
    if os.geteuid() != 0:
        missing.append('root (loop devices and namespaces)')
    if not os.path.exists('/dev/loop-control'):
        missing.append('/dev/loop-control')
    return tuple(missing)


def require_agent_tools() -> None:
    """Skip (fail under FERRUM_REQUIRE_REAL=1) unless the agent can run."""
    missing = missing_agent_tools()
    if missing:
        real.require_real('the agent test environment (%s)'
                          % ', '.join(missing))


def random_mac() -> str:
    """A random unicast, locally administered MAC address."""
    octets = [random.randrange(256) for _ in range(6)]
    octets[0] = (octets[0] & 0xFC) | 0x02
    return ':'.join('%02x' % octet for octet in octets)


def detach(disk_file: str) -> None:
    """Detach every loop device backed by ``disk_file``."""
    out = subprocess.run(['losetup', '-j', disk_file], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        device = line.split(':', 1)[0]
        if device:
            subprocess.run(['losetup', '-d', device], capture_output=True)


class Machine:
    """One agent test machine; see :func:`machine`."""

    def __init__(self, directory: str, disk_file: str, loop: str, mac: str,
                 agent_port: int, spec: dict[str, Any]) -> None:
        self.directory = directory
        self.disk_file = disk_file
        self.loop = loop
        self.mac = mac
        self.agent_port = agent_port
        self.spec = spec
        self.spec_path = os.path.join(spec['state_dir'], 'spec.json')

    @property
    def agent_url(self) -> str:
        """Where the agent answers (auto-TLS: its own certificate)."""
        return 'https://127.0.0.1:%d' % self.agent_port

    @property
    def root_device(self) -> dict[str, str]:
        """The root device hints the node needs: the loop device."""
        return {'name': self.loop}

    @property
    def size(self) -> int:
        """The disk's size in bytes."""
        return os.path.getsize(self.disk_file)

    def set_api_url(self, api_url: str) -> None:
        """Point the agent at another API (from the next power on)."""
        self.spec['api_url'] = api_url
        self.write_spec()

    def forward_port(self, port: int) -> None:
        """Let the agent reach ``127.0.0.1:<port>`` of the host (an image
        server's), from the next power on; the API's port always is."""
        ports = {*self.spec.get('forward_ports', []), port}
        self.spec['forward_ports'] = sorted(ports)
        self.write_spec()

    def write_spec(self) -> None:
        """Write the spec file the power interface reads."""
        tmp = self.spec_path + '.tmp'
        with open(tmp, 'w') as target:
            json.dump(self.spec, target, indent=1)
        os.replace(tmp, self.spec_path)

    def read(self, offset: int, size: int) -> bytes:
        """``size`` bytes of the disk at ``offset``, through the device."""
        with open(self.loop, 'rb') as disk:
            disk.seek(offset)
            return disk.read(size)

    def write_marker(self, offset: int, data: bytes) -> None:
        """Write ``data`` at ``offset`` and flush it to the disk."""
        with open(self.loop, 'r+b') as disk:
            disk.seek(offset)
            disk.write(data)
            disk.flush()
            os.fsync(disk.fileno())

    def start_agent(self) -> None:
        """Boot the agent as the power interface would (tests without
        ferrum); raises :class:`sandbox.SandboxError` on a guard failure."""
        sandbox.start(sandbox.load_spec(self.spec_path))

    def stop_agent(self) -> None:
        """Stop the sandbox and its relays."""
        sandbox.stop(self.spec)

    def kill_agent(self) -> None:
        """SIGKILL the sandbox's PID 1: the agent dies mid-command."""
        sandbox.kill(self.spec)

    def agent_running(self) -> bool:
        """Whether the sandbox runs (the power interface's "on")."""
        return bool(sandbox.is_running(self.spec))

    def guards(self) -> dict[str, Any]:
        """What the sandbox established (``guards.json``), once started."""
        with open(os.path.join(self.spec['state_dir'], 'guards.json')) as f:
            guards: dict[str, Any] = json.load(f)
        return guards

    def agent_log(self) -> str:
        """The sandbox's and the agent's log (holds the agent token: read
        it, never copy it out of the test)."""
        try:
            with open(os.path.join(self.spec['state_dir'], 'agent.log'),
                      errors='replace') as log:
                return log.read()
        except FileNotFoundError:
            return ''

    def shim_calls(self) -> list[str]:
        """The shim commands the agent ran (``poweroff``, ``reboot``...)."""
        try:
            with open(os.path.join(self.spec['state_dir'], 'shims.log')) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []


@contextlib.contextmanager
def machine(api_url: str = 'http://127.0.0.1:6385', size_mib: int = 128,
            **options: Any) -> Iterator[Machine]:
    """A test machine, torn down whatever happens.

    :param api_url: ferrum's API (``http://127.0.0.1:<port>``).
    :param size_mib: the sparse disk's size.
    :param options: more spec keys (``forward_ports``, ``lookup_timeout``,
        ``agent_token``, ``agent_args``, ``poweroff``, ``standby``; see
        :mod:`agent_test_driver.sandbox`).
    """
    require_agent_tools()
    # Short: the state directory holds Unix sockets (108-byte paths).
    directory = tempfile.mkdtemp(prefix='ferrum-agent-')
    disk_file = os.path.join(directory, 'disk.img')
    state_dir = os.path.join(directory, 'm')
    spec: dict[str, Any] = {}
    try:
        os.makedirs(state_dir)
        with open(disk_file, 'wb') as disk:
            disk.truncate(size_mib * 1024 * 1024)
        loop = subprocess.run(['losetup', '-f', '--show', disk_file],
                              check=True, capture_output=True,
                              text=True).stdout.strip()
        spec = dict({'disk': loop, 'mac': random_mac(), 'api_url': api_url,
                     'agent_port': free_port(), 'state_dir': state_dir,
                     'ipa_venv': IPA_VENV, 'lookup_timeout': 120}, **options)
        box = Machine(directory, disk_file, loop, spec['mac'],
                      spec['agent_port'], spec)
        box.write_spec()
        yield box
    finally:
        try:
            if spec:
                sandbox.stop(spec)
        finally:
            detach(disk_file)
            shutil.rmtree(directory, ignore_errors=True)
