# SPDX-License-Identifier: Apache-2.0
"""ferrum driving the real ironic-python-agent against a loop disk.

Each test enrols an agent test machine (tests/agent: a loop device, the
agent in namespaces behind three guards) as an ``agent-test`` node whose
power button boots the agent, then cleans and deploys it through the API,
the ``baremetal`` CLI or metalsmith, and reads the disk back.
"""

import hashlib
import os
import ssl
import urllib.error
import urllib.request

from tests.agent import images as images_mod
from tests.functional.agent import nodes
from tests.functional.agent.ferrum_process import Ferrum
from tests.functional.clients.session import BAREMETAL
from tests.functional.clients.session import Baremetal
from tests.real import require_real

MIB = 1024 * 1024
#: Where the tests write a marker that erase_devices must zero.
DEEP = 64 * MIB


def _disk_sha256(box, size: int) -> str:
    return hashlib.sha256(box.read(0, size)).hexdigest()


def _history(ferrum: Ferrum, uuid: str) -> list[str]:
    response = ferrum.api('GET', '/v1/nodes/%s/history?detail=true' % uuid)
    assert response.status_code == 200, response.text
    return [entry['event'] for entry in response.json()['history']]


def _set_image(ferrum: Ferrum, uuid: str, info: dict) -> None:
    response = ferrum.api('PATCH', '/v1/nodes/%s' % uuid, json=[
        {'op': 'add', 'path': '/instance_info/%s' % key, 'value': value}
        for key, value in info.items()])
    assert response.status_code == 200, response.text


def _agent_get(node: dict, path: str) -> int:
    """GET ``path`` on the node's agent, verifying its TLS certificate
    with the one it announced; the HTTP status."""
    info = node['driver_internal_info']
    context = ssl.create_default_context(cadata=info['agent_verify_ca'])
    try:
        with urllib.request.urlopen(info['agent_url'] + path,
                                    context=context, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_clean_then_raw_then_qcow2(ferrum, images):
    made, served = images
    tokens = []
    with nodes.enrolled(ferrum, served) as (box, node):
        uuid = node['uuid']
        box.write_marker(0, os.urandom(MIB))
        box.write_marker(DEEP, b'tenant data ' * 100)

        # provide: automated cleaning boots the agent, erases, powers off.
        ferrum.provision(uuid, 'provide')
        ferrum.wait_state(uuid, 'available')
        assert box.read(0, MIB) == bytes(MIB)
        assert box.read(DEEP, 1200) == bytes(1200)
        events = _history(ferrum, uuid)
        assert 'Clean step deploy.erase_devices_metadata started' in events
        assert 'Clean step deploy.erase_devices started' in events
        assert not box.agent_running()

        # A raw image, streamed. The image server holds it back, so that
        # the node stays waiting for the agent's write meanwhile.
        _set_image(ferrum, uuid, nodes.image_info(made, served))
        with served.hold('disk.raw'):
            ferrum.provision(uuid, 'active')
            waiting = ferrum.wait_step(uuid, 'write_image')
            token = ferrum.token_of(uuid)
            assert token and len(token) >= 32
            tokens.append(token)
            shown = ferrum.api('GET', '/v1/nodes/%s' % uuid).text
            assert token not in shown
            metrics = ferrum.api('GET', '/metrics')
            assert metrics.status_code == 200 and token not in metrics.text
            # ferrum refuses a wrong token and changes nothing ...
            response = ferrum.api('POST', '/v1/heartbeat/%s' % uuid, json={
                'callback_url': waiting['driver_internal_info']['agent_url'],
                'agent_token': 'x' * 43, 'agent_version': '13.0.0'})
            assert response.status_code == 400
            assert ferrum.node(uuid)['provision_state'] == 'wait call-back'
            # ... and so does the agent, which takes ferrum's.
            assert _agent_get(waiting, '/v1/commands/?agent_token=wrong'
                              ) == 401
            assert _agent_get(waiting, '/v1/commands/?agent_token=%s'
                              % token) == 200
        active = ferrum.wait_state(uuid, 'active', 'deploy failed')
        assert active['provision_state'] == 'active', active['last_error']
        assert _disk_sha256(box, made.size) == made.content_sha256
        assert ferrum.token_of(uuid) is None
        assert active['deploy_step'] is None
        events = _history(ferrum, uuid)
        for step in ('deploy', 'write_image', 'prepare_instance_boot',
                     'tear_down_agent', 'switch_to_tenant_network',
                     'boot_instance'):
            assert 'Deploy step deploy.%s started' % step in events

        # Undeploy cleans; then the qcow2 copy, through the baremetal CLI.
        ferrum.provision(uuid, 'deleted')
        ferrum.wait_state(uuid, 'available')
        assert box.read(0, MIB) == bytes(MIB)
        if not os.access(BAREMETAL, os.X_OK):
            require_real('the baremetal CLI (python-ironicclient)')
        cli = Baremetal(ferrum.url, str(ferrum.directory))
        qcow2 = nodes.image_info(made, served, 'disk.qcow2')
        cli('node', 'set', uuid, *[
            arg for key, value in qcow2.items()
            for arg in ('--instance-info', '%s=%s' % (key, value))])
        cli('node', 'deploy', uuid, '--wait', '240')
        assert ferrum.node(uuid)['provision_state'] == 'active'
        assert _disk_sha256(box, made.size) == made.content_sha256
    log = ferrum.log()
    for token in tokens:
        assert token not in log
    feed = ferrum.api('GET', '/v1/events').text
    for token in tokens:
        assert token not in feed


def _available_uncleaned(ferrum: Ferrum, uuid: str, info: dict) -> None:
    """manageable -> available without cleaning (these tests are about the
    deploy), with ``info`` as the image."""
    response = ferrum.api('PATCH', '/v1/nodes/%s' % uuid, json=[
        {'op': 'replace', 'path': '/automated_clean', 'value': False}])
    assert response.status_code == 200, response.text
    ferrum.provision(uuid, 'provide')
    ferrum.wait_state(uuid, 'available')
    _set_image(ferrum, uuid, info)


def _failed_deploy(ferrum, served, info, **machine):
    with nodes.enrolled(ferrum, served, **machine) as (box, node):
        uuid = node['uuid']
        _available_uncleaned(ferrum, uuid, info)
        ferrum.provision(uuid, 'active')
        failed = ferrum.wait_state(uuid, 'deploy failed', 'active')
        assert failed['provision_state'] == 'deploy failed'
        assert not box.agent_running()
        return failed


def test_a_wrong_checksum_names_both_values(ferrum, images):
    made, served = images
    wrong = 'ab' * 32
    failed = _failed_deploy(ferrum, served, nodes.image_info(
        made, served, sha256=wrong))
    assert wrong in failed['last_error']
    assert made.raw_sha256 in failed['last_error']
    assert 'deploy.write_image' in failed['last_error']


def test_a_dead_image_url_is_named(ferrum, images):
    made, served = images
    info = nodes.image_info(made, served)
    info['image_source'] = served.missing('gone.raw')
    failed = _failed_deploy(ferrum, served, info)
    assert info['image_source'] in failed['last_error']


def test_a_disk_too_small_says_so(ferrum, images):
    made, served = images
    failed = _failed_deploy(ferrum, served, nodes.image_info(
        made, served, 'disk.qcow2'), size_mib=16)
    assert 'deploy.write_image' in failed['last_error']
    assert 'the root device is smaller than the image' in failed['last_error']


def test_an_agent_killed_mid_write_fails_at_the_timeout(quick_ferrum,
                                                        images):
    ferrum = quick_ferrum
    made, served = images
    with nodes.enrolled(ferrum, served) as (box, node):
        uuid = node['uuid']
        _available_uncleaned(ferrum, uuid, nodes.image_info(made, served))
        with served.hold('disk.raw'):
            ferrum.provision(uuid, 'active')
            ferrum.wait_step(uuid, 'write_image')
            box.kill_agent()
        failed = ferrum.wait_state(uuid, 'deploy failed', 'active')
        assert failed['provision_state'] == 'deploy failed'
        assert ('awaited: the agent to finish deploy step deploy.write_image'
                in failed['last_error'])
        assert 'deploy_callback_timeout' in failed['last_error']


def test_an_agent_that_never_heartbeats_fails_at_the_timeout(quick_ferrum,
                                                             images):
    ferrum = quick_ferrum
    made, served = images
    with nodes.enrolled(ferrum, served) as (box, node):
        uuid = node['uuid']
        _available_uncleaned(ferrum, uuid, nodes.image_info(made, served))
        # The agent boots, but looks for an API where none answers.
        box.set_api_url('http://127.0.0.1:%d' % _closed_port())
        ferrum.provision(uuid, 'active')
        failed = ferrum.wait_state(uuid, 'deploy failed', 'active')
        assert failed['provision_state'] == 'deploy failed'
        assert ('awaited: the agent to boot and heartbeat with its token'
                in failed['last_error'])


def _closed_port() -> int:
    from tests.process import free_port
    return free_port()


def test_a_conductor_killed_mid_write_is_taken_over(tmp_path, images):
    """SIGKILL while the agent writes: the node waits in ``wait call-back``
    (no lock held), and the restarted conductor goes on with the same
    token and agent URL when the agent heartbeats."""
    made, served = images
    ferrum = Ferrum(tmp_path, nodes.ferrum_conf())
    ferrum.start()
    try:
        with nodes.enrolled(ferrum, served) as (box, node):
            uuid = node['uuid']
            _available_uncleaned(ferrum, uuid,
                                 nodes.image_info(made, served))
            with served.hold('disk.raw'):
                ferrum.provision(uuid, 'active')
                ferrum.wait_step(uuid, 'write_image')
                token = ferrum.token_of(uuid)
                ferrum.kill()
                ferrum.start()
                assert ferrum.token_of(uuid) == token
            active = ferrum.wait_state(uuid, 'active', 'deploy failed')
            assert active['provision_state'] == 'active', (
                active['last_error'])
            assert _disk_sha256(box, made.size) == made.content_sha256
    finally:
        ferrum.stop()


def test_metalsmith_deploys_and_undeploys_a_real_image(ferrum, images):
    try:
        import metalsmith
        from metalsmith import sources
    except ImportError:
        require_real('metalsmith')
    from tests.functional.clients.session import connect
    made, served = images
    with nodes.enrolled(ferrum, served) as (box, node):
        uuid = node['uuid']
        rc = 'metalsmith-%s' % uuid[:8]
        response = ferrum.api('PATCH', '/v1/nodes/%s' % uuid, json=[
            {'op': 'add', 'path': '/resource_class', 'value': rc},
            {'op': 'replace', 'path': '/automated_clean', 'value': False}])
        assert response.status_code == 200, response.text
        ferrum.provision(uuid, 'provide')
        ferrum.wait_state(uuid, 'available')
        conn = connect(ferrum.url)
        try:
            provisioner = metalsmith.Provisioner(cloud_region=conn.config)
            reserved = provisioner.reserve_node(rc, hostname='ms-%s'
                                                % uuid[:8])
            image = sources.HttpWholeDiskImage(
                served.url('disk.qcow2'),
                checksum=images_mod.sha256_file(made.qcow2))
            provisioner.provision_node(reserved, image, wait=240)
            assert ferrum.node(uuid)['provision_state'] == 'active'
            # The agent added metalsmith's config drive as a partition at
            # the disk's end: past the MBR, the disk is the image.
            with open(made.raw, 'rb') as source:
                source.seek(512)
                assert box.read(512, made.size - 512) == source.read()
            assert box.read(made.size, 4096) == bytes(4096)
            provisioner.unprovision_node(reserved, wait=240)
            assert ferrum.node(uuid)['provision_state'] == 'available'
        finally:
            conn.close()



def test_a_step_the_agent_fails_ends_cleaning_with_its_message(ferrum,
                                                               images):
    """Manual cleaning runs an in-band step; the agent fails it (this
    machine has no fio for burnin_disk): ``clean failed``, the agent's own
    words in last_error."""
    _made, served = images
    with nodes.enrolled(ferrum, served) as (box, node):
        uuid = node['uuid']
        ferrum.provision(uuid, 'clean', clean_steps=[
            {'interface': 'deploy', 'step': 'burnin_disk'}])
        failed = ferrum.wait_state(uuid, 'clean failed', 'manageable')
        assert failed['provision_state'] == 'clean failed'
        assert failed['maintenance']
        assert 'clean step deploy.burnin_disk failed on the agent' in (
            failed['last_error'])
        assert 'fio' in failed['last_error']
        assert not box.agent_running()
