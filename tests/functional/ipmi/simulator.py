# SPDX-License-Identifier: Apache-2.0
"""The BMC simulator as a child process, and the real ipmitool against it.

The simulator is never imported here: pyghmi keeps global session state
that a client in the same process would share.
"""

import json
import pathlib
import subprocess
import sys
import tempfile
import time

SIMULATOR = (pathlib.Path(__file__).resolve().parents[3]
             / 'tools' / 'bmc_simulator' / 'bmcsim.py')
#: What ipmitool prints when no session could be opened (the BMC did not
#: answer in time), the one failure worth sending a hook again for.
_SESSION_FAILED = 'Unable to establish IPMI v2 / RMCP+ session'


class BmcSimulator:
    """A ``bmcsim.py`` process with per-port credentials and state files."""

    def __init__(self, state_dir: pathlib.Path, bmcs=(), count: int = 0,
                 user: str = 'admin', password: str = 'password',
                 power_delay: float = 0.0) -> None:
        self.state_dir = state_dir
        self.bmcs = list(bmcs)
        self.count = count
        self.user, self.password = user, password
        self.power_delay = power_delay
        self.ports: list[int] = []
        self.credentials: dict[int, tuple[str, str]] = {}
        self._proc = None

    def start(self, timeout: float = 30.0) -> None:
        argv = [sys.executable, str(SIMULATOR), '--state-dir',
                str(self.state_dir), '--power-delay', str(self.power_delay)]
        for user, password in self.bmcs:
            argv += ['--bmc', '0:%s:%s' % (user, password)]
        if self.count:
            argv += ['--count', str(self.count), '--user', self.user,
                     '--password', self.password]
        # Its stderr to a file, not a pipe: nobody reads a pipe until the
        # end, and a simulator writing more than the pipe holds would
        # stop answering.
        self.log = self.state_dir / 'simulator.log'
        with open(self.log, 'w') as log:
            self._proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                          stderr=log, text=True)
        line = self._proc.stdout.readline()  # READY, or EOF if it died
        if not line.startswith('READY'):
            self.stop()
            raise RuntimeError('the BMC simulator did not start: %r %s' % (
                line, self.output()[-2000:]))
        self.ports = [int(port) for port in line.split()[1:]]
        creds = self.bmcs + [(self.user, self.password)] * self.count
        self.credentials = dict(zip(self.ports, creds, strict=True))

    def stop(self, timeout: float = 10.0) -> None:
        if self._proc is None or self._proc.poll() is not None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def output(self) -> str:
        """What the simulator printed on stderr so far."""
        try:
            return self.log.read_text(errors='replace')
        except (AttributeError, OSError):
            return ''

    def state(self, port: int) -> dict:
        return json.loads((self.state_dir / ('%d.json' % port)).read_text())

    def ipmitool(self, port: int, *args: str, user: str | None = None,
                 password: str | None = None, cipher: str | None = None,
                 timeout: float = 30.0) -> subprocess.CompletedProcess:
        """The real ipmitool, with the password in a 0600 file."""
        default_user, default_password = self.credentials[port]
        with tempfile.NamedTemporaryFile('w') as secret:
            secret.write(password if password is not None
                         else default_password)
            secret.flush()
            argv = ['ipmitool', '-I', 'lanplus', '-H', '127.0.0.1', '-p',
                    str(port), '-U', user or default_user, '-N', '1', '-R',
                    '1', '-f', secret.name]
            if cipher is not None:
                argv += ['-C', cipher]
            return subprocess.run(argv + list(args), capture_output=True,
                                  text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)

    def _oem(self, port: int, *data: int, timeout: float = 30.0) -> None:
        """A test hook (raw netfn 0x30), sent again while no session could
        be opened: a hook sets a test up, and one session that failed to
        open on a busy machine must not fail the test. Only a simulator
        that died or stays silent for ``timeout`` fails it, saying which;
        a hook the simulator refused fails at once."""
        deadline = time.monotonic() + timeout
        failures = []
        while True:
            try:
                result = self.ipmitool(port, 'raw', '0x30',
                                       *('0x%02x' % byte for byte in data))
            except subprocess.TimeoutExpired as exc:
                failures.append('ipmitool timed out after %s s' % exc.timeout)
            else:
                if result.returncode == 0:
                    return
                failures.append(result.stderr.strip())
                if _SESSION_FAILED not in result.stderr:
                    raise RuntimeError('OEM command to BMC %d failed: %s'
                                       % (port, failures[-1]))
            if self._proc.poll() is not None:
                raise RuntimeError(
                    'the BMC simulator exited (%s); its output: %s' % (
                        self._proc.returncode, self.output()[-2000:]))
            if time.monotonic() > deadline:
                raise RuntimeError(
                    'OEM command to BMC %d failed %d times in %.0f s, last:'
                    ' %s; load %s; simulator output: %s' % (
                        port, len(failures), timeout, failures[-1],
                        _loadavg(), self.output()[-2000:]))
            time.sleep(0.2)  # a pause between polls, as tests/polling.py

    def reset(self, port: int) -> None:
        self._oem(port, 0x01)

    def busy(self, port: int, count: int) -> None:
        self._oem(port, 0x02, count)

    def mute(self, port: int, seconds: int) -> None:
        self._oem(port, 0x03, seconds)

    def set_power_delay(self, port: int, seconds: int) -> None:
        self._oem(port, 0x04, seconds)

    def wait_answering(self, port: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while self.ipmitool(port, 'power', 'status').returncode != 0:
            if time.monotonic() > deadline:
                raise AssertionError('BMC %d did not answer again' % port)


def _loadavg() -> str:
    try:
        return pathlib.Path('/proc/loadavg').read_text().strip()
    except OSError:
        return 'unknown'
