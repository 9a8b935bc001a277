# SPDX-License-Identifier: Apache-2.0
"""The ipmi hardware type through a real conductor, real ipmitool, and the
BMC simulator (a separate process): power, boot device, failures, sync.
"""

import glob
import socket
import threading
import time

import pytest

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import service
from ferrum.objects import node as node_obj
from tests.functional.conductor.flows import settled
from tests.polling import wait_for

IPMI_CONF = {
    'DEFAULT': {'enabled_hardware_types': ['fake-hardware', 'ipmi'],
                'enabled_power_interfaces': ['fake', 'ipmitool'],
                'enabled_management_interfaces': ['fake', 'noop', 'ipmitool'],
                'enabled_deploy_interfaces': ['fake', 'ramdisk']},
    'ipmi': {'min_command_interval': 0.0, 'command_retry_timeout': 5.0,
             'power_poll_interval': 0.05},
}


def apply_conf(conf, overrides=IPMI_CONF):
    for group, values in overrides.items():
        for name, value in values.items():
            conf.set_override(name, value,
                              None if group == 'DEFAULT' else group)


@pytest.fixture
def ipmi_conductor(conf, db, bmc_simulator):
    apply_conf(conf)
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    yield svc
    svc.stop()


def ipmi_info(bmc, **extra):
    info = {'ipmi_address': '127.0.0.1', 'ipmi_port': bmc.port,
            'ipmi_username': bmc.user, 'ipmi_password': bmc.password}
    info.update(extra)
    return info


def enroll(conductor, info, **values):
    return conductor.manager.create_node(dict(
        {'driver': 'ipmi', 'driver_info': info}, **values))


def power(conductor, db, node, target):
    conductor.manager.change_node_power_state(node.uuid, target)
    return wait_for(lambda: _done_power(db, node.id), timeout=30,
                    what='power change to %s' % target)


def _done_power(db, node_id):
    node = node_obj.Node.get(db, node_id)
    if node.target_power_state is None and node.reservation is None:
        return node
    return None


def test_power_on_off_reboot_and_soft_off(ipmi_conductor, db, bmc):
    node = enroll(ipmi_conductor, ipmi_info(bmc))
    ipmi_conductor.manager.do_provisioning_action(node.uuid, 'manage')
    node = settled(db, node.id, states.MANAGEABLE, timeout=30)
    assert node.power_state == states.POWER_OFF  # read by verification

    node = power(ipmi_conductor, db, node, states.POWER_ON)
    assert (node.power_state, node.last_error) == (states.POWER_ON, None)
    assert bmc.sim.state(bmc.port)['power'] == 'on'

    node = power(ipmi_conductor, db, node, states.REBOOT)
    assert node.power_state == states.POWER_ON
    log = bmc.sim.state(bmc.port)['log']
    assert bmc.sim.state(bmc.port)['power'] == 'on'
    assert any('off' in entry for entry in log)

    node = power(ipmi_conductor, db, node, states.SOFT_POWER_OFF)
    assert node.power_state == states.POWER_OFF
    assert bmc.sim.state(bmc.port)['power'] == 'off'

    node = power(ipmi_conductor, db, node, states.POWER_OFF)  # idempotent
    assert (node.power_state, node.last_error) == (states.POWER_OFF, None)


def test_power_change_waits_for_a_slow_bmc(ipmi_conductor, db, bmc):
    bmc.sim.set_power_delay(bmc.port, 1)
    node = enroll(ipmi_conductor, ipmi_info(bmc))
    started = time.monotonic()
    node = power(ipmi_conductor, db, node, states.POWER_ON)
    assert node.power_state == states.POWER_ON
    assert time.monotonic() - started >= 1.0
    assert bmc.sim.state(bmc.port)['power'] == 'on'


def test_power_change_times_out_with_a_clear_error(ipmi_conductor, db, bmc,
                                                   conf):
    conf.set_override('power_state_change_timeout', 2, 'conductor')
    bmc.sim.set_power_delay(bmc.port, 30)
    node = enroll(ipmi_conductor, ipmi_info(bmc))
    node = power(ipmi_conductor, db, node, states.POWER_ON)
    assert 'still reported "power off" after 2s' in node.last_error
    assert '127.0.0.1:%d' % bmc.port in node.last_error


@pytest.mark.parametrize('device, persistent', [
    ('pxe', True), ('disk', False), ('cdrom', True), ('bios', False),
    ('safe', True)])
def test_boot_device_round_trip(ipmi_conductor, db, bmc, device, persistent):
    node = enroll(ipmi_conductor, ipmi_info(bmc))
    ipmi_conductor.manager.set_boot_device(node.uuid, device, persistent)
    assert ipmi_conductor.manager.get_boot_device(node.uuid) == {
        'boot_device': device, 'persistent': persistent}
    state = bmc.sim.state(bmc.port)
    assert (state['persistent'], state['efi']) == (persistent, False)


def test_inject_nmi_pulses_the_diagnostic_interrupt(ipmi_conductor, bmc):
    node = enroll(ipmi_conductor, ipmi_info(bmc))
    assert 'power diag' not in bmc.sim.state(bmc.port)['log']
    ipmi_conductor.manager.inject_nmi(node.uuid)
    assert bmc.sim.state(bmc.port)['log'][-1] == 'power diag'
    # Once more is one more interrupt.
    ipmi_conductor.manager.inject_nmi(node.uuid)
    assert bmc.sim.state(bmc.port)['log'][-2:] == ['power diag'] * 2
    # A node without a BMC address fails validation before any command.
    bare = enroll(ipmi_conductor, {'ipmi_username': 'admin'})
    with pytest.raises(exception.MissingParameterValue):
        ipmi_conductor.manager.inject_nmi(bare.uuid)


@pytest.mark.parametrize('suite', [17, 3])
def test_cipher_suite_from_driver_info_is_used(ipmi_conductor, db, bmc,
                                               suite):
    node = enroll(ipmi_conductor, ipmi_info(bmc, ipmi_cipher_suite=suite))
    node = power(ipmi_conductor, db, node, states.POWER_ON)
    assert (node.power_state, node.last_error) == (states.POWER_ON, None)
    ipmi_conductor.manager.set_boot_device(node.uuid, 'pxe', True)
    assert ipmi_conductor.manager.get_boot_device(node.uuid) == {
        'boot_device': 'pxe', 'persistent': True}
    state = bmc.sim.state(bmc.port)
    assert (state['power'], state['boot_device'], state['persistent']) == (
        'on', 'pxe', True)
    # Every ipmitool session since the reset negotiated this suite.
    assert state['cipher_suites'] == [suite]


def test_uefi_node_gets_the_efi_flag(ipmi_conductor, db, bmc):
    node = enroll(ipmi_conductor, ipmi_info(bmc),
                  properties={'capabilities': 'boot_mode:uefi'})
    ipmi_conductor.manager.set_boot_device(node.uuid, 'pxe', True)
    state = bmc.sim.state(bmc.port)
    assert (state['boot_device'], state['persistent'], state['efi']) == (
        'pxe', True, True)
    assert ipmi_conductor.manager.get_boot_device(node.uuid) == {
        'boot_device': 'pxe', 'persistent': True}
    assert ipmi_conductor.manager.get_supported_boot_devices(node.uuid) == [
        'pxe', 'disk', 'safe', 'cdrom', 'bios']


def test_wrong_password_fails_fast_without_retries(ipmi_conductor, db, bmc):
    node = enroll(ipmi_conductor, ipmi_info(bmc,
                                            ipmi_password='not-the-password'))
    started = time.monotonic()
    node = power(ipmi_conductor, db, node, states.POWER_ON)
    elapsed = time.monotonic() - started
    assert 'refused' in node.last_error
    assert 'ipmi_password' in node.last_error
    assert elapsed < 2.0, 'an auth failure was retried (%.1fs)' % elapsed
    assert bmc.sim.state(bmc.port)['power'] == 'off'


@pytest.fixture
def silent_port():
    """A UDP socket that swallows every packet: a BMC that never answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(('127.0.0.1', 0))
    yield sock.getsockname()[1]
    sock.close()


def test_silent_bmc_fails_within_the_deadline_naming_it(ipmi_conductor, db,
                                                        conf, silent_port):
    conf.set_override('command_retry_timeout', 3.0, 'ipmi')
    node = enroll(ipmi_conductor, {'ipmi_address': '127.0.0.1',
                                   'ipmi_port': silent_port,
                                   'ipmi_username': 'admin',
                                   'ipmi_password': 'whatever'})
    started = time.monotonic()
    node = power(ipmi_conductor, db, node, states.POWER_ON)
    elapsed = time.monotonic() - started
    assert '127.0.0.1:%d did not answer' % silent_port in node.last_error
    # One attempt takes 2 s (-N 1 -R 1); retries stop at the 3 s deadline.
    assert 2.0 <= elapsed < 3.0 + 2.0 + 5.0


def test_busy_bmc_is_retried_then_succeeds(ipmi_conductor, db, bmc):
    node = enroll(ipmi_conductor, ipmi_info(bmc))
    bmc.sim.busy(bmc.port, 2)
    node = power(ipmi_conductor, db, node, states.POWER_ON)
    assert (node.power_state, node.last_error) == (states.POWER_ON, None)
    assert bmc.sim.state(bmc.port)['busy'] == 0


def test_power_sync_failure_sets_maintenance_then_recovers(ipmi_conductor,
                                                           db, bmc, conf):
    conf.set_override('power_state_sync_max_retries', 2, 'conductor')
    conf.set_override('command_retry_timeout', 0.0, 'ipmi')
    node = enroll(ipmi_conductor, ipmi_info(bmc))
    ipmi_conductor.manager.do_provisioning_action(node.uuid, 'manage')
    settled(db, node.id, states.MANAGEABLE, timeout=30)
    bmc.sim.busy(bmc.port, 2)  # the next two reads fail
    for _ in range(2):
        ipmi_conductor.power_sync.sync_power_states(ipmi_conductor.ctx)
    node = node_obj.Node.get(db, node.id)
    assert (node.maintenance, node.fault) == (True,
                                              states.FAULT_POWER_FAILURE)
    assert 'busy' in node.maintenance_reason
    ipmi_conductor.power_sync.sync_power_states(ipmi_conductor.ctx)
    node = node_obj.Node.get(db, node.id)
    assert (node.maintenance, node.fault, node.power_state) == (
        False, None, states.POWER_OFF)


def _ipmitool_cmdlines(stop, seen):
    while not stop.is_set():
        for path in glob.glob('/proc/[0-9]*/cmdline'):
            try:
                with open(path, 'rb') as f:
                    argv = f.read().split(b'\0')
            except OSError:
                continue
            if argv and argv[0].endswith(b'ipmitool'):
                seen.append(b' '.join(argv).decode(errors='replace'))


def test_password_is_never_in_a_process_list_or_log(ipmi_conductor, db, bmc,
                                                    caplog):
    caplog.set_level('DEBUG')
    bmc.sim.set_power_delay(bmc.port, 1)
    node = enroll(ipmi_conductor, ipmi_info(bmc))
    stop, seen = threading.Event(), []
    spy = threading.Thread(target=_ipmitool_cmdlines, args=(stop, seen))
    spy.start()
    try:
        node = power(ipmi_conductor, db, node, states.POWER_ON)
    finally:
        stop.set()
        spy.join()
    assert node.power_state == states.POWER_ON
    assert seen, 'the spy saw no ipmitool process'
    assert all(bmc.password not in cmdline for cmdline in seen)
    assert all('-f' in cmdline.split() for cmdline in seen)
    assert bmc.password not in caplog.text
    assert 'ipmitool' in caplog.text or 'is power on' in caplog.text


@pytest.mark.parametrize('force', [False, True])
def test_power_sync_corrections_are_in_the_node_history(ipmi_conductor, db,
                                                        bmc, conf, force):
    """Someone powers the machine on behind ferrum's back (the real
    ipmitool); the sync's correction is a "monitoring" history entry."""
    from ferrum.objects import node_history
    conf.set_override('force_power_state_during_sync', force, 'conductor')
    node = enroll(ipmi_conductor, ipmi_info(bmc))
    ipmi_conductor.manager.do_provisioning_action(node.uuid, 'manage')
    settled(db, node.id, states.MANAGEABLE, timeout=30)
    node = power(ipmi_conductor, db, node, states.POWER_OFF)
    result = bmc.sim.ipmitool(bmc.port, 'power', 'on')
    assert result.returncode == 0, result.stderr
    ipmi_conductor.power_sync.sync_power_states(ipmi_conductor.ctx)
    entries = node_history.list_for(db, node.id, None)
    last = entries[-1]
    assert last['event_type'] == 'monitoring'
    assert last['conductor'] == ipmi_conductor.ctx.host
    if force:
        assert last['event'] == ('Power state power on found by the sync; '
                                 'set back to power off')
    else:
        assert last['event'] == ('Power state corrected by the sync: '
                                 'power off -> power on')
