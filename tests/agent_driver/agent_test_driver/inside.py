# SPDX-License-Identifier: Apache-2.0
"""The first process of an agent sandbox: sets the guards up, checks
each one, then runs ironic-python-agent and lives as long as it does.

Run by :mod:`agent_test_driver.sandbox` as
``unshare --net --mount --pid --fork --mount-proc python -I inside.py
SPEC HOST_NETNS HOST_MNTNS PORT,PORT...`` (the host ports to relay);
the standard library only, because it runs with ``-I``. It is PID 1 of
the new PID namespace, so its death (SIGKILL from the host) ends
everything in the sandbox. Any guard it cannot
establish stops it with exit status 3 before the agent starts:

* its own network, mount and PID namespaces, a fresh sysfs that lists
  only ``lo``;
* ``/dev/null`` bind-mounted over every block device but the test's
  loop device (every ``lsblk`` disk first of all), each read back as
  0 bytes;
* the loop-disk hardware manager installed in the agent's venv, first in
  rank, listing only the loop device: ``python -m ipa_loopdisk --report``
  checks it and only then runs the agent, in the same process;
* shims for ``poweroff``, ``reboot``, ``hwclock`` and ``efibootmgr`` first
  on ``PATH``.

What was established is written to ``guards.json`` in the state
directory, then ``ready`` once the agent runs. With ``standby`` in the
spec the agent, checked and loaded, waits for the power button (the FIFO
``button`` in the state directory; see ``ipa_loopdisk``) before it runs.
"""

import contextlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
from typing import Any, NoReturn

#: The agent's API port inside the sandbox's own loopback.
LISTEN_PORT = 9999
#: The power button of a machine standing by: a FIFO in the state
#: directory (:mod:`agent_test_driver.sandbox`).
BUTTON = 'button'
#: Where the agent keeps its generated TLS certificate and key.
_IPA_RUN = '/run/ironic-python-agent'
_SHIMS = ('poweroff', 'reboot', 'halt', 'shutdown', 'hwclock', 'efibootmgr')


def fail(reason: str) -> NoReturn:
    """Stop before the agent starts: a guard is missing."""
    print('agent sandbox: GUARD FAILED: %s' % reason, file=sys.stderr,
          flush=True)
    sys.exit(3)


def run(*command: str) -> str:
    """Run a command; fail the sandbox when it fails."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        fail('%s exited %d: %s' % (' '.join(command), result.returncode,
                                   result.stderr.strip()))
    return result.stdout


def check_namespaces(host_netns: int, host_mntns: int) -> None:
    """Our own PID, network and mount namespaces, and sysfs for them."""
    if os.getpid() != 1:
        fail('not PID 1 of a new PID namespace (pid %d)' % os.getpid())
    if os.stat('/proc/self/ns/net').st_ino == host_netns:
        fail('still in the host network namespace')
    if os.stat('/proc/self/ns/mnt').st_ino == host_mntns:
        fail('still in the host mount namespace')
    run('mount', '--make-rprivate', '/')
    run('mount', '-t', 'sysfs', 'sysfs', '/sys')
    run('ip', 'link', 'set', 'lo', 'up')
    links = sorted(os.listdir('/sys/class/net'))
    if links != ['lo']:
        fail('the network namespace has links besides lo: %s' % links)


def _lsblk_disks() -> list[str]:
    out = run('lsblk', '-dn', '-o', 'NAME,TYPE')
    return [line.split()[0] for line in out.splitlines()
            if len(line.split()) == 2 and line.split()[1] == 'disk']


def _is_block(path: str) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


def cover_disks(disk: str, cover_source: str,
                extra: list[str]) -> list[str]:
    """Bind ``cover_source`` (``/dev/null``) over every block device but
    ``disk`` and its partitions; check each reads 0 bytes.

    :returns: the covered device paths.
    """
    own = os.path.basename(disk)
    own_re = re.compile(r'^%s(p[0-9]+)?$' % re.escape(own))
    listed = _lsblk_disks()
    names = set(listed) | set(os.listdir('/sys/class/block')) | set(extra)
    covered = []
    for name in sorted(names):
        if own_re.match(name):
            continue
        path = '/dev/%s' % name.replace('!', '/')
        if not os.path.exists(path):
            if name in listed or name in extra:
                fail('host disk %s has no node %s to cover' % (name, path))
            continue  # a sysfs entry without a node cannot be opened
        run('mount', '--bind', cover_source, path)
        covered.append(path)
    null = os.stat('/dev/null').st_rdev
    for path in covered:
        with open(path, 'rb') as device:
            data = device.read(4096)
        if data != b'' or os.stat(path).st_rdev != null:
            fail('%s still reads as a disk (%d bytes) after covering it'
                 % (path, len(data)))
    for name in listed:
        if '/dev/%s' % name.replace('!', '/') not in covered:
            fail('host disk %s was not covered' % name)
    if not _is_block(disk):
        fail('%s is not a block device inside the sandbox' % disk)
    return covered


def write_shims(state_dir: str, poweroff: str) -> str:
    """Scripts that log instead of touching the machine; their folder."""
    folder = os.path.join(state_dir, 'bin')
    os.makedirs(folder, exist_ok=True)
    log = os.path.join(state_dir, 'shims.log')
    for name in _SHIMS:
        body = 'echo "%s $*" >> %s\n' % (name, log)
        if poweroff == 'halt' and name in ('poweroff', 'halt', 'shutdown'):
            # A machine that really goes off: the sandbox ends.
            body += 'kill -TERM 1\n'
        path = os.path.join(folder, name)
        with open(path, 'w') as shim:
            shim.write('#!/bin/sh\n' + body + 'exit 0\n')
        os.chmod(path, 0o755)
    return folder


def private_dirs(state_dir: str) -> str:
    """The agent's own ``/run/ironic-python-agent`` (its TLS certificate
    and key) and temporary directory (a qcow2 image is downloaded to
    ``$TMPDIR/<image id>``): several agents on one host would otherwise
    write the same files. Returns the temporary directory."""
    own_run = os.path.join(state_dir, 'run')
    own_tmp = os.path.join(state_dir, 'tmp')
    for folder in (own_run, own_tmp):
        os.makedirs(folder, exist_ok=True)
    os.makedirs(_IPA_RUN, exist_ok=True)
    run('mount', '--bind', own_run, _IPA_RUN)
    return own_tmp


def start_agent(spec: dict[str, Any], conf: str, env: dict[str, str]
                ) -> tuple['subprocess.Popen[bytes]', dict[str, Any]]:
    """The agent, started behind the hardware manager's own check in the
    same process (``python -m ipa_loopdisk --report FILE -- ARGS``): the
    agent's code runs only once the check wrote a report that lets it.
    Fails (the process gone) with the check's reason.

    :returns: the agent's process and the check's report.
    """
    report_path = os.path.join(spec['state_dir'], 'manager.json')
    with contextlib.suppress(FileNotFoundError):
        os.unlink(report_path)
    standby: list[str] = []
    if spec.get('standby'):
        button = os.path.join(spec['state_dir'], BUTTON)
        for stale in (button, button + '.waiting'):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(stale)
        os.mkfifo(button, 0o600)
        standby = ['--standby', button]
    agent = subprocess.Popen(
        [os.path.join(spec['ipa_venv'], 'bin', 'python'), '-m',
         'ipa_loopdisk', '--report', report_path, *standby, '--']
        + agent_command(spec, conf)[1:], env=env)
    # Polled, not slept on: the report, or the process's exit, ends it.
    while not os.path.exists(report_path):
        try:
            status = agent.wait(timeout=0.02)
        except subprocess.TimeoutExpired:
            continue
        if not os.path.exists(report_path):
            fail('the loop-disk hardware manager check exited %d before it '
                 'reported' % status)
    with open(report_path) as source:
        report: dict[str, Any] = json.load(source)
    if 'refused' in report:
        agent.wait()
        fail('the loop-disk hardware manager refused: %s' % report['refused'])
    if report.get('disks') != [env['IPA_TEST_DISK']]:
        # The check itself refuses this before the agent runs; this one
        # holds should the check ever change.
        agent.kill()
        fail('the hardware manager lists %s' % report.get('disks'))
    return agent, report


def agent_command(spec: dict[str, Any], conf: str) -> list[str]:
    """ironic-python-agent's command line for ``spec``."""
    command = [
        os.path.join(spec['ipa_venv'], 'bin', 'ironic-python-agent'),
        '--config-file', conf,
        '--api_url', spec['api_url'],
        '--listen_host', '127.0.0.1', '--listen_port', str(LISTEN_PORT),
        '--advertise_host', '127.0.0.1',
        '--advertise_port', str(spec['agent_port']),
        '--inspection_collectors', '',
        # 0: the generic manager, loaded beside ours, skips its start-up
        # search for a root disk (it would pick the host's, if only to log
        # it); ours answers every real request for the install device.
        '--disk_wait_attempts', '0',
        '--lookup_timeout', str(spec.get('lookup_timeout', 300)),
        '--lookup_interval', '1',
        '--debug']
    if spec.get('agent_token'):
        command += ['--agent_token', spec['agent_token']]
    return command + list(spec.get('agent_args', []))


def start_relays(spec: dict[str, Any],
                 ports: list[int]) -> list[subprocess.Popen[bytes]]:
    """The agent's side of the loopback relays through Unix sockets."""
    state = spec['state_dir']
    relays = [subprocess.Popen(
        ['socat', 'TCP-LISTEN:%d,bind=127.0.0.1,fork,reuseaddr' % port,
         'UNIX-CONNECT:%s' % os.path.join(state, 'host-%d.sock' % port)])
        for port in ports]
    relays.append(subprocess.Popen(
        ['socat', 'UNIX-LISTEN:%s,fork,unlink-early'
         % os.path.join(state, 'agent.sock'),
         'TCP:127.0.0.1:%d' % LISTEN_PORT]))
    return relays


def main(argv: list[str]) -> int:
    """Set up and check the guards, run the agent; its exit status."""
    with open(argv[1]) as source:
        spec = json.load(source)
    host_netns, host_mntns = int(argv[2]), int(argv[3])
    ports = [int(port) for port in argv[4].split(',')]
    state = spec['state_dir']
    check_namespaces(host_netns, host_mntns)
    covered = cover_disks(spec['disk'], spec.get('cover_source', '/dev/null'),
                          list(spec.get('extra_host_disks', [])))
    shims = write_shims(state, spec.get('poweroff', 'log'))
    tmp = private_dirs(state)
    env = {'PATH': '%s:%s/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:'
                   '/usr/bin:/sbin:/bin' % (shims, spec['ipa_venv']),
           'HOME': state, 'LANG': 'C.UTF-8', 'TMPDIR': tmp,
           'IPA_TEST_DISK': spec['disk'], 'IPA_TEST_MAC': spec['mac']}
    conf = os.path.join(state, 'ipa.conf')
    open(conf, 'w').close()
    relays = start_relays(spec, ports)
    agent, report = start_agent(spec, conf, env)
    signal.signal(signal.SIGTERM, lambda *_a: agent.terminate())
    with open(os.path.join(state, 'guards.json'), 'w') as guards:
        json.dump({'covered': covered, 'links': ['lo'], 'manager': report,
                   'shims': shims}, guards)
    open(os.path.join(state, 'ready'), 'w').close()
    while True:  # PID 1 reaps every orphan until the agent is gone
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        if pid == agent.pid:
            agent.returncode = os.waitstatus_to_exitcode(status)
            break
    for relay in relays:
        relay.kill()
    return agent.returncode or 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
