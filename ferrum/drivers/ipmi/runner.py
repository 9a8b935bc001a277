# SPDX-License-Identifier: Apache-2.0
"""The one place that runs ``ipmitool``, and what its failures mean.

Rules, from measuring ipmitool 1.8.19 (see ipmi-notes.md in the design
references):

* The password goes to ipmitool in a 0600 temporary file (``-f``), never on
  the command line, where ``ps`` would show it. An empty password is written
  as a NUL byte: an empty file makes ipmitool prompt for one.
* No stdin and a new session (no controlling tty), so a prompt can never
  block; ``-N``/``-R`` bound one attempt, and a hard process timeout backs
  them up.
* ipmitool exits 1 for every failure, so the cause is read from its verbose
  (``-v``) error output: :func:`classify` maps it to the exceptions below.
  Only :class:`IpmiBusy` and :class:`IpmiUnreachable` are retried, until
  ``[ipmi] command_retry_timeout``; a wrong password fails at once instead
  of after a minute of retries.
* Commands to one BMC (address and port) never overlap and are spaced by
  ``[ipmi] min_command_interval``: the node lock does not cover the power
  sync racing a user action, nor several nodes behind one bridged BMC.
"""

import collections
import contextlib
import logging
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from oslo_config import cfg

from ferrum.common import exception
from ferrum.drivers.ipmi import driver_info

LOG = logging.getLogger(__name__)

IPMITOOL = 'ipmitool'
MIN_VERSION = (1, 8, 12)
_MARGIN = 5.0  # seconds a stuck ipmitool gets beyond its own -N/-R timeouts


class IpmiError(exception.DriverError):
    """ipmitool failed; the message names the command and the BMC."""

    msg_fmt = 'IPMI command "%(command)s" to BMC %(bmc)s failed: %(reason)s'


class IpmiAuthError(IpmiError):
    msg_fmt = ('IPMI command "%(command)s" to BMC %(bmc)s was refused: '
               '%(reason)s. Check ipmi_username, ipmi_password and '
               'ipmi_priv_level in driver_info.')


class IpmiCipherError(IpmiError):
    msg_fmt = ('IPMI command "%(command)s" to BMC %(bmc)s failed: '
               '%(reason)s. Set driver_info ipmi_cipher_suite to one the '
               'BMC supports (usually 17 or 3).')


class IpmiUnreachable(IpmiError):
    msg_fmt = ('BMC %(bmc)s did not answer IPMI command "%(command)s": '
               '%(reason)s. Check ipmi_address and ipmi_port, and that the '
               'BMC is powered and reachable.')


class IpmiBusy(IpmiError):
    msg_fmt = 'BMC %(bmc)s was busy for IPMI command "%(command)s": %(reason)s'


class IpmiCommandError(IpmiError):
    """The BMC answered, with an error (unsupported command, bad state)."""


class IpmiParseError(IpmiError):
    msg_fmt = ('IPMI command "%(command)s" to BMC %(bmc)s printed something '
               'unexpected: %(reason)s')


#: (exception, substrings of ipmitool's error output), checked in order:
#: a wrong password also prints "Unable to establish ... session".
_PATTERNS: list[tuple[type[IpmiError], tuple[str, ...]]] = [
    (IpmiAuthError, ('RAKP 2 HMAC is invalid', 'unauthorized name',
                     'Unable to read password', 'password file',
                     'Invalid user name', 'insufficient privilege',
                     'RAKP 4 message has invalid integrity check value')),
    (IpmiCipherError, ('no matching cipher suite',
                       'Unsupported cipher suite ID', 'is not what we '
                       'requested', 'invalid authentication algorithm',
                       'invalid integrity algorithm',
                       'invalid confidentiality algorithm')),
    (IpmiBusy, ('Node busy', 'Timeout', 'insufficient resources for session',
                'Out of space', 'BMC initialization in progress')),
    (IpmiUnreachable, ('Get Auth Capabilities error',
                       'Get Channel Authentication Capabilities',
                       'Unable to establish')),
]


def classify(stderr: str, extra_busy: Sequence[str] = ()
             ) -> tuple[type[IpmiError], str]:
    """The exception class for ipmitool's error output, and the line why."""
    # Verbose lines may start with '> '; the message reads better without.
    lines = [line.strip().lstrip('> ').strip() for line in stderr.splitlines()
             if line.strip().lstrip('> ').strip()]
    patterns = list(_PATTERNS)
    if extra_busy:
        patterns.insert(0, (IpmiBusy, tuple(extra_busy)))
    for cls, needles in patterns:
        for line in lines:
            if any(needle.lower() in line.lower() for needle in needles):
                return cls, line[:300]
    errors = [line for line in lines
              if re.search(r'fail|error|invalid|not supported|unable',
                           line, re.IGNORECASE)]
    reason = (errors or lines or ['no error output, exit status 1'])[-1]
    return IpmiCommandError, reason[:300]


def check_version(run: Callable[..., subprocess.CompletedProcess[str]]
                  = subprocess.run) -> str:
    """``ipmitool -V``, or DriverLoadError when it is missing or too old."""
    def fail(reason: str) -> exception.DriverLoadError:
        return exception.DriverLoadError(
            what='IPMI interface', name='ipmitool',
            namespace='ferrum.hardware.interfaces', reason=reason)

    try:
        result = run([IPMITOOL, '-V'], stdin=subprocess.DEVNULL,
                     capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise fail('cannot run "ipmitool -V" (%s); install ipmitool (Debian '
                   'package ipmitool) on every conductor' % exc) from exc
    match = re.search(r'version (\d+)\.(\d+)\.(\d+)', result.stdout)
    if match is None:
        raise fail('"ipmitool -V" printed no version: %r'
                   % result.stdout[:100])
    version = tuple(int(part) for part in match.groups())
    if version < MIN_VERSION:
        raise fail('ipmitool %s is too old; %s or later is needed' % (
            '.'.join(match.groups()), '.'.join(map(str, MIN_VERSION))))
    return '.'.join(match.groups())


class BmcPacing:
    """Serialises and spaces the commands of this process to each BMC."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._clock = clock
        self._sleep = sleep
        self._guard = threading.Lock()
        self._locks: dict[tuple[str, int], threading.Lock] = (
            collections.defaultdict(threading.Lock))
        self._last: dict[tuple[str, int], float] = {}

    @contextlib.contextmanager
    def turn(self, bmc: tuple[str, int], interval: float) -> Iterator[None]:
        """Hold ``bmc`` for one command, waiting for its interval first."""
        with self._guard:
            lock = self._locks[bmc]
        with lock:
            last = self._last.get(bmc)
            if last is not None:
                wait = last + interval - self._clock()
                if wait > 0:
                    self._sleep(wait)
            try:
                yield
            finally:
                self._last[bmc] = self._clock()


#: One table per process, shared by the power and management interfaces:
#: both talk to the same BMCs.
PACING = BmcPacing()


class IpmitoolRunner:
    """Runs ipmitool commands for one BMC's parameters, with retries."""

    def __init__(self, conf: cfg.ConfigOpts, pacing: BmcPacing = PACING,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 run: Callable[..., subprocess.CompletedProcess[str]]
                 = subprocess.run) -> None:
        self.conf = conf
        self._pacing = pacing
        self._clock = clock
        self._sleep = sleep
        self._run = run

    def run(self, params: driver_info.IpmiParams, *command: str) -> str:
        """Run ``ipmitool <command>``; return its standard output.

        :raises IpmiError: a subclass saying why, after retrying busy and
            silent BMCs until ``[ipmi] command_retry_timeout``.
        """
        opts = self.conf.ipmi
        deadline = self._clock() + opts.command_retry_timeout
        pause = 0.5
        attempt = 1
        while True:
            try:
                with self._pacing.turn((params.address, params.port),
                                       opts.min_command_interval):
                    return self._run_once(params, command)
            except (IpmiBusy, IpmiUnreachable) as exc:
                if self._clock() + pause > deadline:
                    raise
                LOG.warning('Attempt %(attempt)d failed, retrying in '
                            '%(pause).1fs: %(error)s',
                            {'attempt': attempt, 'pause': pause,
                             'error': exc})
            self._sleep(pause)
            pause = min(pause * 2, 5.0)
            attempt += 1

    def argv(self, params: driver_info.IpmiParams, password_file: str,
             command: Sequence[str]) -> list[str]:
        """The command line; it holds a file name, never the password."""
        opts = self.conf.ipmi
        argv = [IPMITOOL,
                '-I', 'lanplus' if params.protocol_version == '2.0' else 'lan',
                '-H', params.address, '-p', str(params.port),
                '-L', params.priv_level]
        if params.username:
            argv += ['-U', params.username]
        if params.cipher_suite is not None:
            argv += ['-C', str(params.cipher_suite)]
        if params.local_address:
            argv += ['-m', params.local_address]
        if params.bridging == 'dual':
            argv += ['-B', str(params.transit_channel),
                     '-T', str(params.transit_address)]
        if params.bridging in ('single', 'dual'):
            argv += ['-b', str(params.target_channel),
                     '-t', str(params.target_address)]
        argv += ['-N', str(opts.session_timeout),
                 '-R', str(opts.session_retries),
                 '-v', '-f', password_file]
        return argv + list(command)

    def _hard_timeout(self) -> float:
        # ipmitool waits N, N+1, ... N+R-1 seconds per request, and session
        # set-up has two requests that each time out (measured).
        n, r = self.conf.ipmi.session_timeout, self.conf.ipmi.session_retries
        return 2 * sum(range(n, n + r)) + _MARGIN

    def _run_once(self, params: driver_info.IpmiParams,
                  command: Sequence[str]) -> str:
        what = ' '.join(command)
        LOG.debug('Running ipmitool %(command)s on BMC %(bmc)s',
                  {'command': what, 'bmc': params.bmc})
        with tempfile.NamedTemporaryFile(
                mode='w', prefix='ferrum-ipmi-',
                dir=self.conf.ipmi.password_file_dir) as password_file:
            password_file.write(params.password or '\0')
            password_file.flush()
            argv = self.argv(params, password_file.name, command)
            timeout = self._hard_timeout()
            try:
                result = self._run(
                    argv, stdin=subprocess.DEVNULL, capture_output=True,
                    text=True, errors='replace', timeout=timeout,
                    start_new_session=True, env={'LC_ALL': 'C',
                                                 'PATH': '/usr/local/sbin:'
                                                 '/usr/local/bin:/usr/sbin:'
                                                 '/usr/bin:/sbin:/bin'})
            except subprocess.TimeoutExpired:
                raise IpmiUnreachable(
                    command=what, bmc=params.bmc,
                    reason='ipmitool was still waiting after %.0fs and was '
                           'killed' % timeout) from None
            except OSError as exc:
                raise IpmiError(command=what, bmc=params.bmc,
                                reason='cannot run ipmitool: %s'
                                % exc) from exc
        if result.returncode == 0:
            return result.stdout
        stderr = _scrub(result.stderr, params.password)
        LOG.debug('ipmitool %(command)s on %(bmc)s exited %(rc)d: %(err)s',
                  {'command': what, 'bmc': params.bmc,
                   'rc': result.returncode, 'err': stderr[-2000:]})
        cls, reason = classify(stderr,
                               self.conf.ipmi.additional_retryable_errors)
        raise cls(command=what, bmc=params.bmc, reason=reason)


def _scrub(text: str, password: str) -> str:
    """ipmitool does not echo the password, but never trust output blindly."""
    if len(password) >= 4:
        return text.replace(password, '******')
    return text
