# SPDX-License-Identifier: Apache-2.0
"""Node states, power, maintenance, validation, boot device and traits."""

import json
import threading

import pytest

from ferrum.drivers.fake import interfaces as fake_interfaces
from ferrum.objects import node as node_obj
from tests.functional.conductor.flows import settled
from tests.polling import wait_for

V = {'X-OpenStack-Ironic-API-Version': '1.65'}


def _fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


@pytest.fixture
def node(client, db):
    uuid = client.post('/v1/nodes', headers=V, json={
        'driver': 'fake-hardware'}).get_json()['uuid']
    return node_obj.Node.get(db, uuid)


def _provision(client, node, target, **extra):
    return client.put('/v1/nodes/%s/states/provision' % node.uuid,
                      json=dict(extra, target=target), headers=V)


def test_provision_to_available_and_active_and_back(client, db, node):
    response = _provision(client, node, 'manage')
    assert response.status_code == 202
    assert response.headers['Location'].endswith(
        '/v1/nodes/%s/states' % node.uuid)
    settled(db, node.id, 'manageable')
    assert _provision(client, node, 'provide').status_code == 202
    settled(db, node.id, 'available')
    assert _provision(client, node, 'active',
                      configdrive={'meta_data': {}}).status_code == 202
    active = settled(db, node.id, 'active')
    assert active.instance_info['configdrive'] == {'meta_data': {}}
    shown = client.get('/v1/nodes/' + node.uuid, headers=V).get_json()
    assert shown['instance_info']['configdrive'] == '******'
    states = client.get('/v1/nodes/%s/states' % node.uuid,
                        headers=V).get_json()
    assert states['provision_state'] == 'active'
    assert set(states) >= {'power_state', 'target_provision_state',
                           'last_error', 'console_enabled'}
    assert _provision(client, node, 'deleted').status_code == 202
    settled(db, node.id, 'available')


@pytest.mark.parametrize('target, extra, code, words', [
    ('provide', {}, 400, '"enroll"'),
    ('fly', {}, 400, 'not a provision target'),
    ('rescue', {}, 400, 'rescue is not supported'),
    ('manage', {'clean_steps': []}, 400, 'clean_steps'),
    ('clean', {}, 400, 'clean_steps'),
    ('manage', {'colour': 1}, 400, 'colour'),
])
def test_bad_provision_requests(client, node, target, extra, code, words):
    response = _provision(client, node, target, **extra)
    assert response.status_code == code
    assert words in _fault(response)


def test_provision_target_needs_its_version(client, node):
    response = client.put('/v1/nodes/%s/states/provision' % node.uuid,
                          json={'target': 'abort'},
                          headers={'X-OpenStack-Ironic-API-Version': '1.12'})
    assert response.status_code == 406


def test_power_changes(client, db, node):
    url = '/v1/nodes/%s/states/power' % node.uuid
    response = client.put(url, json={'target': 'power off', 'timeout': 5},
                          headers=V)
    assert response.status_code == 202
    wait_for(lambda: node_obj.Node.get(db, node.id).power_state ==
             'power off', what='power off')
    assert client.put(url, json={'target': 'soft rebooting'},
                      headers=V).status_code == 202
    wait_for(lambda: node_obj.Node.get(db, node.id).power_state ==
             'power on', what='power on')
    # A soft reboot reaches the driver as one (set_power_state), not as
    # the hard reboot() of "rebooting".
    assert node_obj.Node.get(db, node.id).driver_internal_info[
        'fake_power_action'] == 'soft rebooting'
    response = client.put(url, json={'target': 'soft power off'}, headers={
        'X-OpenStack-Ironic-API-Version': '1.26'})
    assert response.status_code == 406
    for bad in ({'target': 'explode'}, {'target': 'power on', 'timeout': 0},
                {}):
        response = client.put(url, json=bad, headers=V)
        assert response.status_code == 400, bad


def test_quick_changes_are_done_when_answered(client, conf, node):
    """The 202 waits for work that takes milliseconds: no poll needed."""
    conf.set_override('action_wait_timeout', 30, 'conductor')
    url = '/v1/nodes/' + node.uuid
    assert client.put(url + '/states/power', json={'target': 'power off'},
                      headers=V).status_code == 202
    shown = client.get(url, headers=V).get_json()
    assert (shown['power_state'], shown['target_power_state']) == (
        'power off', None)
    for target, state in (('manage', 'manageable'), ('provide', 'available')):
        assert _provision(client, node, target).status_code == 202
        shown = client.get(url, headers=V).get_json()
        assert (shown['provision_state'],
                shown['target_provision_state']) == (state, None)


def test_slow_changes_are_answered_after_the_wait(client, conf, db, node,
                                                   monkeypatch):
    """Work that outlasts action_wait_timeout goes on after the 202."""
    conf.set_override('action_wait_timeout', 0.05, 'conductor')
    release = threading.Event()

    def slow_power(self, task, power_state, timeout=None):
        assert release.wait(30)

    monkeypatch.setattr(fake_interfaces.FakePower, 'set_power_state',
                        slow_power)
    url = '/v1/nodes/' + node.uuid
    try:
        assert client.put(url + '/states/power', json={'target': 'power off'},
                          headers=V).status_code == 202
        shown = client.get(url, headers=V).get_json()
        assert shown['target_power_state'] == 'power off'
    finally:
        release.set()
    wait_for(lambda: node_obj.Node.get(db, node.id).target_power_state
             is None, what='the power change to finish')
    assert node_obj.Node.get(db, node.id).power_state == 'power off'


def test_maintenance_on_and_off(client, db, node):
    url = '/v1/nodes/%s/maintenance' % node.uuid
    assert client.put(url, json={'reason': 'disk swap'},
                      headers=V).status_code == 202
    shown = client.get('/v1/nodes/' + node.uuid, headers=V).get_json()
    assert shown['maintenance'] and shown['maintenance_reason'] == 'disk swap'
    assert client.delete(url, headers=V).status_code == 202
    assert not node_obj.Node.get(db, node.id).maintenance
    assert client.put(url, headers=V).status_code == 202
    assert client.put(url, json={'reason': 5}, headers=V).status_code == 400


def test_validate_and_boot_device(client, node):
    result = client.get('/v1/nodes/%s/validate' % node.uuid,
                        headers=V).get_json()
    assert result['power'] == {'result': True, 'reason': None}
    url = '/v1/nodes/%s/management/boot_device' % node.uuid
    assert client.put(url, json={'boot_device': 'pxe', 'persistent': True},
                      headers=V).status_code == 204
    assert client.get(url, headers=V).get_json() == {
        'boot_device': 'pxe', 'persistent': True}
    supported = client.get(url + '/supported', headers=V).get_json()
    assert 'pxe' in supported['supported_boot_devices']
    response = client.put(url, json={'boot_device': 'floppy'}, headers=V)
    assert response.status_code == 400 and 'floppy' in _fault(response)


def test_inject_nmi_from_1_29(client, node):
    url = '/v1/nodes/%s/management/inject_nmi' % node.uuid
    old = client.put(url, json={}, headers={
        'X-OpenStack-Ironic-API-Version': '1.28'})
    assert old.status_code == 404 and '1.29' in _fault(old)
    response = client.put(url, headers=V)
    assert response.status_code == 204, response.get_data(as_text=True)
    assert response.get_data() == b''
    missing = client.put('/v1/nodes/nowhere/management/inject_nmi',
                         headers=V)
    assert missing.status_code == 404
    # An interface without NMIs: Ironic's 400.
    client.patch('/v1/nodes/%s' % node.uuid, headers=V, json=[
        {'op': 'replace', 'path': '/management_interface',
         'value': 'noop'}])
    response = client.put(url, headers=V)
    assert response.status_code == 400
    assert _fault(response) == ('Driver fake-hardware does not support '
                                'inject_nmi (disabled or not implemented).')


def test_traits(client, node):
    url = '/v1/nodes/%s/traits' % node.uuid
    assert client.put(url, json={'traits': ['CUSTOM_GPU', 'HW_CPU_X86_AVX2']},
                      headers=V).status_code == 204
    assert client.put(url + '/CUSTOM_FAST', headers=V).status_code == 204
    assert client.get(url, headers=V).get_json() == {
        'traits': ['CUSTOM_FAST', 'CUSTOM_GPU', 'HW_CPU_X86_AVX2']}
    assert client.get('/v1/nodes/' + node.uuid, headers=V).get_json()[
        'traits'] == ['CUSTOM_FAST', 'CUSTOM_GPU', 'HW_CPU_X86_AVX2']
    assert client.delete(url + '/CUSTOM_GPU', headers=V).status_code == 204
    response = client.delete(url + '/CUSTOM_GPU', headers=V)
    assert response.status_code == 404
    for bad in ('custom_lower', 'CUSTOM_', 'NOT_A_STANDARD_TRAIT'):
        response = client.put(url + '/' + bad, headers=V)
        assert response.status_code == 400 and 'CUSTOM_' in _fault(response)
    many = ['CUSTOM_T%d' % i for i in range(51)]
    assert client.put(url, json={'traits': many},
                      headers=V).status_code == 400
    assert client.delete(url, headers=V).status_code == 204
    assert client.get(url, headers=V).get_json() == {'traits': []}
    response = client.get(url, headers={
        'X-OpenStack-Ironic-API-Version': '1.36'})
    assert response.status_code == 406
