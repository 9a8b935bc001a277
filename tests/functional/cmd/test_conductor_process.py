# SPDX-License-Identifier: Apache-2.0
"""The real ``ferrum-conductor`` process: systemd notify, signals, SIGKILL."""

import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from ferrum.common import states
from ferrum.conductor import service
from ferrum.db import migration
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node as node_obj
from tests import process
from tests.functional.conductor.flows import enroll
from tests.functional.conductor.flows import to_state
from tests.polling import wait_for

BIN = os.path.dirname(sys.executable)


@pytest.fixture
def config_file(tmp_path, conf):
    path = tmp_path / 'ferrum.conf'
    path.write_text(textwrap.dedent('''
        [DEFAULT]
        host = test-conductor
        state_path = %(state)s
        log_file = %(log)s
        [conductor]
        heartbeat_interval = 1
        graceful_shutdown_timeout = 20
        ''' % {'state': tmp_path, 'log': tmp_path / 'conductor.log'}))
    result = subprocess.run([os.path.join(BIN, 'ferrum-dbsync'),
                             '--config-file', str(path), 'upgrade'],
                            capture_output=True, text=True, check=True)
    assert 'upgraded to %s' % migration.head() in result.stdout
    version = subprocess.run([os.path.join(BIN, 'ferrum-dbsync'),
                              '--config-file', str(path), 'version'],
                             capture_output=True, text=True, check=True)
    assert version.stdout.strip() == migration.head()
    return path


@pytest.fixture
def notify_socket(tmp_path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = str(tmp_path / 'notify.sock')
    sock.bind(path)
    sock.settimeout(30)
    yield sock, path
    sock.close()


def _recv_until(sock, wanted):
    seen = []
    while True:
        message = sock.recv(4096).decode()
        seen.append(message)
        if wanted in message.split('\n'):
            return seen


def _stop(proc, sock):
    """SIGTERM: systemd hears STOPPING=1 and the process exits cleanly."""
    proc.send_signal(signal.SIGTERM)
    _recv_until(sock, 'STOPPING=1')
    assert proc.wait(timeout=30) == 0


def test_notify_reload_and_graceful_stop(config_file, notify_socket, db,
                                         tmp_path):
    sock, path = notify_socket
    env = dict(os.environ, NOTIFY_SOCKET=path)
    with process.running([os.path.join(BIN, 'ferrum-conductor'),
                          '--config-file', str(config_file)],
                         env=env) as proc:
        _recv_until(sock, 'READY=1')
        me = conductor_obj.get(db, 'test-conductor')
        assert me.online
        hw = conductor_obj.list_hardware_interfaces(db, me.id)
        assert ('fake-hardware', 'power', 'fake') in {
            (i.hardware_type, i.interface_type, i.interface_name) for i in hw}

        proc.send_signal(signal.SIGHUP)
        seen = _recv_until(sock, 'READY=1')
        assert any(m.startswith('RELOADING=1\nMONOTONIC_USEC=')
                   for m in seen), seen
        wait_for(lambda: 'reloaded its configuration' in (
            tmp_path / 'conductor.log').read_text(), what='reload logged')

        _stop(proc, sock)
    assert not conductor_obj.get(db, 'test-conductor').online


def test_bad_driver_refuses_to_start_naming_it(config_file, db, tmp_path):
    override = tmp_path / 'bad-driver.conf'
    override.write_text('[DEFAULT]\nenabled_hardware_types = '
                        'fake-hardware,nope\n')
    result = subprocess.run(
        [os.path.join(BIN, 'ferrum-conductor'), '--config-file',
         str(config_file), '--config-file', str(override)],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert '"nope" from entry point namespace ferrum.hardware.types' in (
        result.stderr)


_DEPLOYER = '''
import sys, threading
from ferrum import conf as ferrum_conf
from ferrum.conductor import service
conf = ferrum_conf.load_for_program(['--config-file', sys.argv[1]])
svc = service.ConductorService(conf)
svc.start(start_periodics=False)
svc.manager.do_provisioning_action(sys.argv[2], 'deploy')
threading.Event().wait()
'''


def test_sigkill_mid_deploy_leaves_nothing_locked_after_restart(
        config_file, conf, db):
    conf(['--config-file', str(config_file)])
    first = service.ConductorService(conf, db=db)
    first.start(start_periodics=False)
    node = to_state(first.manager, db, enroll(
        first.manager, fake_deploy_seconds=600), 'available')
    first.stop()

    proc = subprocess.Popen([sys.executable, '-c', _DEPLOYER,
                             str(config_file), node.uuid])
    try:
        def deploying():
            current = node_obj.Node.get(db, node.id)
            return (current.reservation is not None
                    and current.provision_state == states.DEPLOYING)
        # The lock is taken just before the new state is written.
        wait_for(deploying, timeout=60, what='the deploy to start')
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    restarted = service.ConductorService(conf, db=db)
    restarted.start(start_periodics=False)
    try:
        node = node_obj.Node.get(db, node.id)
        assert (node.provision_state, node.reservation) == (
            states.DEPLOYFAIL, None)
        assert 'restarted while the node was in "deploying"' in (
            node.last_error)
        assert node_obj.Node.list(db, {'reserved': True}) == []
    finally:
        restarted.stop()


def test_all_in_one_runs_with_no_config_on_embedded_sqlite(tmp_path,
                                                           notify_socket):
    sock, path = notify_socket
    workdir = tmp_path / 'fresh'
    workdir.mkdir()
    # No config file; only oslo.config's environment source moves the API
    # off 6385, which a developer's `make run` may hold.
    env = dict(os.environ, NOTIFY_SOCKET=path, OS_API__PORT='0')
    with process.running([os.path.join(BIN, 'ferrum')], cwd=workdir,
                         env=env) as proc:
        _recv_until(sock, 'READY=1')
        assert (workdir / '.ferrum' / 'ferrum.sqlite').exists()
        _stop(proc, sock)
