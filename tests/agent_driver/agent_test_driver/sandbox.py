# SPDX-License-Identifier: Apache-2.0
"""Starting, finding and stopping a sandboxed ironic-python-agent.

A *spec* (a JSON file the test harness writes, named by the node's
``driver_info['agent_test_spec']``) describes one test machine:

* ``disk``: its loop device (``/dev/loopN``), the only disk it has;
* ``mac``: the MAC address the agent looks itself up by;
* ``api_url``: ferrum's API, ``http://127.0.0.1:<port>``;
* ``agent_port``: the host port the agent is reached at
  (``https://127.0.0.1:<agent_port>``);
* ``state_dir``: a short path (Unix sockets), holding ``sandbox.json``
  (the processes), ``agent.log``, ``guards.json``, the sockets and shims;
* ``ipa_venv``: the virtualenv with ironic-python-agent and ipa_loopdisk;
* optional: ``forward_ports``, more host loopback ports the agent may
  reach (an image server's; the API's always), ``lookup_timeout`` (s),
  ``agent_token`` (pre-generated), ``agent_args`` (more CLI flags),
  ``poweroff`` (``log``: the shim only logs, the default; ``halt``: the
  sandbox ends, as a machine going off), ``standby`` (see below);
  for the guard tests only: ``cover_source`` and ``extra_host_disks``.

The sandbox is ``unshare --net --mount --pid --fork --mount-proc`` around
:mod:`agent_test_driver.inside`, in a session of its own, so it outlives
the process that started it (a conductor killed mid-deploy); its state is
in files, so another process finds and stops it. The agent's network
namespace has only its own loopback: socat relays join the two loopbacks
through Unix sockets in the state directory (each of
:func:`forwarded_ports` inside to ``host-<port>.sock`` to the same port
outside; ``agent_port`` outside to ``agent.sock`` to the agent's 9999
inside).

A machine *standing by* (:func:`stand_by`) is off but plugged in: its
sandbox runs with every guard established and checked, and the agent,
loaded, waits for the power button (``ipa_loopdisk --standby``); a
``standby`` file in the state directory says so. :func:`start` presses the
button when there is one, so a boot is the agent's own start, not an
interpreter's, the guards' set-up nor the agent's imports (about 3 s of
each boot on these machines, more with several at once). With ``standby``
in the spec the power interface puts the machine back on standby after
each power off. The functions that start or stop a sandbox hold the
state directory's ``lock`` (``flock``), so a standby starting in the
background and a power on never run at once.
"""

import contextlib
import fcntl
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from agent_test_driver import inside

_INSIDE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       'inside.py')
_REQUIRED = ('disk', 'mac', 'api_url', 'agent_port', 'state_dir', 'ipa_venv')
#: Seconds a start may take to establish the guards and start the agent.
START_TIMEOUT = 60.0
#: In the state directory while the machine stands by (off).
_STANDBY = 'standby'


class SandboxError(RuntimeError):
    """The sandbox could not be started (a guard failed) or stopped."""


def load_spec(path: str) -> dict[str, Any]:
    """Read and check a spec file (:func:`check_spec`).

    :raises SandboxError: unreadable, or refused by :func:`check_spec`.
    """
    try:
        with open(path) as source:
            spec: dict[str, Any] = json.load(source)
    except (OSError, ValueError) as exc:
        raise SandboxError('cannot read agent test spec %s: %s'
                           % (path, exc)) from exc
    check_spec(spec)
    return spec


def check_spec(spec: dict[str, Any]) -> None:
    """Refuse a spec that lacks a key, names a disk that is not a
    ``/dev/loopN`` block device, or an API off loopback. (The sandbox
    checks the disk again from inside, independently.)

    :raises SandboxError: naming what is wrong.
    """
    missing = [key for key in _REQUIRED if not spec.get(key)]
    if missing:
        raise SandboxError('agent test spec lacks %s' % ', '.join(missing))
    disk = spec['disk']
    if not re.match(r'^/dev/loop[0-9]+$', disk):
        raise SandboxError('refusing disk %s: not a loop device' % disk)
    try:
        is_block = stat.S_ISBLK(os.stat(disk).st_mode)
    except OSError:
        is_block = False
    if not is_block:
        raise SandboxError('refusing disk %s: not a block device' % disk)
    if not re.match(r'^http://127\.0\.0\.1:[0-9]+/?$', spec['api_url']):
        raise SandboxError('api_url %s is not http://127.0.0.1:<port>'
                           % spec['api_url'])


def forwarded_ports(spec: dict[str, Any]) -> list[int]:
    """The host loopback ports the agent reaches: the API's and
    ``forward_ports`` (an image server's, for one)."""
    api_port = int(spec['api_url'].rstrip('/').rsplit(':', 1)[1])
    extra = spec.get('forward_ports', [])
    return sorted({api_port, *(int(port) for port in extra)})


def _path(spec: dict[str, Any], name: str) -> str:
    return os.path.join(spec['state_dir'], name)


def _start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot), None if gone or
    a zombie: with the pid, it names one process for good."""
    try:
        with open('/proc/%d/stat' % pid) as source:
            fields = source.read().rsplit(')', 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in ('Z', 'X') else fields[19]


def _alive(process: dict[str, Any]) -> bool:
    return bool(_start_time(process['pid']) == process['start'])


def _processes(spec: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        with open(_path(spec, 'sandbox.json')) as source:
            processes: list[dict[str, Any]] = json.load(source)
    except (OSError, ValueError):
        return []
    return processes


def is_running(spec: dict[str, Any]) -> bool:
    """Whether the machine is on: its sandbox's unshare process lives, and
    is not standing by."""
    processes = _processes(spec)
    return (bool(processes) and _alive(processes[0])
            and not os.path.exists(_path(spec, _STANDBY)))


def standing_by(spec: dict[str, Any]) -> bool:
    """Whether the machine stands by: off, its agent loaded and waiting
    for the button."""
    processes = _processes(spec)
    return (bool(processes) and all(_alive(p) for p in processes)
            and os.path.exists(_path(spec, _STANDBY))
            and os.path.exists(_path(spec, inside.BUTTON + '.waiting')))


@contextlib.contextmanager
def _locked(spec: dict[str, Any]) -> Iterator[None]:
    """The state directory's lock, across threads and processes."""
    os.makedirs(spec['state_dir'], exist_ok=True)
    with open(_path(spec, 'lock'), 'a') as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _spawn(command: list[str], log: Any) -> dict[str, Any]:
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=log, start_new_session=True)
    # Reaped here when it ends, so a dead sandbox is not a zombie that
    # looks alive; it outlives this process all the same.
    threading.Thread(target=proc.wait, daemon=True).start()
    start = None
    while start is None and proc.poll() is None:
        start = _start_time(proc.pid)
    return {'pid': proc.pid, 'start': start, 'command': command[0]}


def _wait(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SandboxError('timed out after %.0fs waiting for %s'
                               % (timeout, what))
        time.sleep(0.02)


def log_tail(spec: dict[str, Any], size: int = 3000) -> str:
    """The end of the sandbox's log (it holds the agent's token)."""
    try:
        with open(_path(spec, 'agent.log'), 'rb') as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - size))
            return log.read().decode(errors='replace')
    except OSError:
        return ''


def start(spec: dict[str, Any], timeout: float = START_TIMEOUT) -> None:
    """Boot the machine's sandboxed agent unless it runs: press the button
    of a machine standing by, else start a sandbox; return once the guards
    are checked and the agent started.

    :raises SandboxError: a guard could not be established (the sandbox
        exits before the agent starts), with the end of its log.
    """
    check_spec(spec)
    with _locked(spec):
        if is_running(spec) or _press(spec):
            return
        _stop(spec)  # leftovers of a sandbox that died
        _launch(spec, timeout, standby=False)


def stand_by(spec: dict[str, Any], timeout: float = START_TIMEOUT) -> None:
    """Put the machine, off, on standby (see the module docstring) unless
    it runs or stands by already; return once the agent waits.

    :raises SandboxError: as :func:`start`; the machine is then off.
    """
    check_spec(spec)
    with _locked(spec):
        if is_running(spec) or standing_by(spec):
            return
        _stop(spec)
        os.makedirs(spec['state_dir'], exist_ok=True)
        open(_path(spec, _STANDBY), 'w').close()
        _launch(spec, timeout, standby=True)


def _press(spec: dict[str, Any]) -> bool:
    """Press the button of a machine standing by; False when none waits."""
    if not standing_by(spec):
        return False
    try:
        # Non-blocking: refused (ENXIO) unless the agent holds it open.
        button = os.open(_path(spec, inside.BUTTON),
                         os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        os.write(button, b'1')
    finally:
        os.close(button)
    os.unlink(_path(spec, _STANDBY))
    return True


def _launch(spec: dict[str, Any], timeout: float, standby: bool) -> None:
    """Start a sandbox (its agent waiting for the button with
    ``standby``); wait for its guards and agent."""
    os.makedirs(spec['state_dir'], exist_ok=True)
    # What the sandbox reads: not the harness's spec.json, which keeps
    # asking for a standby after each power off.
    with open(_path(spec, 'inside.json'), 'w') as copy:
        json.dump(dict(spec, standby=standby), copy)
    for name in os.listdir(spec['state_dir']):
        if name.endswith('.sock') or name in ('ready', 'guards.json',
                                              'shims.log'):
            os.unlink(_path(spec, name))
    here = os.stat('/proc/self/ns/net').st_ino, os.stat(
        '/proc/self/ns/mnt').st_ino
    with open(_path(spec, 'agent.log'), 'ab') as log:
        processes = []
        try:
            processes.append(_spawn(
                ['unshare', '--kill-child=SIGKILL', '--net', '--mount',
                 '--pid', '--fork', '--mount-proc', sys.executable, '-I',
                 _INSIDE, os.path.abspath(_path(spec, 'inside.json')),
                 str(here[0]), str(here[1]),
                 ','.join(str(p) for p in forwarded_ports(spec))], log))
            for port in forwarded_ports(spec):
                processes.append(_spawn(
                    ['socat', 'UNIX-LISTEN:%s,fork,unlink-early'
                     % _path(spec, 'host-%d.sock' % port),
                     'TCP:127.0.0.1:%d' % port], log))
            processes.append(_spawn(
                ['socat', 'TCP-LISTEN:%d,bind=127.0.0.1,fork,reuseaddr'
                 % spec['agent_port'], 'UNIX-CONNECT:%s'
                 % _path(spec, 'agent.sock')], log))
        finally:
            _save(spec, processes)
    waited = ['ready'] + ([inside.BUTTON + '.waiting'] if standby else [])
    try:
        files = [_path(spec, 'host-%d.sock' % port)
                 for port in forwarded_ports(spec)]
        files += [_path(spec, name) for name in waited]
        _wait(lambda: (all(os.path.exists(path) for path in files)
                       or not all(_alive(p) for p in processes)),
              timeout, 'the agent sandbox to start')
        if not all(_alive(p) for p in processes):
            raise SandboxError('the agent sandbox did not start:\n%s'
                               % log_tail(spec))
    except SandboxError:
        _stop(spec)
        raise


def _save(spec: dict[str, Any], processes: list[dict[str, Any]]) -> None:
    tmp = _path(spec, 'sandbox.json.tmp')
    with open(tmp, 'w') as target:
        json.dump(processes, target)
    os.replace(tmp, _path(spec, 'sandbox.json'))


def init_pids(spec: dict[str, Any]) -> list[int]:
    """The sandbox's PID 1 as the host sees it: the unshare's child."""
    processes = _processes(spec)
    if not processes or not _alive(processes[0]):
        return []
    pid = processes[0]['pid']
    try:
        with open('/proc/%d/task/%d/children' % (pid, pid)) as source:
            return [int(child) for child in source.read().split()]
    except OSError:
        return []


def kill(spec: dict[str, Any]) -> None:
    """SIGKILL the sandbox's PID 1, as a machine losing power: the kernel
    ends everything in the PID namespace, and the unshare exits. The
    relays stay (see :func:`stop`)."""
    for pid in init_pids(spec):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def stop(spec: dict[str, Any], timeout: float = 30.0) -> None:
    """SIGKILL the sandbox (its PID 1, so everything in it) and the
    relays, standing by or not; return once they are gone. Nothing
    running is a success."""
    with _locked(spec):
        _stop(spec, timeout)


def _stop(spec: dict[str, Any], timeout: float = 30.0) -> None:
    kill(spec)
    processes = [p for p in _processes(spec) if _alive(p)]
    for process in processes:
        try:
            os.kill(process['pid'], signal.SIGKILL)
        except ProcessLookupError:
            pass
    _wait(lambda: not any(_alive(p) for p in processes), timeout,
          'the agent sandbox to stop')
    for name in ('sandbox.json', 'ready', _STANDBY):
        if os.path.lexists(_path(spec, name)):
            os.unlink(_path(spec, name))
