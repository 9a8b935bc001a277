# SPDX-License-Identifier: Apache-2.0
"""The ``direct`` deploy through the API, before any agent runs: what it
refuses at ``validate`` and at the deploy request (400, naming the field,
the node untouched), and the agent's steps it accepts for manual cleaning.

The real agent's runs are in tests/functional/agent/.
"""

import pytest

from ferrum.common import states
from ferrum.objects import node as node_obj
from tests.functional.api.nodes import V
from tests.functional.api.nodes import create as _create
from tests.functional.api.nodes import fault as _fault
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state

RAMDISK = {'deploy_kernel': 'http://127.0.0.1/ipa.kernel',
           'deploy_ramdisk': 'http://127.0.0.1/ipa.initramfs'}
SHA256 = 'a' * 64
IMAGE = {'image_source': 'http://127.0.0.1:8080/disk.qcow2',
         'image_os_hash_algo': 'sha256', 'image_os_hash_value': SHA256,
         'image_disk_format': 'qcow2'}


@pytest.fixture
def conf(ferrum_conf):
    ferrum_conf.set_override('enabled_deploy_interfaces', ['fake', 'direct'])
    return ferrum_conf


def _node(client, conductor, db, state='available', driver_info=RAMDISK,
          instance_info=None):
    body = _create(client, deploy_interface='direct', automated_clean=False,
                   driver_info=dict(driver_info),
                   instance_info=dict(instance_info or {}))
    return to_state(conductor.manager, db,
                    node_obj.Node.get(db, body['uuid']), state)


def _deploy(client, node):
    return client.put('/v1/nodes/%s/states/provision' % node.uuid,
                      headers=V, json={'target': 'active'})


def test_direct_is_the_interface_asked_for(client, conductor, db):
    node = _node(client, conductor, db, 'manageable')
    shown = client.get('/v1/nodes/%s' % node.uuid, headers=V).get_json()
    assert shown['deploy_interface'] == 'direct'


@pytest.mark.parametrize('instance_info, field', [
    ({}, 'image_source'),
    ({'image_source': 'http://127.0.0.1/x.raw'}, 'image_checksum'),
    (dict(IMAGE, image_disk_format='vmdk'), 'image_disk_format'),
    (dict(IMAGE, image_source='ftp://host/x.raw'), 'image_source'),
    ({'image_source': 'http://127.0.0.1/x.raw', 'image_checksum': 'f' * 32},
     'image_checksum'),
    (dict(IMAGE, image_os_hash_algo='md5'), 'image_os_hash_algo'),
    (dict(IMAGE, image_os_hash_value='not hex'), 'image_os_hash_value'),
])
def test_a_bad_image_is_refused_before_the_node_is_touched(
        client, conductor, db, instance_info, field):
    node = _node(client, conductor, db, instance_info=instance_info)
    result = client.get('/v1/nodes/%s/validate' % node.uuid,
                        headers=V).get_json()
    assert result['deploy']['result'] is False
    assert field in result['deploy']['reason']
    response = _deploy(client, node)
    assert response.status_code == 400
    assert field in _fault(response)
    after = node_obj.Node.get(db, node.id)
    assert after.provision_state == states.AVAILABLE
    assert after.power_state == node.power_state
    assert 'fake_power_action' not in after.driver_internal_info


def test_a_missing_deploy_ramdisk_is_refused(client, conductor, db):
    node = _node(client, conductor, db, driver_info={}, instance_info=IMAGE)
    result = client.get('/v1/nodes/%s/validate' % node.uuid,
                        headers=V).get_json()
    assert result['deploy']['result'] is False
    assert 'deploy_kernel and deploy_ramdisk' in result['deploy']['reason']
    response = _deploy(client, node)
    assert response.status_code == 400
    assert 'deploy_ramdisk' in _fault(response)
    assert node_obj.Node.get(db, node.id).provision_state == states.AVAILABLE


def test_a_valid_node_validates(client, conductor, db):
    node = _node(client, conductor, db, instance_info=IMAGE)
    result = client.get('/v1/nodes/%s/validate' % node.uuid,
                        headers=V).get_json()
    assert result['deploy'] == {'result': True, 'reason': None}


def test_a_deploy_boots_the_agent_and_waits_for_it(client, conductor, db):
    node = _node(client, conductor, db, instance_info=IMAGE)
    assert _deploy(client, node).status_code == 202
    waiting = settled(db, node.id, states.DEPLOYWAIT)
    assert waiting.deploy_step['step'] == 'deploy'
    assert [s['step'] for s in waiting.driver_internal_info['deploy_steps']
            ] == ['deploy', 'write_image', 'prepare_instance_boot',
                  'tear_down_agent', 'switch_to_tenant_network',
                  'boot_instance']
    assert [s['priority'] for s in
            waiting.driver_internal_info['deploy_steps']] == [
                100, 80, 60, 40, 30, 20]
    # Off, then on: an agent from before cannot take the new session.
    assert waiting.driver_internal_info['fake_power_action'] == (
        states.POWER_ON)
    assert waiting.driver_internal_info['fake_boot_device'] == {
        'boot_device': 'pxe', 'persistent': False}
    history = client.get('/v1/nodes/%s/history' % node.uuid,
                         headers={'X-OpenStack-Ironic-API-Version': '1.78'}
                         ).get_json()['history']
    assert any(entry['event'] == 'Deploy step deploy.deploy started'
               for entry in history)
    url = '/v1/nodes/%s/states/provision' % node.uuid
    # Aborting a deploy wait is API 1.110's, as in Ironic.
    assert client.put(url, headers=V, json={
        'target': 'abort'}).status_code == 406
    assert client.put(url, headers={
        'X-OpenStack-Ironic-API-Version': '1.110'}, json={
        'target': 'abort'}).status_code == 202
    failed = settled(db, node.id, states.DEPLOYFAIL)
    assert failed.deploy_step is None


def test_manual_cleaning_takes_the_agent_steps(client, conductor, db):
    node = _node(client, conductor, db, 'manageable')
    response = client.put(
        '/v1/nodes/%s/states/provision' % node.uuid, headers=V,
        json={'target': 'clean', 'clean_steps': [
            {'interface': 'deploy', 'step': 'erase_devices_metadata'}]})
    assert response.status_code == 202, response.get_data(as_text=True)
    waiting = settled(db, node.id, states.CLEANWAIT)
    assert waiting.driver_internal_info['clean_steps'][0]['step'] == (
        'erase_devices_metadata')
    assert 'boot and heartbeat' in waiting.driver_internal_info['awaiting']
    response = client.put(
        '/v1/nodes/%s/states/provision' % node.uuid, headers=V,
        json={'target': 'clean', 'clean_steps': [
            {'interface': 'deploy', 'step': 'no_such_step'}]})
    assert response.status_code == 400


def test_automated_cleaning_lists_the_erase_steps(client, conductor, db,
                                                  conf):
    conf.set_override('erase_devices_priority', 0, group='deploy')
    body = _create(client, deploy_interface='direct',
                   driver_info=dict(RAMDISK))
    node = to_state(conductor.manager, db,
                    node_obj.Node.get(db, body['uuid']), 'manageable')
    conductor.manager.do_provisioning_action(node.uuid, 'provide')
    waiting = settled(db, node.id, states.CLEANWAIT)
    # [deploy] erase_devices_priority = 0 turns that step off.
    assert [s['step'] for s in waiting.driver_internal_info['clean_steps']
            ] == ['erase_devices_metadata']
