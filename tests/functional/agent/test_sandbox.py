# SPDX-License-Identifier: Apache-2.0
"""The agent sandbox's guards, and the real agent in it, without ferrum.

The three guards against the agent touching the host's disks, each
checked here on its own: the loop-disk hardware manager refuses anything
but a loop device; ``/dev/null`` covers every host disk in the sandbox,
whose network has only ``lo``; a sandbox that cannot establish a guard
fails to start, and the agent never runs. Then the real
ironic-python-agent boots in it against a stub API: lookup, token,
heartbeat with auto-TLS, and commands verified with its certificate.
"""

import hashlib
import http.client
import json
import os
import ssl
import subprocess
import sys
import time
import uuid
from typing import Any

import pytest
from agent_test_driver import sandbox

from ferrum.common import exception
from tests.agent import ImageServer
from tests.agent import StubIronic
from tests.agent import machine
from tests.agent import machines
from tests.agent import make_images
from tests.agent import require_agent_tools
from tests.agent import sha256_file
from tests.polling import wait_for

pytestmark = pytest.mark.timeout(300)

#: Calls every method of the manager that must refuse a bad IPA_TEST_DISK,
#: once per disk value given on the command line ("-" for unset).
_PROBE = '''
import json, os, sys
from ipa_loopdisk import manager
answers = {}
for disk in sys.argv[1:]:
    os.environ.pop('IPA_TEST_DISK', None)
    if disk != '-':
        os.environ['IPA_TEST_DISK'] = disk
    hwm = manager.LoopDiskHardwareManager()
    out = answers[disk] = {}
    for name in ('evaluate_hardware_support', 'initialize',
                 'list_block_devices', 'get_os_install_device'):
        try:
            out[name] = repr(getattr(hwm, name)())
        except manager.UnsafeDisk as exc:
            out[name] = 'refused: %s' % exc
        except Exception as exc:
            out[name] = 'error: %s' % type(exc).__name__
print(json.dumps(answers))
'''


@pytest.fixture(autouse=True)
def _tools() -> None:
    require_agent_tools()


def _probe(*disks: str, mac: str = '02:00:00:00:00:01'
           ) -> dict[str, dict[str, str]]:
    """What the manager answers with each IPA_TEST_DISK ("-": unset)."""
    result = subprocess.run(
        [os.path.join(machines.IPA_VENV, 'bin', 'python'), '-c', _PROBE,
         *disks], env={'PATH': os.environ['PATH'], 'IPA_TEST_MAC': mac},
        capture_output=True, text=True, check=True)
    answers: dict[str, dict[str, str]] = json.loads(
        result.stdout.splitlines()[-1])
    return answers


def _host_disks() -> list[str]:
    out = subprocess.run(['lsblk', '-dn', '-o', 'NAME,TYPE'], check=True,
                         capture_output=True, text=True).stdout
    return ['/dev/' + line.split()[0] for line in out.splitlines()
            if line.split()[1:] == ['disk']]


def _inside(box: machines.Machine, *command: str) -> str:
    """Run ``command`` in the sandbox's mount and network namespaces."""
    pid = wait_for(lambda: sandbox.init_pids(box.spec), what='sandbox init')
    return subprocess.run(['nsenter', '-t', str(pid[0]), '-m', '-n', '-p',
                           '--', *command], check=True, capture_output=True,
                          text=True).stdout


def test_hardware_manager_refuses_anything_but_a_loop_device():
    bad = ['-', '', '/dev/vda', '/dev/loop', '/dev/loop0p1',
           '/dev/loop987654', '/etc/hostname', '/dev/loop0 ']
    answers = _probe(*bad)
    for disk in bad:
        assert all(v.startswith('refused: ')
                   for v in answers[disk].values()), (disk, answers[disk])
    # As the sandbox checks it before the agent: exit 1, naming the reason.
    for env in ({}, {'IPA_TEST_DISK': '/dev/vda'}):
        result = subprocess.run(
            [os.path.join(machines.IPA_VENV, 'bin', 'python'), '-m',
             'ipa_loopdisk'], env=dict(env, IPA_TEST_MAC='02:00:00:00:00:01'),
            capture_output=True, text=True)
        assert result.returncode == 1
        assert 'ipa_loopdisk: IPA_TEST_DISK=' in result.stderr


def test_hardware_manager_lists_only_its_loop_device():
    with machine() as box:
        answer = _probe(box.loop, mac=box.mac)[box.loop]
        assert answer['evaluate_hardware_support'] == '3'  # SERVICE_PROVIDER
        assert box.loop in answer['list_block_devices']
        assert answer['list_block_devices'].count('BlockDevice') == 1
        # No hints (no node yet): the generic choice wants >= 4 GiB, so
        # the small loop device is not picked, and nothing stands in.
        assert answer['get_os_install_device'] == 'error: DeviceNotFound'


def test_sandbox_covers_every_host_disk_and_has_only_loopback():
    with StubIronic('02:00:00:00:00:02', '/dev/loop0') as stub, \
            machine(stub.url) as box:
        box.start_agent()
        guards = box.guards()
        disks = _host_disks()
        assert disks, 'this machine lists no disk at all'
        for disk in disks:
            assert disk in guards['covered']
            # Outside and inside: nsenter reads through the sandbox's mounts.
            assert _inside(box, 'sh', '-c', 'head -c 65536 %s | wc -c'
                           % disk).strip() == '0', disk
        assert box.loop not in guards['covered']
        assert _inside(box, 'sh', '-c', 'head -c 4096 %s | wc -c'
                       % box.loop).strip() == '4096'
        links = _inside(box, 'ip', '-o', 'link', 'show').splitlines()
        assert [line.split(':')[1].strip() for line in links] == ['lo']
        assert _inside(box, 'ls', '/sys/class/net').split() == ['lo']
        assert guards['manager']['disks'] == [box.loop]
        box.kill_agent()
        wait_for(lambda: not box.agent_running(), what='the sandbox to die')


def _refused(box: machines.Machine, reason: str) -> None:
    with pytest.raises(sandbox.SandboxError, match=reason):
        box.start_agent()
    assert not box.agent_running()
    log = box.agent_log()
    assert 'GUARD FAILED' in log
    assert 'Started API service' not in log  # the agent never ran
    assert not os.path.exists(os.path.join(box.spec['state_dir'], 'ready'))


def test_sandbox_refuses_a_host_disk_it_cannot_cover():
    with machine(extra_host_disks=['ferrum-no-such-disk']) as box:
        _refused(box, 'ferrum-no-such-disk has no node')


def test_sandbox_refuses_a_cover_that_still_reads_data(tmp_path):
    fake_null = tmp_path / 'not-null'
    fake_null.write_bytes(b'data' * 1024)
    with machine(cover_source=str(fake_null)) as box:
        _refused(box, 'still reads as a disk')


def test_sandbox_refuses_when_the_hardware_manager_does(monkeypatch):
    with machine(mac='not-a-mac') as box:
        _refused(box, 'hardware manager refused')


def test_sandbox_checks_the_disk_inside_too(monkeypatch):
    # The host-side check passes /dev/vda through only when disabled; the
    # sandbox's own check still stops it before any agent runs.
    with machine() as box:
        box.spec['disk'] = '/dev/vda'
        box.write_spec()
        with pytest.raises(sandbox.SandboxError, match='not a loop'):
            sandbox.start(box.spec)
        monkeypatch.setattr(sandbox, 'check_spec', lambda spec: None)
        with pytest.raises(sandbox.SandboxError, match='vda was not covered'):
            sandbox.start(box.spec)
        assert 'Started API service' not in box.agent_log()


def _command(box: machines.Machine, ca: str, method: str, path: str,
             body: Any = None) -> tuple[int, Any]:
    context = ssl.create_default_context(cadata=ca)  # verifies 127.0.0.1
    conn = http.client.HTTPSConnection('127.0.0.1', box.agent_port,
                                       context=context, timeout=60)
    try:
        conn.request(method, path, body=None if body is None
                     else json.dumps(body),
                     headers={'Content-Type': 'application/json'})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b'null')
    finally:
        conn.close()


def test_real_agent_boots_in_the_sandbox_and_serves_over_tls():
    with machine() as box, StubIronic(box.mac, box.loop) as stub:
        box.set_api_url(stub.url)
        started = time.monotonic()
        box.start_agent()
        heartbeat = wait_for(lambda: stub.heartbeats and stub.heartbeats[0],
                             timeout=60, what='the first heartbeat')
        booted = time.monotonic() - started
        assert set(heartbeat) == {'callback_url', 'agent_token',
                                  'agent_version', 'agent_verify_ca'}
        assert heartbeat['callback_url'] == box.agent_url
        assert heartbeat['agent_token'] == stub.token
        assert heartbeat['agent_version'] == '13.0.0'
        ca = heartbeat['agent_verify_ca']
        lookups = [r for r in stub.requests if r['path'] == '/v1/lookup']
        assert lookups[0]['query']['addresses'] == [box.mac]
        assert lookups[0]['version'] == '1.62'

        status, body = _command(box, ca, 'GET', '/v1/status')
        assert (status, body['version']) == (200, '13.0.0')
        status, body = _command(box, ca, 'GET',
                                '/v1/commands/?agent_token=wrong')
        assert status == 401 and 'Token invalid' in body['faultstring']
        with pytest.raises(ssl.SSLCertVerificationError):
            _command(box, _other_ca(), 'GET', '/v1/status')

        node = {'uuid': stub.node_uuid, 'properties': {
            'root_device': box.root_device}, 'instance_info': {},
            'driver_internal_info': {}}
        status, result = _command(
            box, ca, 'POST', '/v1/commands/?wait=true&agent_token=%s'
            % stub.token, {'name': 'clean.get_clean_steps',
                           'params': {'node': node, 'ports': []}})
        assert status == 200 and result['command_status'] == 'SUCCEEDED'
        steps = result['command_result']['clean_steps']
        priorities = {s['step']: s['priority']
                      for s in steps['LoopDiskHardwareManager']}
        assert priorities['erase_devices_metadata'] == 99
        assert priorities['erase_devices'] == 10
        log = box.agent_log()
        picked = {line.split('Picked root device ')[1].split()[0]
                  for line in log.splitlines() if 'Picked root device' in line}
        assert picked <= {box.loop}, picked
        assert box.guards()['manager']['disks'] == [box.loop]
        print('agent booted to its first heartbeat in %.1fs' % booted)


def _other_ca() -> str:
    import trustme
    return trustme.CA().cert_pem.bytes().decode()


def _task(spec_path: str | None, root_device: Any) -> Any:
    class Node:
        uuid = str(uuid.uuid4())
        driver_info = {'agent_test_spec': spec_path} if spec_path else {}
        properties = {'root_device': root_device}

    class Task:
        node = Node()
    return Task()


def test_power_interface_refuses_without_spec_or_root_device_hints():
    from agent_test_driver import power
    iface = power.AgentTestPower()
    with pytest.raises(exception.MissingParameterValue):
        iface.validate(_task(None, None))
    with pytest.raises(exception.InvalidParameterValue):
        iface.validate(_task('/nonexistent/spec.json', None))
    with machine() as box:
        for hints in (None, {'name': '/dev/vda'}, {'size': 1}):
            with pytest.raises(exception.InvalidParameterValue,
                               match='root_device'):
                iface.set_power_state(_task(box.spec_path, hints), 'power on')
        assert not box.agent_running()


def test_power_interface_starts_and_stops_the_sandbox():
    from agent_test_driver import power

    from ferrum.common import states
    iface = power.AgentTestPower()
    with machine() as box, StubIronic(box.mac, box.loop) as stub:
        box.set_api_url(stub.url)
        task = _task(box.spec_path, box.root_device)
        assert iface.get_power_state(task) == states.POWER_OFF
        iface.set_power_state(task, states.POWER_ON)
        assert iface.get_power_state(task) == states.POWER_ON
        wait_for(lambda: stub.heartbeats, timeout=60, what='a heartbeat')
        iface.reboot(task)  # off, then a fresh agent: a second lookup
        wait_for(lambda: len([r for r in stub.requests
                              if r['path'] == '/v1/lookup']) >= 2,
                 timeout=60, what='the second boot')
        box.kill_agent()
        wait_for(lambda: iface.get_power_state(task) == states.POWER_OFF,
                 what='the killed machine to be off')
        iface.set_power_state(task, states.POWER_OFF)
        assert not box.agent_running()
    assert subprocess.run(['losetup', '-j', box.disk_file],
                          capture_output=True, text=True).stdout == ''
    assert not os.path.exists(box.directory)


def test_a_machine_on_standby_is_off_until_its_power_on():
    """Standing by, the guards are all up and the agent loaded, yet the
    machine is off and the agent has not started; the power on presses
    its button, and a power off of a machine that is off keeps it."""
    from agent_test_driver import power

    from ferrum.common import states
    iface = power.AgentTestPower()
    with machine(standby=True) as box, StubIronic(box.mac, box.loop) as stub:
        box.set_api_url(stub.url)
        task = _task(box.spec_path, box.root_device)
        spec = sandbox.load_spec(box.spec_path)
        sandbox.stand_by(spec)
        assert sandbox.standing_by(spec)
        assert box.guards()['manager']['disks'] == [box.loop]
        assert iface.get_power_state(task) == states.POWER_OFF
        iface.set_power_state(task, states.POWER_OFF)
        assert sandbox.standing_by(spec)
        assert 'Starting ironic-python-agent' not in box.agent_log()
        assert stub.requests == []
        pid = sandbox.init_pids(spec)
        iface.set_power_state(task, states.POWER_ON)
        assert iface.get_power_state(task) == states.POWER_ON
        assert sandbox.init_pids(spec) == pid  # the same sandbox, pressed
        assert not sandbox.standing_by(spec)
        heartbeat = wait_for(lambda: stub.heartbeats and stub.heartbeats[0],
                             timeout=60, what='the first heartbeat')
        assert heartbeat['agent_token'] == stub.token
        # Off: back on standby in the background, a fresh sandbox.
        iface.set_power_state(task, states.POWER_OFF)
        wait_for(lambda: sandbox.standing_by(spec), timeout=60,
                 what='the machine back on standby')
        assert sandbox.init_pids(spec) != pid
        assert iface.get_power_state(task) == states.POWER_OFF


def _run_step(box: machines.Machine, ca: str, token: str, name: str,
              params: dict[str, Any]) -> dict[str, Any]:
    """An asynchronous command, then ``GET /v1/commands/<id>?wait=true``
    (which blocks until it ends)."""
    query = 'agent_token=%s' % token
    status, started = _command(box, ca, 'POST', '/v1/commands/?wait=false&'
                               + query, {'name': name, 'params': params})
    assert status == 200, started
    status, done = _command(box, ca, 'GET', '/v1/commands/%s?wait=true&%s'
                            % (started['id'], query))
    assert status == 200, done
    result: dict[str, Any] = done
    return result


def test_real_agent_erases_and_writes_both_image_formats(tmp_path):
    images = make_images(str(tmp_path / 'images'))
    with machine() as box, StubIronic(box.mac, box.loop) as stub, \
            ImageServer(str(tmp_path / 'images')) as server:
        box.set_api_url(stub.url)
        box.forward_port(server.port)
        box.write_marker(0, b'M' * 4096)
        box.start_agent()
        heartbeat = wait_for(lambda: stub.heartbeats and stub.heartbeats[0],
                             timeout=60, what='the first heartbeat')
        ca, token = heartbeat['agent_verify_ca'], heartbeat['agent_token']
        node = {'uuid': stub.node_uuid, 'instance_info': {},
                'properties': {'root_device': box.root_device},
                'driver_internal_info': {}}
        status, steps = _command(
            box, ca, 'POST', '/v1/commands/?wait=true&agent_token=' + token,
            {'name': 'deploy.get_deploy_steps',
             'params': {'node': node, 'ports': []}})
        versions = steps['command_result']['hardware_manager_version']
        done = _run_step(box, ca, token, 'clean.execute_clean_step', {
            'step': {'step': 'erase_devices_metadata', 'priority': 99,
                     'interface': 'deploy', 'reboot_requested': False},
            'node': node, 'ports': [], 'clean_version': versions})
        assert done['command_status'] == 'SUCCEEDED', done['command_error']
        assert box.read(0, 4096) == bytes(4096)
        for path, fmt in ((images.raw, 'raw'), (images.qcow2, 'qcow2')):
            box.write_marker(0, os.urandom(images.size))
            info = {'id': fmt, 'urls': [server.url(os.path.basename(path))],
                    'disk_format': fmt, 'container_format': 'bare',
                    'stream_raw_images': True, 'os_hash_algo': 'sha256',
                    'os_hash_value': sha256_file(path),
                    'node_uuid': stub.node_uuid}
            done = _run_step(box, ca, token, 'deploy.execute_deploy_step', {
                'step': {'step': 'write_image', 'interface': 'deploy',
                         'priority': 80, 'reboot_requested': False,
                         'args': {'image_info': info, 'configdrive': None}},
                'node': node, 'ports': [], 'deploy_version': versions})
            assert done['command_status'] == 'SUCCEEDED', \
                done['command_error']
            written = hashlib.sha256(box.read(0, images.size)).hexdigest()
            assert written == images.content_sha256, fmt
        status, uuids = _command(
            box, ca, 'POST', '/v1/commands/?wait=true&agent_token=' + token,
            {'name': 'standby.get_partition_uuids', 'params': {}})
        assert uuids['command_result']['root uuid'] == images.disk_id
        assert server.requests == ['/disk.raw', '/disk.qcow2']


def test_sandbox_outlives_the_process_that_started_it():
    # A conductor SIGKILLed mid-deploy leaves the machine on; another
    # process finds it from the state directory and powers it off.
    with machine() as box, StubIronic(box.mac, box.loop) as stub:
        box.set_api_url(stub.url)
        subprocess.run(
            [sys.executable, '-c', 'import sys; from agent_test_driver '
             'import sandbox; sandbox.start(sandbox.load_spec(sys.argv[1]))',
             box.spec_path], check=True, timeout=120)
        assert box.agent_running()
        wait_for(lambda: stub.heartbeats, timeout=60, what='a heartbeat')
        box.stop_agent()
        assert not box.agent_running()
        assert sandbox.init_pids(box.spec) == []


@pytest.fixture
def redfish_agent_conductor(conf, db, tmp_path):
    """A conductor with redfish-agent-test enabled, and its emulator."""
    from ferrum.conductor import service
    from tests.functional.redfish.emulator import Emulator
    from tests.functional.redfish.emulator import apply_conf
    apply_conf(conf)
    apply_conf(conf, {'DEFAULT': {
        'enabled_hardware_types': ['redfish-agent-test'],
        'enabled_power_interfaces': ['redfish-agent-test'],
        'enabled_management_interfaces': ['redfish'],
        'enabled_boot_interfaces': ['redfish-virtual-media'],
        'enabled_deploy_interfaces': ['direct']}})
    emulator = Emulator(tmp_path / 'redfish')
    emulator.start()
    svc = service.ConductorService(conf, db=db)
    try:
        svc.start(start_periodics=False)
        yield svc, emulator
        svc.stop()
    finally:
        emulator.stop()


def test_redfish_variant_changes_the_bmc_then_the_machine(
        redfish_agent_conductor):
    from ferrum.common import states
    from ferrum.conductor import task_manager
    svc, emulator = redfish_agent_conductor
    with machine() as box, StubIronic(box.mac, box.loop) as stub:
        box.set_api_url(stub.url)
        node = svc.manager.create_node({
            'driver': 'redfish-agent-test', 'driver_info': dict(
                emulator.driver_info(emulator.uuids[0]),
                agent_test_spec=box.spec_path),
            'properties': {'root_device': box.root_device}})
        with task_manager.acquire(svc.ctx, node.uuid, purpose='test') as task:
            task.driver.power.validate(task)
            task.driver.power.set_power_state(task, states.POWER_ON)
            assert emulator.system(emulator.uuids[0])['PowerState'] == 'On'
            assert box.agent_running()
            wait_for(lambda: stub.heartbeats, timeout=60, what='a heartbeat')
            task.driver.power.set_power_state(task, states.POWER_OFF)
            assert emulator.system(emulator.uuids[0])['PowerState'] == 'Off'
            assert not box.agent_running()
            assert task.driver.power.get_power_state(task) == states.POWER_OFF
